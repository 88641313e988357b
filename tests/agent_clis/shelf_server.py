"""A real MCP server, as a team would write its own: the official `mcp` SDK's `MCPServer`
(FastMCP in mcp 1.x) over stdio, with one tool whose answer the model cannot know.

`shelf_code(title)` computes a code from the title (the first 8 hex digits of its
SHA-256) and appends the call to the file given as argv[1], so a test sees that the tool
really ran and that what the harness sent back to the model is what it returned.
Run by Claude Code and Codex in tests/agent_clis/test_agent_mcp.py (docs/agents.md).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

MARKER = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("shelf-calls.txt")

server = MCPServer("shelf", instructions="Finds the shelf a book is on.")


def code_of(title: str) -> str:
    return "SH-" + hashlib.sha256(title.encode()).hexdigest()[:8]


@server.tool()
def shelf_code(title: str) -> str:
    """The shelf code of a book, by its title."""
    code = code_of(title)
    with MARKER.open("a") as calls:
        calls.write(f"{title}\t{code}\n")
    return f"{title} is on shelf {code}"


if __name__ == "__main__":
    server.run()
