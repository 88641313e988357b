"""Hostile JSON-RPC on the MCP route (docs/mcp.md, docs/security.md): generated bodies and
headers over real HTTP to a real `mockllm serve`; never a 5xx, every refusal a JSON-RPC
error, every entry logged and readable by a strict parser, and the server still serving
a real MCP client afterwards. The same messages as lines to a real `mockllm mcp` stdio
process: every line answered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pydantic_core
from hypothesis import given
from hypothesis import strategies as st
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.hostile.test_hostile_requests import strict
from tests.e2e.mcp.test_mcp import block, run
from tests.e2e.mcp.test_mcp_stdio import Lines
from tests.support import ServerProcess
from tests.support.hypothesis_profiles import examples
from tests.support.mcp_messages import FUZZ, messages


def test_hostile_json_rpc_never_breaks_the_route(server: ServerProcess, session: str) -> None:
    server.http.post(
        "/_mockllm/scenarios",
        content=block("yaml", "orders.yaml"),
        headers={"content-type": "application/yaml"},
    )
    url = f"{server.url}/s/orders-loop/{session}/mcp/orders"
    statuses: set[int] = set()
    with httpx.Client(timeout=10) as http:
        opened = http.post(
            url,
            headers={"accept": "application/json, text/event-stream"},
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "fuzz", "version": "0"},
                },
            },
        )
        sid = opened.headers["mcp-session-id"]

        @FUZZ
        @given(
            body=messages(),
            with_session=st.booleans(),
            accept=st.sampled_from(
                ["application/json, text/event-stream", "application/json", "*/*", ""]
            ),
            method=st.sampled_from(["POST", "POST", "POST", "GET", "DELETE", "PUT"]),
        )
        def check(body: bytes, with_session: bool, accept: str, method: str) -> None:
            headers = {"content-type": "application/json", "accept": accept}
            if with_session:
                headers["mcp-session-id"] = sid
            if method == "DELETE":
                headers.pop("mcp-session-id", None)  # keep the fuzzed session alive
            if method == "GET":
                headers["accept"] = "application/json"  # a GET stream would stay open
            r = http.request(method, url, content=body, headers=headers)
            statuses.add(r.status_code)
            assert r.status_code < 500, (body, r.status_code, r.text)
            if r.status_code >= 400 and r.headers.get("content-type", "").startswith(
                "application/json"
            ):
                error = r.json()
                assert error["jsonrpc"] == "2.0" and {"code", "message"} <= set(error["error"])

        check()
    assert any(s >= 400 for s in statuses)
    log = server.http.get("/_mockllm/requests", params={"session": session})
    entries = [strict(json.dumps(e)) for e in log.json()]
    assert entries and all(e["server_error"] is None for e in entries)
    assert {e["api"] for e in entries} == {"mcp"}

    async def still() -> Any:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as mcp:
            await mcp.initialize()
            return await mcp.call_tool("lookup_order", {"order_id": "A1"})

    assert run(still()).content[0].text == "Order A1: shipped on 2026-11-30"


def test_an_oversized_body_is_refused_with_413(server: ServerProcess, session: str) -> None:
    """The shared server runs with --max-body 1MB: the SDK's own limit is set from it."""
    server.http.post(
        "/_mockllm/scenarios",
        content=block("yaml", "orders.yaml"),
        headers={"content-type": "application/yaml"},
    )
    url = f"{server.url}/s/orders-loop/{session}/mcp/orders"
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"x" * 1_100_000 + b'"}}'
    r = httpx.post(
        url,
        content=big,
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        },
    )
    assert r.status_code == 413
    entry = server.requests(session=session)[-1]
    assert entry["response"]["status"] == 413 and len(entry["request"]) <= 1_048_576


def test_a_client_that_hangs_up_before_its_body_is_no_server_error(
    server: ServerProcess, session: str
) -> None:
    """Headers that promise a body, then the connection closed (as Claude Code 2.1 does
    with a `server/discover` probe): logged as the client hanging up, not as a 500 with a
    traceback."""
    import socket
    import time
    from urllib.parse import urlsplit

    server.http.post(
        "/_mockllm/scenarios",
        content=block("yaml", "orders.yaml"),
        headers={"content-type": "application/yaml"},
    )
    at = urlsplit(server.url)
    head = (
        f"POST /s/orders-loop/{session}/mcp/orders HTTP/1.1\r\nHost: {at.netloc}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        "Content-Length: 400\r\n\r\n"
    )
    with socket.create_connection((at.hostname, at.port)) as raw:
        raw.sendall(head.encode())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # until the entry is closed (an open one is listed)
        found = server.requests(session=session)
        if found and found[0]["duration_ms"] is not None:
            break
        time.sleep(0.05)
    (entry,) = found
    assert entry["server_error"] is None, entry["server_error"]
    assert entry["client_disconnected"] is True
    assert (entry["response"] or {}).get("status") is None  # no answer reached it


def test_hostile_stdio_lines_are_each_answered(tmp_path: Path) -> None:
    """The same hostile messages as lines to `mockllm mcp` (docs/mcp.md): a line that is no
    JSON is answered -32700 before the next request's answer, every line out is JSON-RPC,
    the process keeps serving, and its --log holds every line, each readable by a strict
    parser."""
    (tmp_path / "orders.yaml").write_text(block("yaml", "orders.yaml"))
    log = tmp_path / "mcp.jsonl"
    lines = Lines(tmp_path / "orders.yaml", "orders-loop", "--log", str(log))
    probes = iter(range(1_000_000))

    @FUZZ
    @given(body=messages())
    def check(body: bytes) -> None:
        probe = f"probe-{next(probes)}"
        lines.send(body.replace(b"\n", b" ").replace(b"\r", b" "))
        lines.send(json.dumps({"jsonrpc": "2.0", "id": probe, "method": "ping"}).encode())
        seen = lines.until(probe)  # no line can keep the next request waiting
        assert all(answer.get("jsonrpc") == "2.0" for answer in seen)
        if body.strip() and not _parses(body.replace(b"\n", b" ").replace(b"\r", b" ")):
            assert any((a.get("error") or {}).get("code") == -32700 for a in seen[:-1]), seen

    try:
        check()
        lines.send(
            b'{"jsonrpc":"2.0","id":"last","method":"tools/call",'
            b'"params":{"name":"lookup_order","arguments":{"order_id":"A1"}}}'
        )
        last = lines.until("last")[-1]
        assert last["result"]["content"][0]["text"] == "Order A1: shipped on 2026-11-30"
    finally:
        said = lines.close()
    assert "Traceback" not in said, said
    entries = [strict(line) for line in log.read_text().splitlines()]
    assert len(entries) > examples(50) and all(e["server_error"] is None for e in entries)


def _parses(line: bytes) -> bool:
    try:
        pydantic_core.from_json(line)
    except ValueError:
        return False
    return True
