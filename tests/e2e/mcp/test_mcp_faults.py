"""Tool-side faults (docs/mcp.md, "Faults on the tool side") as the official `mcp` SDK's
client sees them over streamable HTTP and stdio, each with what the log says."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.e2e.mcp.test_mcp import block, run
from tests.support import ServerProcess


@pytest.fixture(scope="module", autouse=True)
def faults(server: ServerProcess) -> None:
    answer = server.http.post(
        "/_mockllm/scenarios",
        content=block("yaml", "faults.yaml"),
        headers={"content-type": "application/yaml"},
    )
    assert answer.status_code in (200, 201), answer.text


@asynccontextmanager
async def http(server: ServerProcess, session: str, **options: Any) -> AsyncIterator[ClientSession]:
    url = f"{server.url}/s/orders-faults/{session}/mcp/orders"
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write, **options) as mcp,
    ):
        await mcp.initialize()
        yield mcp


def calls(server: ServerProcess, session: str) -> list[dict[str, Any]]:
    return [
        e["mcp"]
        for e in server.requests(session=session)
        if (e.get("mcp") or {}).get("method") == "tools/call"
    ]


def test_a_slow_tool_answers_late(server: ServerProcess, session: str) -> None:
    async def go() -> Any:
        async with http(server, session) as mcp:
            return await mcp.call_tool("slow_lookup", {})

    assert run(go()).content[0].text == "late but fine"
    assert calls(server, session)[0]["fault"] == "delay 200 ms"


def test_a_json_rpc_error_reaches_the_client_as_mcp_error(
    server: ServerProcess, session: str
) -> None:
    async def go() -> Any:
        async with http(server, session) as mcp:
            try:
                return await mcp.call_tool("broken_lookup", {})
            except MCPError as e:
                return e

    raised = run(go())
    assert isinstance(raised, MCPError)
    assert (raised.code, raised.message) == (-32000, "database is down")
    assert calls(server, session)[0]["error"] == {"code": -32000, "message": "database is down"}


def test_a_result_breaking_its_output_schema_is_sent_as_written(
    server: ServerProcess, session: str
) -> None:
    async def go() -> Any:
        async with http(server, session) as mcp:
            await mcp.list_tools()  # the client learns the output schema here
            try:
                return await mcp.call_tool("typed_lookup", {})
            except RuntimeError as e:
                return e

    refused = run(go())  # the SDK client checks structured content against the schema
    assert isinstance(refused, RuntimeError)
    assert str(refused).startswith(
        "Invalid structured content returned by tool typed_lookup: 'status' is a required property"
    )
    assert calls(server, session)[0]["result"]["structured"] == {"state": "shipped"}


def test_a_tool_that_never_answers_meets_the_clients_timeout(
    server: ServerProcess, session: str
) -> None:
    async def go() -> Any:
        async with http(server, session) as mcp:
            try:
                return await mcp.call_tool("stuck_lookup", {}, read_timeout_seconds=1.0)
            except MCPError as e:
                return e

    raised = run(go())
    assert isinstance(raised, MCPError)
    assert (raised.code, raised.message) == (-32001, "Request 'tools/call' timed out")
    stuck = calls(server, session)[0]
    assert stuck["tool"] == "stuck_lookup" and stuck["fault"] == "never answers"


def test_a_dropped_connection_fails_the_call(server: ServerProcess, session: str) -> None:
    async def go() -> Any:
        async with http(server, session) as mcp:
            try:
                return await mcp.call_tool("dropped_lookup", {}, read_timeout_seconds=10.0)
            except MCPError as e:
                return e

    raised = run(go())
    assert isinstance(raised, MCPError), raised
    assert (raised.code, raised.message) == (-32000, "SSE stream ended without a response")
    entry = next(
        e
        for e in server.requests(session=session)
        if (e.get("mcp") or {}).get("tool") == "dropped_lookup"
    )
    assert "drop fault: the response was aborted mid-call" in entry["response"]["notes"]
    assert server.http.get("/_mockllm/health").json()["status"] == "ok"  # still serving


def test_a_huge_result_is_bounded_in_the_log(server: ServerProcess, session: str) -> None:
    async def go() -> Any:
        async with http(server, session) as mcp:
            return await mcp.call_tool("huge_lookup", {})

    result = run(go())
    assert len(result.content[0].text) == 1_000_000 and result.content[0].text.startswith("big: x")
    logged = calls(server, session)[0]["result"]
    assert logged["text_chars"] == 1_000_000 and len(logged["text"]) == 64 * 1024


def test_progress_notifications_reach_the_callback(server: ServerProcess, session: str) -> None:
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async def go() -> Any:
        async with http(server, session) as mcp:
            return await mcp.call_tool("counted_lookup", {}, progress_callback=progress)

    assert run(go()).content[0].text == "counted"
    assert seen == [0.5, 1.0]


def test_list_changed_adds_the_hidden_tool(server: ServerProcess, session: str) -> None:
    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if "ToolListChanged" in type(getattr(message, "root", message)).__name__:
            changed.set()

    async def go() -> tuple[list[str], list[str], Any]:
        async with http(server, session, message_handler=on_message) as mcp:
            before = [t.name for t in (await mcp.list_tools()).tools]
            await mcp.call_tool("unlock", {})
            await asyncio.wait_for(changed.wait(), 10)
            after = [t.name for t in (await mcp.list_tools()).tools]
            return before, after, await mcp.call_tool("secret_lookup", {})

    before, after, secret = run(go())
    assert "secret_lookup" not in before and "secret_lookup" in after
    assert secret.content[0].text == "found after the list changed"


def test_an_undeclared_tool_by_configuration(server: ServerProcess, session: str) -> None:
    """faults.yaml says `unknown_tools: error_result`; orders.yaml keeps the default refusal."""

    async def go() -> Any:
        async with http(server, session) as mcp:
            return await mcp.call_tool("no_such_tool", {})

    result = run(go())
    assert result.is_error
    assert result.content[0].text.startswith("Unknown tool: no_such_tool")
    assert calls(server, session)[0]["problem"] == "unknown tool"


def test_stdio_faults_error_and_drop(server: ServerProcess, tmp_path: Path) -> None:
    (tmp_path / "faults.yaml").write_text(block("yaml", "faults.yaml"))
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "mockllm",
            "mcp",
            "orders-faults",
            "orders",
            "--scenarios",
            str(tmp_path / "faults.yaml"),
        ],
    )

    async def go() -> tuple[Any, BaseException | None]:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, read_timeout_seconds=5.0) as mcp,
        ):
            await mcp.initialize()
            try:
                await mcp.call_tool("broken_lookup", {})
            except MCPError as e:
                error: Any = e
            try:
                await mcp.call_tool("dropped_lookup", {})
            except BaseException as e:  # the process is gone: the SDK's kind of error
                return error, e
            return error, None

    try:
        error, dropped = run(go())
    except BaseException as e:  # the transport's task group may raise it on the way out
        error, dropped = None, e
    if error is not None:
        assert (error.code, error.message) == (-32000, "database is down")
    assert dropped is not None


def test_calls_stream_only_where_a_fault_sends_more_than_the_result(
    server: ServerProcess, session: str
) -> None:
    """A server whose calls only answer is answered one JSON body per message (half the
    work of an SSE stream); one whose calls send progress, tools/list_changed or drop
    mid-call (faults.yaml) is answered in SSE, as those need. The SDK's client reads both
    (every test of this file and of test_mcp.py)."""
    handshake = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    posted = server.http.post(
        "/_mockllm/scenarios",
        content=block("yaml", "orders.yaml"),
        headers={"content-type": "application/yaml"},
    )
    assert posted.status_code in (200, 201), posted.text
    accept = {"accept": "application/json, text/event-stream"}
    kinds = {}
    for scenario in ("orders-loop", "orders-faults"):
        url = f"{server.url}/s/{scenario}/{session}/mcp/orders"
        answer = server.http.post(url, json=handshake, headers=accept)
        assert answer.status_code == 200, answer.text
        kinds[scenario] = answer.headers["content-type"].split(";")[0]
    assert kinds == {"orders-loop": "application/json", "orders-faults": "text/event-stream"}
