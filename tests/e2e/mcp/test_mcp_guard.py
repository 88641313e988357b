"""Issue 35's MCP and WebSocket-layer findings through a real `mockllm serve`: the SDK's
sessions bounded by --max-mcp-sessions and reaped, every refusal of the MCP route a
JSON-RPC error and logged, a duplicate in-flight id answered with an error instead of a
hang, no traceback for a client that hangs up mid-body or sends a frame that is not
UTF-8, and an `Upgrade: websocket` that is no handshake answered in the provider's shape
and logged."""

from __future__ import annotations

import base64
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.mcp.test_mcp import block, run
from tests.support import ServerProcess, running_server
from tests.support.hypothesis_profiles import examples

SLOW = """
name: slow-mcp
mcp_servers:
  tools:
    tools:
      - name: slow
        results: [{text: "late but fine", fault: {delay_ms: 1500}}]
turns:
  - reply: {text: "hi"}
"""
ACCEPT = "application/json, text/event-stream"
HEADERS = {"content-type": "application/json", "accept": ACCEPT}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "guard", "version": "0"},
    },
}


@pytest.fixture(scope="module")
def guarded() -> Iterator[ServerProcess]:
    with running_server("--max-mcp-sessions", "3", "--max-body", "1MB") as s:
        for text in (block("yaml", "orders.yaml"), SLOW.encode()):
            s.http.post(
                "/_mockllm/scenarios", content=text, headers={"content-type": "application/yaml"}
            )
        yield s


def opened(http: httpx.Client, url: str) -> str:
    r = http.post(url, json=INIT, headers=HEADERS)
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    headers = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return sid


def assert_json_rpc(r: httpx.Response) -> dict[str, Any]:
    assert r.headers["content-type"].startswith("application/json"), (r.status_code, r.text)
    error: dict[str, Any] = r.json()
    assert error["jsonrpc"] == "2.0" and {"code", "message"} <= set(error["error"])
    assert error["error"]["message"]
    return error


def test_sessions_past_the_bound_close_the_least_recently_used(
    guarded: ServerProcess, session: str
) -> None:
    url = f"{guarded.url}/s/orders-loop/{session}/mcp/orders"
    with httpx.Client(timeout=10) as http:
        sids = [opened(http, url) for _ in range(5)]
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}

        def pinged(sid: str) -> int:
            headers = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
            return http.post(url, json=ping, headers=headers).status_code

        assert pinged(sids[-1]) == 200  # the newest serve
        assert pinged(sids[0]) == 404  # the oldest was closed to make room: the SDK's 404


def test_a_new_session_when_every_one_is_busy_is_a_json_rpc_503(
    guarded: ServerProcess, session: str
) -> None:
    """Three sessions each with a slow call in flight, then a fourth `initialize`."""
    url = f"{guarded.url}/s/slow-mcp/{session}/mcp/tools"
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow"}}
    with httpx.Client(timeout=10) as http:
        sids = [opened(http, url) for _ in range(3)]
    threads = [
        threading.Thread(
            target=httpx.post,
            args=(url,),
            kwargs={
                "json": call,
                "headers": {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"},
                "timeout": 10,
            },
        )
        for sid in sids
    ]
    for t in threads:
        t.start()
    time.sleep(0.5)
    r = httpx.post(url, json=INIT, headers=HEADERS, timeout=10)
    for t in threads:
        t.join()
    assert r.status_code == 503
    assert "--max-mcp-sessions 3" in assert_json_rpc(r)["error"]["message"]
    refused = guarded.requests(session=session)[-1]
    assert refused["response"]["status"] == 503 and refused["mcp"]["error"]["code"] == -32600


def test_a_duplicate_in_flight_id_gets_an_error_not_a_hang(
    guarded: ServerProcess, session: str
) -> None:
    url = f"{guarded.url}/s/slow-mcp/{session}/mcp/tools"
    with httpx.Client(timeout=10) as http:
        sid = opened(http, url)
    headers = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "slow"}}
    answers: list[httpx.Response] = []

    def send() -> None:
        answers.append(httpx.post(url, json=call, headers=headers, timeout=5))

    first = threading.Thread(target=send)
    first.start()
    time.sleep(0.4)
    send()  # the same id while the first is in flight
    first.join()
    (refused,) = [a for a in answers if a.status_code == 409]
    assert assert_json_rpc(refused)["id"] == 7
    (served,) = [a for a in answers if a.status_code == 200]
    assert "late but fine" in served.text


def test_the_mcp_route_refuses_in_json_rpc_and_logs_it(
    guarded: ServerProcess, session: str
) -> None:
    url = f"{guarded.url}/s/orders-loop/{session}/mcp/orders"
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    cases = [
        ("POST", {"content-type": "text/plain", "accept": ACCEPT}, ping, 400),
        ("POST", HEADERS, '{"x": "' + "x" * 1_100_000 + '"}', 413),
        ("GET", {"accept": ACCEPT, "mcp-protocol-version": "1999-01-01"}, "", 405),
        ("PUT", {"mcp-protocol-version": "1999-01-01"}, "", 405),
    ]
    for method, headers, body, status in cases:
        r = httpx.request(method, url, headers=headers, content=body, timeout=10)
        assert r.status_code == status, (method, headers, r.text[:200])
        assert_json_rpc(r)
    logged = guarded.requests(session=session)
    assert [e["response"]["status"] for e in logged] == [400, 413, 405, 405]
    assert all(e["server_error"] is None for e in logged)


def test_a_client_hanging_up_mid_body_leaves_no_traceback(
    guarded: ServerProcess, session: str
) -> None:
    at = urlsplit(guarded.url)
    head = (
        f"POST /s/orders-loop/{session}/mcp/orders HTTP/1.1\r\nHost: {at.netloc}\r\n"
        f"Content-Type: application/json\r\nAccept: {ACCEPT}\r\nContent-Length: 400\r\n\r\n"
    )
    with socket.create_connection((at.hostname, at.port)) as raw:
        raw.sendall(head.encode() + b'{"jsonrpc": "2.0", "id": 1, "method": "initi')
        time.sleep(0.3)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = guarded.requests(session=session)
        if found and found[0]["duration_ms"] is not None:
            break
        time.sleep(0.05)
    (entry,) = found
    assert entry["client_disconnected"] is True and entry["server_error"] is None
    assert "Traceback" not in guarded.console.read_text()


def test_invalid_utf8_in_a_frame_is_closed_1007_without_a_traceback(
    guarded: ServerProcess, session: str
) -> None:
    at = urlsplit(guarded.url)
    key = base64.b64encode(os.urandom(16)).decode()
    with socket.create_connection((at.hostname, at.port)) as raw:
        raw.sendall(
            (
                f"GET /s/hello/{session}/v1/responses HTTP/1.1\r\nHost: {at.netloc}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        assert raw.recv(4096).startswith(b"HTTP/1.1 101")
        payload, mask = b'\xff\xfe{"type": "response.create"}', os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        raw.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)
        raw.settimeout(5)
        close = raw.recv(4096)
    assert close[0] == 0x88 and int.from_bytes(close[2:4], "big") == 1007
    time.sleep(0.2)
    printed = guarded.console.read_text()
    assert "Invalid UTF-8" in printed and "Traceback" not in printed


UPGRADE = {"upgrade": "websocket", "connection": "upgrade"}


@pytest.mark.parametrize(
    ("method", "headers"),
    [
        ("GET", UPGRADE),
        ("GET", {**UPGRADE, "sec-websocket-key": "x", "sec-websocket-version": "13"}),
        ("GET", {**UPGRADE, "sec-websocket-key": base64.b64encode(b"k" * 16).decode()}),
        ("POST", UPGRADE),
    ],
)
def test_an_upgrade_that_is_no_handshake_is_plain_http_and_logged(
    guarded: ServerProcess, session: str, method: str, headers: dict[str, str]
) -> None:
    """uvicorn's WebSocket library answered these in plain text, unlogged; a POST's body
    was lost after the upgrade header (httptools stops there), so even a good request was
    the provider's invalid-JSON 400."""
    body = {"model": "m", "input": "hi " + "x" * 300_000} if method == "POST" else None
    url = f"{guarded.url}/s/hello/{session}/v1/responses"
    r = httpx.request(method, url, headers=headers, json=body, timeout=10)
    assert r.headers["content-type"].startswith("application/json")
    if method == "GET":
        assert r.status_code == 400 and "no WebSocket handshake" in r.json()["error"]["message"]
    else:
        assert r.status_code == 200 and r.json()["output"][0]["content"][0]["text"], r.text
    (entry,) = guarded.requests(session=session)
    assert entry["response"]["status"] == r.status_code and entry["server_error"] is None


def test_a_real_mcp_client_still_works_under_the_guard(
    guarded: ServerProcess, session: str
) -> None:
    url = f"{guarded.url}/s/orders-loop/{session}/mcp/orders"

    async def call() -> Any:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as mcp:
            await mcp.initialize()
            return await mcp.call_tool("lookup_order", {"order_id": "A1"})

    assert run(call()).content[0].text == "Order A1: shipped on 2026-11-30"


def test_mcp_transport_refusals_are_json_rpc_whatever_the_headers(
    guarded: ServerProcess, session: str
) -> None:
    url = f"{guarded.url}/s/orders-loop/{session}/mcp/orders"
    with httpx.Client(timeout=10) as http:
        sid = opened(http, url)

        @settings(
            max_examples=examples(60),
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(
            method=st.sampled_from(["POST", "GET", "DELETE", "PUT", "PATCH", "OPTIONS"]),
            content_type=st.sampled_from(
                ["application/json", "text/plain", "", "application/json; charset=latin-1"]
            ),
            accept=st.sampled_from([ACCEPT, "application/json", "text/html", ""]),
            version=st.sampled_from(["2025-11-25", "2025-06-18", "1999-01-01", "", "x" * 50]),
            with_session=st.booleans(),
            body=st.sampled_from([b"", b"{", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}']),
        )
        def check(
            method: str,
            content_type: str,
            accept: str,
            version: str,
            with_session: bool,
            body: bytes,
        ) -> None:
            headers = {"content-type": content_type, "accept": accept}
            if version:
                headers["mcp-protocol-version"] = version
            if with_session:
                headers["mcp-session-id"] = sid
            if method == "GET":
                headers["accept"] = "application/json"  # a GET stream would stay open
            if method == "DELETE":
                headers.pop("mcp-session-id", None)  # keep the session alive
            r = http.request(method, url, headers=headers, content=body)
            assert r.status_code < 500, (method, headers, r.text[:200])
            if r.status_code >= 400:
                assert_json_rpc(r)

        check()
    entries = guarded.requests(session=session)
    assert entries and all(e["server_error"] is None for e in entries)
    assert "Traceback" not in guarded.console.read_text()
