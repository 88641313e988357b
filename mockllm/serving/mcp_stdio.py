"""`mockllm mcp SCENARIO SERVER`: one scripted MCP server over stdio, for a harness that
spawns its MCP servers (docs/mcp.md).

The log: every message is an entry of the same shape as over HTTP. With `--url` each is
sent to that running mockllm (`POST /_mockllm/mcp/entries`) before the answer goes out on
stdout, so it joins that server's one log, in order with the model requests; with
`--log FILE` it is appended to a JSONL file as `mockllm serve --log` writes them. Both
may be given.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from mockllm.core.scenario import Scenario
from mockllm.log.journal import Journal, entry_line
from mockllm.log.mcp import McpEntry
from mockllm.serving.mcp import McpLog, Scripted


class StdioLog(McpLog):
    def __init__(
        self, journal: Journal, scenario: str, server: str, session: str, url: str | None
    ) -> None:
        self.journal, self.scenario, self.server = journal, scenario, server
        self.session, self.url = session, url

    def start(self, ctx: Any) -> McpEntry | None:
        entry = self.journal.open_as(McpEntry, f"stdio:{self.server}", [], "POST")
        entry.session, entry.scenario = self.session, self.scenario
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": ctx.method}
        if ctx.request_id is not None:
            message["id"] = ctx.request_id
        if ctx.params is not None:
            message["params"] = ctx.params
        entry.body = json.dumps(message, ensure_ascii=False).encode()
        entry.mcp = {"server": self.server, "transport": "stdio"}
        return entry

    async def finish(self, entry: McpEntry) -> None:
        entry.status = 200  # stdio has no status: a JSON-RPC error is in `mcp.error`
        self.journal.close(entry)
        if self.url is not None:
            line = entry_line(entry)
            await anyio.to_thread.run_sync(self._post, line)

    def _post(self, line: str) -> None:
        """Into the running server's log before the answer leaves (the harness may ask the
        model as soon as it has it). A lost server is said on stderr, never on stdout."""
        request = urllib.request.Request(
            self.url.rstrip("/") + "/_mockllm/mcp/entries",  # type: ignore[union-attr]
            data=line.encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        try:
            with _opener().open(request, timeout=10) as answer:
                answer.read()
        except OSError as e:
            print(f"mockllm mcp: cannot log to {self.url}: {e}", file=sys.stderr, flush=True)


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))  # a local server


def run(
    scenario: Scenario,
    server: str,
    session: str,
    url: str | None,
    log: str | None,
    max_stall: float,
) -> int:
    journal = Journal(1000, log, 64 * 1024)
    scripted = Scripted(lambda: scenario, server, max_stall, 1, lambda ctx: session)
    scripted.log = StdioLog(journal, scenario.name, server, session, url)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await scripted.sdk.run(read, write, scripted.sdk.create_initialization_options())

    try:
        anyio.run(serve)
    finally:
        journal.shutdown()
    return 0
