"""`tools/call` and `tools/list` answered past the SDK's transport (serving/mcp_direct.py),
in process through the ASGI app: on an established session of a JSON-response server the
SDK's transport is not entered, and every answer (status, headers, bytes) and log entry is
what the SDK itself answers and logs for the same requests; what the path must not take
(the session's first tools request, initialize, notifications, batches, refusals, another
protocol era, servers whose calls wait or stream) still reaches the SDK; the session's idle
countdown restarts after a direct answer."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from mockllm.loading.loader import load_text
from mockllm.serving.mcp_direct import Direct
from mockllm.serving.server import build_app
from tests.support.mcp_messages import FUZZ, JSON, messages

SCENARIO = """
name: direct
mcp_servers:
  orders:
    tools:
      - name: lookup_order
        input_schema: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
        results:
          - {when: {order_id: A1}, text: "Order A1: shipped"}
          - {text: first}
          - {text: second}
          - {structured: {n: 3}}
      - name: broken
        results: [{text: x, fault: {error: {code: -32000, message: down}}}]
      - name: big
        results: [{text: x, fault: {huge_bytes: 3000}}]
      - {name: hidden, listed: false, results: [{text: h}]}
  slow:
    tools:
      - name: wait
        results: [{text: late, fault: {delay_ms: 1}}]
  chatty:
    tools:
      - name: work
        results: [{text: done, fault: {progress: [1, 2]}}]
turns:
  - reply: {text: hi}
    repeat: true
"""
JSON_HEADERS = [(b"content-type", b"application/json"), (b"accept", b"application/json")]
VERSION = b"2025-11-25"
VERSION_HEADER = b"mcp-protocol-version"


def call(id_: Any, name: Any, arguments: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


PROGRESS = {"name": "lookup_order", "arguments": {"order_id": "A1"}, "_meta": {"progressToken": 7}}
# after the session's first tools/call (the SDK's), these are answered past the transport
SEQUENCE: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 10, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": {"cursor": "x"}},
    call(12, "lookup_order", {"order_id": "A1"}),
    call("thirteen", "lookup_order", {"order_id": "B"}),
    call(14, "lookup_order", {"order_id": "B"}),
    call(15, "lookup_order", {"order_id": "B"}),
    call(16, "lookup_order", {}),  # breaks the input schema: an error result
    call(17, "lookup_order", {"order_id": 5}),
    call(18, "nope"),  # unknown tool, refused: a JSON-RPC error
    call(19, "hidden"),  # not listed: unknown too
    call(20, "broken"),  # a scripted JSON-RPC error
    call(21, "big"),
    call(22, 5),  # params the SDK's model refuses: -32602
    {"jsonrpc": "2.0", "id": 23, "method": "tools/call"},  # no params at all
    call(24, "lookup_order", {"order_id": "A1", "_meta": {"x": 1}}),
    call(25, "lookup_order", {"order_id": "A1"}) | {"params": PROGRESS},
]
# initialize again, at another version: the SDK answers it and the next tools request
# (which says the session's version now); then past it again
AGAIN = {"jsonrpc": "2.0", "id": 30, "method": "initialize",
         "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
SEQUENCE += [AGAIN, call(31, "lookup_order", {"order_id": "B"}), call(32, "lookup_order", {})]
SDK_AGAIN = 2  # of SEQUENCE, reaching the SDK's transport even past it: AGAIN and #31


class Http:
    """Raw ASGI requests to one app, as uvicorn would make them."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def post(
        self, path: str, body: bytes, headers: list[tuple[bytes, bytes]], method: str = "POST"
    ) -> tuple[int, dict[bytes, bytes], bytes]:
        scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(),
                 "query_string": b"", "headers": headers, "http_version": "1.1",
                 "scheme": "http", "client": ("127.0.0.1", 1),
                 "server": ("127.0.0.1", 8000)}  # fmt: skip
        done = asyncio.Event()
        given = False
        start: dict[str, Any] = {}
        sent: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            else:
                sent.append(message.get("body", b""))
                if not message.get("more_body"):
                    done.set()

        await asyncio.wait_for(self.app(scope, receive, send), 10)
        return start["status"], dict(start["headers"]), b"".join(sent)

    async def open(
        self, path: str, accept: bytes = b"application/json", extra: Any = ()
    ) -> list[tuple[bytes, bytes]]:
        """A session after initialize + notifications/initialized: its request headers
        (`extra` ones too)."""
        headers = [(b"content-type", b"application/json"), (b"accept", accept), *extra]
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": VERSION.decode(), "capabilities": {},
                           "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
        status, answered, _ = await self.post(path, json.dumps(init).encode(), headers)
        assert status == 200, status
        session = [*headers, (b"mcp-session-id", answered[b"mcp-session-id"])]
        session.append((b"mcp-protocol-version", VERSION))
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.post(path, json.dumps(note).encode(), session))[0] == 202
        return session


@pytest.fixture
def sdk_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The bodies that reached the SDK's transport."""
    reached: list[str] = []
    handle = StreamableHTTPSessionManager.handle_request

    async def counting(self: Any, scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])
        await handle(self, scope, receive, send)

    monkeypatch.setattr(StreamableHTTPSessionManager, "handle_request", counting)
    yield reached


def _replay(direct: bool) -> tuple[list[Any], list[dict[str, Any]], int]:
    """SEQUENCE on a fresh app and session: the answers (session id blanked), the log's
    entries of the sequence, how many of its requests reached the SDK's transport."""

    async def go() -> tuple[list[Any], list[dict[str, Any]], int]:
        app = build_app([load_text(SCENARIO)])
        http = Http(app)
        path = "/s/direct/one/mcp/orders"
        session = await http.open(path)
        sid = dict(session)[b"mcp-session-id"]
        first = call(1, "lookup_order", {"order_id": "A1"})
        assert (await http.post(path, json.dumps(first).encode(), session))[0] == 200
        before = len(reached)
        answers = []
        for message in SEQUENCE:
            status, headers, body = await http.post(path, json.dumps(message).encode(), session)
            headers[b"mcp-session-id"] = b"SID" if headers[b"mcp-session-id"] == sid else b"?"
            answers.append((status, headers, body))
        entries = [e.to_json() for e in app.journal.entries()][-len(SEQUENCE) :]
        for e in entries:
            for key in ("time", "seq", "duration_ms", "epoch", "headers"):
                e.pop(key, None)
        return answers, entries, len(reached) - before

    reached: list[str] = []
    handle = StreamableHTTPSessionManager.handle_request

    async def counting(self: Any, scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])
        await handle(self, scope, receive, send)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StreamableHTTPSessionManager, "handle_request", counting)
        if not direct:
            patch.setattr(Direct, "request", lambda *args: None)
        return asyncio.run(go())


def test_an_established_sessions_tools_requests_skip_the_transport_and_answer_the_same() -> None:
    sdk_answers, sdk_entries, sdk_reached = _replay(direct=False)
    answers, entries, reached = _replay(direct=True)
    assert sdk_reached == len(SEQUENCE)  # the other side: each one through the SDK
    assert reached == SDK_AGAIN
    for message, theirs, ours in zip(SEQUENCE, sdk_answers, answers, strict=True):
        assert ours == theirs, message
    assert entries == sdk_entries
    bodies = [json.loads(body) for _, _, body in answers]
    assert [t["name"] for t in bodies[0]["result"]["tools"]] == ["lookup_order", "broken", "big"]
    assert bodies[2]["result"]["content"][0]["text"] == "Order A1: shipped"
    assert bodies[3]["id"] == "thirteen"
    # the session's counts went on where the SDK left them: its call and #12 served 2
    assert [b["result"].get("structuredContent") for b in bodies[3:6]] == [{"n": 3}] * 3
    assert bodies[6]["result"]["isError"] is True
    assert bodies[8]["error"]["code"] == bodies[9]["error"]["code"] == -32602
    assert bodies[10]["error"] == {"code": -32000, "message": "down"}
    assert len(bodies[11]["result"]["content"][0]["text"]) == 3000
    assert bodies[12]["error"] == {"code": -32602, "message": "Invalid request parameters",
                                   "data": ""}  # fmt: skip
    assert all(status == 200 for status, _, _ in answers)
    assert bodies[-3]["result"]["protocolVersion"] == "2025-03-26"


def test_what_is_not_plain_still_reaches_the_sdk(sdk_calls: list[str]) -> None:
    async def go() -> list[tuple[str, int, int]]:
        http = Http(build_app([load_text(SCENARIO)]))
        path = "/s/direct/one/mcp/orders"
        session = await http.open(path)
        ask = json.dumps(call(1, "lookup_order", {"order_id": "A1"})).encode()
        results = []

        async def sent(label: str, body: bytes, headers: Any, where: str = path) -> None:
            before = len(sdk_calls)
            status, _, _ = await http.post(where, body, headers)
            results.append((label, status, len(sdk_calls) - before))

        await sent("first tools/call of a session", ask, session)
        await sent("established", ask, session)
        batch = json.dumps([call(2, "lookup_order", {"order_id": "A1"})]).encode()
        await sent("batch", batch, session)
        await sent("ping", b'{"jsonrpc": "2.0", "id": 3, "method": "ping"}', session)
        await sent("no JSON", b"{", session)
        others = [(k, v) for k, v in session if k != b"content-type"]
        await sent("text/plain", ask, [*others, (b"content-type", b"text/plain")])
        charset = (b"content-type", b"application/json; charset=utf-8")
        await sent("a charset", ask, [*others, charset])
        no_json = [(k, v) for k, v in session if k != b"accept"] + [(b"accept", b"text/html")]
        await sent("accepts no JSON", ask, no_json)
        era = [(k, v) for k, v in session if k != b"mcp-protocol-version"]
        await sent("another era", ask, [*era, (b"mcp-protocol-version", b"2099-01-01")])
        unknown = [(k, v) for k, v in session if k != b"mcp-session-id"]
        await sent("unknown session", ask, [*unknown, (b"mcp-session-id", b"nope")])
        for server, tool in (("slow", "wait"), ("chatty", "work")):
            other = f"/s/direct/one/mcp/{server}"
            opened = await http.open(other, b"application/json, text/event-stream")
            await sent(f"{server} first", json.dumps(call(4, tool)).encode(), opened, other)
            await sent(f"{server} again", json.dumps(call(5, tool)).encode(), opened, other)
        return results

    results = asyncio.run(go())
    taken = {label: reached for label, _, reached in results}
    assert taken.pop("established") == 0
    assert set(taken.values()) == {1}, taken  # every other one went through the SDK
    assert all(status < 500 for _, status, _ in results), results


def test_a_direct_answer_restarts_the_sessions_idle_countdown(sdk_calls: list[str]) -> None:
    async def go() -> tuple[float, float]:
        app = build_app([load_text(SCENARIO)])
        http = Http(app)
        path = "/s/direct/one/mcp/orders"
        session = await http.open(path)
        ask = json.dumps(call(1, "lookup_order", {"order_id": "A1"})).encode()
        await http.post(path, ask, session)
        manager = next(m for _, m in app._mcp._served.values())
        idle = manager._server_instances[dict(session)[b"mcp-session-id"].decode()].idle_scope
        idle.deadline = asyncio.get_running_loop().time() + 5  # nearly run out
        before = len(sdk_calls)
        await http.post(path, ask, session)
        assert len(sdk_calls) == before  # answered past the transport
        return idle.deadline, asyncio.get_running_loop().time()

    deadline, now = asyncio.run(go())
    assert math.isfinite(deadline) and deadline > now + 500  # IDLE_TIMEOUT (600 s) from now


def test_any_message_on_an_established_session_is_answered_as_the_sdk_answers_it() -> None:
    """Generated bodies and headers (test_mcp_hostile.py's) to two apps, one answering past
    the transport where it can and one only through the SDK: the same status, headers and
    bytes each time, never a 5xx, and the same log."""
    loop = asyncio.new_event_loop()
    try:
        apps = [build_app([load_text(SCENARIO)]) for _ in range(2)]
        https = [Http(app) for app in apps]
        path = "/s/direct/one/mcp/orders"
        ask = json.dumps(call(1, "lookup_order", {"order_id": "A1"})).encode()
        sessions = []
        for http in https:
            sessions.append(loop.run_until_complete(http.open(path)))
            loop.run_until_complete(http.post(path, ask, sessions[-1]))
        sdk_only = next(s for s, _ in apps[1]._mcp._served.values())
        sdk_only.direct.request = lambda *args: None
        direct = next(s for s, _ in apps[0]._mcp._served.values()).direct
        taken: list[str] = []
        answer = direct.answer

        async def counted(found: Any, *args: Any) -> None:
            taken.append(found.message.method)
            await answer(found, *args)

        direct.answer = counted

        @FUZZ
        @example(
            body=json.dumps(call(2, "lookup_order", {"order_id": "B"})).encode(),
            accept="application/json",
            version="2025-11-25",
        )
        @example(body=b'{"jsonrpc": "2.0", "id": "l", "method": "tools/list"}',
                 accept="*/*", version="")  # fmt: skip
        @given(
            body=messages() | plain(),
            accept=st.sampled_from(["application/json", "application/json, text/event-stream",
                                    "*/*", "text/html", ""]),
            version=st.sampled_from(["2025-11-25", "2025-06-18", "2024-11-05", "2099-01-01", ""]),
        )  # fmt: skip
        def check(body: bytes, accept: str, version: str) -> None:
            answers = []
            for http, session in zip(https, sessions, strict=True):
                headers = [(k, v) for k, v in session if k not in (b"accept", VERSION_HEADER)]
                headers.append((b"accept", accept.encode()))
                if version:
                    headers.append((VERSION_HEADER, version.encode()))
                status, answered, out = loop.run_until_complete(http.post(path, body, headers))
                answered.pop(b"mcp-session-id", None)
                answers.append((status, answered, out))
            assert answers[0] == answers[1], body
            assert answers[0][0] < 500, answers[0]

        check()
        assert {"tools/call", "tools/list"} <= set(taken)  # the path was taken, and agreed
        logs = [[_comparable(e.to_json()) for e in app.journal.entries()] for app in apps]
        assert logs[0] == logs[1]
        assert all(e["server_error"] is None for e in logs[0])
    finally:
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()


@st.composite
def plain(draw: Any) -> bytes:
    """A well-formed tools request, with any arguments: what the direct path takes."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(st.integers() | st.text(max_size=5))}
    message["method"] = draw(st.sampled_from(["tools/call", "tools/list"]))
    if message["method"] == "tools/call":
        name = draw(st.sampled_from(["lookup_order", "broken", "big", "hidden", "nope"]))
        message["params"] = {"name": name, "arguments": draw(JSON)}
    return json.dumps(message).encode()


def _comparable(entry: dict[str, Any]) -> dict[str, Any]:
    for key in ("time", "seq", "duration_ms", "epoch", "headers"):
        entry.pop(key, None)
    return entry


def test_the_accept_check_is_the_sdks_and_remembered_boundedly() -> None:
    direct = Direct(None, 600)  # (the check needs no server)
    kinds = [b"application/json", b"text/event-stream", b"*/*", b"application/*;q=0.5",
             b"text/html, APPLICATION/JSON", b""]  # fmt: skip
    assert [direct._accepts_json(k) for k in kinds] == [True, False, True, True, True, False]
    assert [direct._accepts_json(k) for k in kinds] == [True, False, True, True, True, False]
    values = [b"text/x%d" % i for i in range(100)] + [b"application/json, text/x-last"]
    assert not any(direct._accepts_json(v) for v in values[:-1])
    assert direct._accepts_json(values[-1])  # past the bound: checked, not remembered
    assert len(direct._accept) == 64
