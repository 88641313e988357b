"""`mockllm mcp SCENARIO SERVER`: one scripted MCP server over stdio, for a harness that
spawns its MCP servers (docs/mcp.md).

The log: every message is an entry of the same shape as over HTTP (log/mcp.py), a line
refused before it reached the server included. With `--url` each is sent to that running
mockllm (`POST /_mockllm/mcp/entries`) twice: when it arrives (`"pending": true`, so it is
numbered in order with the model requests around it, as an HTTP request is), and before
its answer goes out on stdout, with what was answered. A call that hangs until the client
leaves, or whose `drop` fault ends the process, is so in that log from the moment it was
asked. With `--log FILE` each entry is appended to a JSONL file as `mockllm serve --log`
writes them, when it ends. Both may be given.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from typing import Any

import anyio
import mcp_types as types

from mockllm.core.scenario import Scenario
from mockllm.log.journal import Journal, entry_line
from mockllm.log.mcp import McpEntry, failed, unfinished
from mockllm.serving.mcp import McpLog, Scripted
from mockllm.serving.mcp_lines import serve_lines


class StdioLog(McpLog):
    finishes = True

    def __init__(
        self, journal: Journal, scenario: str, server: str, session: str, url: str | None
    ) -> None:
        self.journal, self.scenario, self.server = journal, scenario, server
        self.session, self.url = session, url
        self._remote: dict[int, int] = {}  # this log's seq → the server log's, while open

    def _open(self, body: bytes, info: dict[str, Any]) -> McpEntry:
        entry = self.journal.open_as(McpEntry, f"stdio:{self.server}", [], "POST")
        entry.session, entry.scenario, entry.body = self.session, self.scenario, body
        entry.mcp = {"server": self.server, "transport": "stdio", **info}
        return entry

    async def start(self, ctx: Any, info: dict[str, Any]) -> McpEntry | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": ctx.method}
        if ctx.request_id is not None:
            message["id"] = ctx.request_id
        if ctx.params is not None:
            message["params"] = ctx.params
        entry = self._open(json.dumps(message, ensure_ascii=False).encode(), info)
        if self.url is not None:
            shown = json.loads(entry_line(entry))
            shown["seq"], shown["pending"] = None, True  # the server numbers it
            seq = await anyio.to_thread.run_sync(self._post, shown)
            if seq is not None:
                self._remote[entry.seq] = seq
        return entry

    async def finish(self, entry: McpEntry) -> None:
        entry.status = 200  # stdio has no status: a JSON-RPC error is in `mcp.error`
        self.journal.close(entry)
        if self.url is not None:
            shown = json.loads(entry_line(entry))
            seq = self._remote.pop(entry.seq, None)
            await anyio.to_thread.run_sync(self._post, {**shown, "seq": seq})

    async def drop(self, ctx: Any, entry: McpEntry | None) -> None:
        """The connection is the process: log the call as ended, then exit mid-call."""
        if entry is not None:
            unfinished(entry.mcp, "drop fault: the process exited mid-call")
            await self.finish(entry)
        sys.stderr.write("mockllm mcp: drop fault: the connection ends mid-call\n")
        sys.stderr.flush()
        self.journal.shutdown()
        os._exit(3)

    async def refused(self, line: bytes, answer: types.JSONRPCError) -> None:
        """A line answered before it reached the server (mcp_lines.py), logged as one."""
        info: dict[str, Any] = {} if answer.id is None else {"id": answer.id}
        failed(info, answer.error.code, answer.error.message)
        await self.finish(self._open(line[: self.journal.body_cap], info))

    def _post(self, data: dict[str, Any]) -> int | None:
        """Into the running server's log before the answer leaves (the harness may ask the
        model as soon as it has it). A lost server is said on stderr, never on stdout."""
        request = urllib.request.Request(
            self.url.rstrip("/") + "/_mockllm/mcp/entries",  # type: ignore[union-attr]
            data=json.dumps(data).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        try:
            with _opener().open(request, timeout=10) as answer:
                seq = json.loads(answer.read()).get("seq")
        except (OSError, ValueError) as e:
            print(f"mockllm mcp: cannot log to {self.url}: {e}", file=sys.stderr, flush=True)
            return None
        return seq if isinstance(seq, int) else None


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))  # a local server


def run(
    scenario: Scenario,
    server: str,
    session: str,
    url: str | None,
    log: str | None,
    max_stall: float,
    max_body: int,
) -> int:
    journal = Journal(1000, log, 64 * 1024)
    scripted = Scripted(lambda: scenario, server, max_stall, 1, lambda ctx: session)
    stdio = StdioLog(journal, scenario.name, server, session, url)
    scripted.log = stdio
    sdk = scripted.sdk

    async def serve(read: Any, write: Any) -> None:
        await sdk.run(read, write, sdk.create_initialization_options())

    stdout, sys.stdout = sys.stdout.buffer, sys.stderr  # stdout is the wire: nothing else on it
    try:
        anyio.run(serve_lines, serve, stdio.refused, max_body, sys.stdin.buffer, stdout)
    finally:
        journal.shutdown()
    return 0
