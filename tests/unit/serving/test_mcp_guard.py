"""`mockllm.serving.mcp_guard` and `upgrades`: what the MCP route reads of a body before the
SDK, how it reshapes the SDK's plain-text refusals, and which upgrades are handshakes
(tests/e2e/mcp/test_mcp_guard.py checks the same through a real server)."""

from __future__ import annotations

import base64
import json
from typing import Any

from mockllm.serving import mcp_guard
from mockllm.serving.upgrades import is_handshake


def drive(coro: Any) -> Any:
    """Run a coroutine that awaits nothing real (tests/unit may open no event loop)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the coroutine waited on something")


def test_request_ids_tell_types_apart_and_skip_notifications_and_garbage() -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": "1", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "result": {}},  # a response, not a request
    ]
    ids = mcp_guard.request_ids(json.dumps(batch).encode())
    assert len(ids) == 2 and ids[0] != ids[1]
    assert [mcp_guard.id_of(i) for i in ids] == [1, "1"]
    assert mcp_guard.request_ids(b"{") == []
    assert mcp_guard.request_ids(b"[" * 100_000) == []


def test_a_claimed_id_is_refused_until_released() -> None:
    sessions = mcp_guard.Sessions(2)
    ids = mcp_guard.request_ids(b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}')
    assert sessions.claim("srv", "a", ids) is None
    assert sessions.claim("srv", "a", ids) == ids[0]
    assert sessions.claim("srv", "b", ids) is None  # another session: its own ids
    sessions.release("srv", "a", ids)
    assert sessions.claim("srv", "a", ids) is None


def test_a_plain_text_refusal_is_reshaped_as_json_rpc() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def refuse() -> None:
        shaped = mcp_guard.shaped(send)
        start = {"type": "http.response.start", "status": 405, "headers": [(b"allow", b"POST")]}
        await shaped(start)
        await shaped({"type": "http.response.body", "body": b""})

    drive(refuse())
    start, body = sent
    assert start["status"] == 405 and (b"allow", b"POST") in start["headers"]
    error = json.loads(body["body"])
    assert error["jsonrpc"] == "2.0" and error["error"]["code"] == -32600
    assert error["error"]["message"].startswith("Method Not Allowed")


def test_a_body_is_read_whole_or_refused_past_its_limit() -> None:
    async def read(messages: list[dict[str, Any]], limit: int) -> bytes | str | None:
        queue = iter(messages)

        async def receive() -> dict[str, Any]:
            return next(queue)

        try:
            return await mcp_guard.read_whole(receive, limit)
        except mcp_guard.HungUp:
            return "hung up"

    part = {"type": "http.request", "body": b"abc", "more_body": True}
    last = {"type": "http.request", "body": b"def"}
    assert drive(read([part, last], 10)) == b"abcdef"
    assert drive(read([part, last], 5)) is None
    assert drive(read([part, {"type": "http.disconnect"}], 10)) == "hung up"


def test_only_a_real_handshake_is_upgraded() -> None:
    key = base64.b64encode(b"k" * 16)
    good = [(b"sec-websocket-key", key), (b"sec-websocket-version", b"13")]
    assert is_handshake("GET", good)
    assert not is_handshake("POST", good)
    assert not is_handshake("GET", good[:1])
    assert not is_handshake("GET", [(b"sec-websocket-key", b"short"), good[1]])
    assert not is_handshake("GET", [(b"sec-websocket-key", b"!!not base64!!"), good[1]])


def test_the_first_session_header_is_the_session_as_the_sdk_reads_it() -> None:
    from starlette.requests import Request

    session_of = mcp_guard.session_of
    headers = [(b"accept", b"*/*"), (b"mcp-session-id", b"one"), (b"mcp-session-id", b"two")]
    sdk = Request({"type": "http", "headers": headers}).headers.get("mcp-session-id")
    assert session_of(headers) == sdk == "one"
    assert session_of(tuple(headers[:1])) is None
