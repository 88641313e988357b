"""Judging the request log: the protocol verdict of a session, the checks both clients'
assertions raise, what the agent did with each call, the allowances that waive a check,
the transcript a failing test shows and `mockllm report`. It reads entries in their JSON
form and sits above mockllm.log, which never imports it (pyproject.toml's contracts)."""

DEFAULT_MAX_CALLS = 20
"""Model calls per session beyond which the verdict assumes a tool loop. Here rather than in
judge/verdict.py, so that `mockllm serve` (whose parser shows `report --max-calls`'s
default) does not import the verdict at every start."""
