"""The Claude Agent SDK's `query`, driving Claude Code (the CLI of tests/agent_clis, pinned
there), run by tests/frameworks/test_claude_agent_sdk.py inside a network namespace with
only loopback (tests/agent_clis/cli_run.py): `agent.py CLAUDE PROMPT` prints the result
message as JSON. The endpoint comes from the environment (`ANTHROPIC_BASE_URL`), as its
users set it; telemetry and update checks are off there too."""

from __future__ import annotations

import asyncio
import json
import sys

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query


async def main(cli: str, prompt: str) -> None:
    options = ClaudeAgentOptions(cli_path=cli, allowed_tools=["Bash"], max_turns=4)
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, ResultMessage):
            outcome = {"result": message.result, "is_error": message.is_error}
            print(json.dumps({**outcome, "subtype": message.subtype}, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
