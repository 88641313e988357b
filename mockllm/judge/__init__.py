"""Judging the request log: the protocol verdict of a session, the checks both clients'
assertions raise, what the agent did with each call, the allowances that waive a check,
the transcript a failing test shows and `mockllm report`. It reads entries in their JSON
form and sits above mockllm.log, which never imports it (pyproject.toml's contracts)."""
