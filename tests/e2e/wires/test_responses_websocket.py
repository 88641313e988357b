"""The Responses API over WebSocket (Codex's transport), through a real server and the
`websockets` client: warm-up, incremental frames, the same events as the SSE stream, the
faults, the log, and hostile frames (docs/agents.md, serving/websocket.py)."""

from __future__ import annotations

import json
import socket as sockets  # (`socket` is this module's fixture)
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.server import ServerProtocol
from websockets.sync.client import ClientConnection, connect

from tests.support import ServerProcess, running_server
from tests.support.hypothesis_profiles import examples

TOOLS: Any = [
    {
        "type": "function",
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
ASK: Any = [{"role": "user", "content": "weather in Paris?"}]


def ws_url(server: ServerProcess, scenario: str, session: str) -> str:
    return server.url.replace("http://", "ws://") + f"/s/{scenario}/{session}/v1/responses"


@pytest.fixture
def socket(server: ServerProcess, session: str) -> Iterator[Any]:
    # Each connection entered as a context manager: websockets 17 deprecates any other use.
    with ExitStack() as opened:

        def make(scenario: str) -> ClientConnection:
            ws = connect(ws_url(server, scenario, session), open_timeout=10, close_timeout=2)
            opened.enter_context(ws)
            return ws

        yield make


def create(ws: ClientConnection, **body: Any) -> list[dict[str, Any]]:
    """Send one response.create and read its events up to the last one (or an error)."""
    ws.send(json.dumps({"type": "response.create", **body}))
    events = []
    while True:
        event = json.loads(ws.recv(timeout=10))
        events.append(event)
        if event["type"] in ("response.completed", "response.incomplete", "error"):
            return events


def sse_data(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def test_warm_up_then_a_tool_loop_with_only_new_items(
    server: ServerProcess, session: str, socket: Any
) -> None:
    ws = socket("weather-single")
    warm = create(ws, model="gpt-5.5", input=ASK, tools=TOOLS, store=False, generate=False)
    assert [e["type"] for e in warm] == ["response.created", "response.completed"]
    assert warm[-1]["response"]["output"] == []
    assert server.requests(session=session) == []  # not a turn, not logged
    first = create(
        ws,
        model="gpt-5.5",
        input=[],
        tools=TOOLS,
        store=False,
        previous_response_id=warm[-1]["response"]["id"],
    )
    done = first[-1]["response"]
    (call,) = done["output"]
    assert call["type"] == "function_call" and call["name"] == "get_weather"
    second = create(
        ws,
        model="gpt-5.5",
        input=[{"type": "function_call_output", "call_id": call["call_id"], "output": "18 °C"}],
        tools=TOOLS,
        store=False,
        previous_response_id=done["id"],
    )
    assert second[-1]["type"] == "response.completed"
    text = second[-1]["response"]["output"][0]["content"][0]["text"]
    assert "18" in text
    entries = server.requests(session=session)
    assert [(e["turn"], e["response"]["status"]) for e in entries] == [(0, 200), (1, 200)]
    assert entries[0]["headers"]["x-mockllm-transport"] == "websocket"
    # store: false kept it for the connection only, never for a GET
    r = httpx.get(f"{server.url}/v1/responses/{done['id']}")
    assert r.status_code == 404


def test_the_events_are_the_sse_streams_own(
    server: ServerProcess, session: str, socket: Any
) -> None:
    body = {"model": "gpt-5.5", "input": ASK, "tools": TOOLS, "stream": True}
    events = create(socket("weather-single"), **body)
    r = httpx.post(f"{server.url}/s/weather-single/{session}-http/v1/responses", json=body)
    assert events == sse_data(r.text)


def test_a_429_is_the_error_event_codex_reads(
    server: ServerProcess, session: str, socket: Any
) -> None:
    ws = socket("rate-limited")
    (error,) = create(ws, model="gpt-5.5", input=ASK, tools=TOOLS)
    assert error["type"] == "error" and error["status_code"] == 429
    assert error["error"]["code"] == "rate_limit_exceeded"
    assert error["headers"]["retry-after-ms"] == "20"
    entry = server.requests(session=session)[-1]
    assert entry["response"]["status"] == 429 and entry["response"]["fault"]["kind"] == "http"


def test_an_in_band_stream_error_is_forwarded(
    server: ServerProcess, session: str, socket: Any
) -> None:
    events = create(socket("stream-error-event"), model="gpt-5.5", input=ASK, tools=TOOLS)
    assert events[0]["type"] == "response.created"
    assert events[-1]["type"] == "error" and "status_code" not in events[-1]


def test_a_cut_stream_drops_the_connection(
    server: ServerProcess, session: str, socket: Any
) -> None:
    ws = socket("stream-cut")
    body = {"type": "response.create", "model": "gpt-5.5", "input": ASK, "tools": TOOLS}
    ws.send(json.dumps(body))
    seen, got = [], ""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            event = json.loads(ws.recv(timeout=10))
            seen.append(event["type"])
            got += event.get("delta", "") if "arguments" in event["type"] else ""
    assert "response.completed" not in seen and "response.output_item.added" in seen
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011
    # The log says what came over the socket, from the same place as over HTTP.
    (entry,) = server.requests(session=session)
    delivered = entry["response"]["delivered"]
    assert delivered["cut"] == {"by": "truncate", "in": "call:0"}
    assert delivered["tool_calls"] == [{"name": "get_weather", "arguments": got}] and got
    # the retry, on a new connection, is served whole
    events = create(socket("stream-cut"), model="gpt-5.5", input=ASK, tools=TOOLS)
    assert events[-1]["type"] == "response.completed"


def test_bad_frames_get_error_events_and_the_connection_goes_on(
    server: ServerProcess, session: str, socket: Any
) -> None:
    ws = socket("hello")
    ws.send("{not json")
    error = json.loads(ws.recv(timeout=10))
    assert error["type"] == "error" and error["status_code"] == 400
    ws.send(json.dumps({"type": "session.update"}))
    error = json.loads(ws.recv(timeout=10))
    assert error["status_code"] == 400 and "response.create" in error["error"]["message"]
    ws.send(b"\x00binary")
    assert json.loads(ws.recv(timeout=10))["status_code"] == 400
    (refused,) = create(ws, input=ASK)  # no model
    assert refused["status_code"] == 400 and "model" in refused["error"]["message"]
    events = create(ws, model="gpt-5.5", input=ASK)
    assert events[-1]["type"] == "response.completed"
    statuses = [e["response"]["status"] for e in server.requests(session=session)]
    assert statuses == [400, 400, 200]  # the invalid JSON and the refusal are logged


def test_frames_sent_ahead_are_each_answered_in_order(
    server: ServerProcess, session: str, socket: Any
) -> None:
    # The server stops reading after a few queued frames (serving/upgrades.py, MAX_QUEUED)
    # and reads on as the app takes them: twenty at once are all answered, in order.
    ws = socket("hello")
    for n in range(20):
        ws.send(json.dumps({"type": "response.create", "model": "gpt-5.5", "input": f"hi {n}"}))
    completed: list[str] = []
    while len(completed) < 20:
        event = json.loads(ws.recv(timeout=10))
        assert event["type"] != "error", event
        if event["type"] == "response.completed":
            completed.append(event["response"]["id"])
    entries = server.requests(session=session)
    assert [e["request"]["input"] for e in entries] == [f"hi {n}" for n in range(20)]
    assert len(set(completed)) == 20


def test_other_routes_refuse_the_upgrade(server: ServerProcess, session: str) -> None:
    url = server.url.replace("http://", "ws://") + f"/s/hello/{session}/v1/chat/completions"
    with pytest.raises(Exception, match=r"403|rejected"), connect(url, open_timeout=5):
        pass


def test_without_websocket_an_upgrade_is_a_logged_426_the_report_passes(session: str) -> None:
    with running_server("--no-websocket") as server:
        headers = {
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        }
        r = httpx.get(f"{server.url}/s/hello/{session}/v1/responses", headers=headers)
        assert r.status_code == 426 and r.headers["upgrade"] == "websocket"
        assert r.json()["error"]["code"] == "upgrade_required"
        r = httpx.post(
            f"{server.url}/s/hello/{session}/v1/responses", json={"model": "m", "input": "hi"}
        )
        assert r.status_code == 200
        assert [e["response"]["status"] for e in server.requests(session=session)] == [426, 200]
        assert server.log_file is not None
        command = [sys.executable, "-m", "mockllm", "report", str(server.log_file)]
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout
        assert "upgrade_required" in done.stdout


FRAMES = st.one_of(
    st.text(max_size=200),
    st.builds(
        json.dumps,
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(st.text(max_size=8), inner, max_size=4)
            ),
            max_leaves=12,
        ),
    ),
    st.builds(
        lambda extra: json.dumps({"type": "response.create", **extra}),
        st.dictionaries(
            st.sampled_from(
                ["model", "input", "tools", "previous_response_id", "generate", "store", "stream"]
            ),
            st.none()
            | st.booleans()
            | st.text(max_size=10)
            | st.lists(st.text(max_size=5), max_size=3),
            max_size=5,
        ),
    ),
)


@pytest.fixture(scope="module")
def fuzz_server() -> Iterator[ServerProcess]:
    with running_server() as server:
        yield server


@settings(
    max_examples=examples(60),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(frame=FRAMES)
def test_hostile_frames_never_crash_and_get_protocol_shaped_answers(
    fuzz_server: ServerProcess, frame: str
) -> None:
    with connect(ws_url(fuzz_server, "hello", "fuzz"), open_timeout=10) as ws:
        ws.send(frame)
        while True:
            event = json.loads(ws.recv(timeout=10))
            assert isinstance(event, dict) and isinstance(event.get("type"), str)
            if event["type"] == "error":
                assert "status_code" in event and 400 <= event["status_code"] < 500, event
                break
            if event["type"] in ("response.completed", "response.incomplete"):
                break
    entries = httpx.get(f"{fuzz_server.url}/_mockllm/requests", params={"session": "fuzz"}).json()
    assert all(e["server_error"] is None for e in entries)
    assert all((e["response"] or {}).get("status", 200) < 500 for e in entries)


def test_frames_of_both_long_length_classes_reach_the_client_as_the_sse_streams_events(
    tmp_path: Any, session: str
) -> None:
    # mockllm frames a turn's events itself (serving/upgrades.py): payloads under 64 KiB
    # and over it carry 16- and 64-bit lengths (RFC 6455 §5.2; no Responses event is
    # under 126 bytes, the 7-bit case is in tests/unit/serving/test_websocket_batches.py),
    # and the client's strict reader must take each.
    long = " ".join(["lorem"] * 12_000)  # the completed event carries it whole: > 64 KiB
    (tmp_path / "long.yaml").write_text(f"name: long\nturns:\n  - reply: {{text: {long}}}\n")
    with running_server(scenarios=(tmp_path,)) as server:
        url = server.url.replace("http://", "ws://") + f"/s/long/{session}/v1/responses"
        with connect(url, open_timeout=10, max_size=2**22) as ws:
            events = create(ws, model="gpt-5.5", input=ASK)
        r = httpx.post(
            f"{server.url}/s/long/{session}-http/v1/responses",
            json={"model": "gpt-5.5", "input": ASK, "stream": True},
        )
    assert events == sse_data(r.text)
    sizes = [len(json.dumps(e, ensure_ascii=False)) for e in events]
    assert any(126 <= s < 65536 for s in sizes) and max(sizes) >= 65536
    assert events[-1]["response"]["output"][0]["content"][0]["text"] == long


def _answered_on_one_socket(server: ServerProcess, requests: list[bytes]) -> list[bytes]:
    """The requests sent one after another on one connection: the answers' heads, up to the
    connection's close (a request after a close is not answered)."""
    host, port = server.url.removeprefix("http://").split(":")
    heads: list[bytes] = []
    with sockets.create_connection((host, int(port)), timeout=10) as sock:
        for request in requests:
            try:
                sock.sendall(request)
            except OSError:
                break
            answer = b""
            while not answer.endswith(b"\r\n0\r\n\r\n"):  # the listing's chunked body, whole
                try:
                    got = sock.recv(65536)
                except ConnectionResetError:
                    got = b""
                if not got:
                    return heads
                answer += got
            heads.append(answer.split(b"\r\n\r\n")[0].lower())
    return heads


def test_a_refused_upgrade_closes_its_connection_a_plain_request_keeps_it(
    server: ServerProcess, session: str
) -> None:
    # httptools parses nothing more of a connection whose request asked to upgrade: served
    # as plain HTTP (no handshake), its answer must close the connection, or the next
    # request on it would wait for ever. A request that asks nothing keeps it alive.
    path = f"/s/hello/{session}/v1/models".encode()
    plain = b"GET " + path + b" HTTP/1.1\r\nhost: x\r\n\r\n"
    upgrade = b"GET " + path + b" HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\n"
    upgrade += b"connection: upgrade\r\n\r\n"  # no Sec-WebSocket-Key: no handshake
    heads = _answered_on_one_socket(server, [plain, plain, upgrade, plain])
    assert len(heads) == 3 and all(h.startswith(b"http/1.1 200") for h in heads), heads
    assert [b"connection: close" in h for h in heads] == [False, False, True]


def _handshake_answer(server: ServerProcess, request: bytes) -> bytes:
    """The answer to one raw upgrade request: the 101's head, or a refusal up to the close."""
    host, port = server.url.removeprefix("http://").split(":")
    answer = b""
    with sockets.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        while not (answer.startswith(b"HTTP/1.1 101") and b"\r\n\r\n" in answer):
            got = sock.recv(65536)
            if not got:
                break
            answer += got
    return answer


def _librarys_answer(request: bytes) -> bytes:
    """The status the installed library answers these bytes with, as it would reading them
    itself: the refusal its parse queues (websockets 17: 414 or 431 past a limit), else the
    400 uvicorn sends where it queues none, else its `accept`'s answer."""
    protocol = ServerProtocol()
    protocol.receive_data(request)
    queued = b"".join(protocol.data_to_send())
    if queued:
        return queued.split(b"\r\n")[0].removeprefix(b"HTTP/1.1 ")
    (read,) = protocol.events_received() or [None]
    if read is None:
        return b"400 Bad Request"
    answer = protocol.accept(read)
    return f"{answer.status_code} {answer.reason_phrase}".encode()


def test_the_librarys_handshake_checks_hold_on_the_request_uvicorn_parsed(
    server: ServerProcess, session: str
) -> None:
    # mockllm hands the library the upgrade request as uvicorn parsed it (not its bytes to
    # parse again): what the library refused or accepted, it still does, in its words. Its
    # releases differ at the edges (15 refuses any Content-Length, 17 answers a limit with
    # 414 or 431): each is held to the installed one's own answer.
    key = b"dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455 §1.3's own example

    def upgrade(*extra: bytes) -> bytes:
        head = b"GET /s/hello/" + session.encode() + b"/v1/responses HTTP/1.1\r\nhost: x\r\n"
        head += b"upgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-version: 13\r\n"
        return head + b"sec-websocket-key: " + key + b"\r\n" + b"".join(extra) + b"\r\n"

    cases = {
        "a body": upgrade(b"content-length: 5\r\n") + b"hello",
        "chunked": upgrade(b"transfer-encoding: chunked\r\n") + b"0\r\n\r\n",
        "too many headers": upgrade(*[b"x-h: v\r\n"] * 130),
        "a line too long": upgrade(b"x-long: " + b"a" * 9000 + b"\r\n"),
        "two keys": upgrade(b"sec-websocket-key: " + key + b"\r\n"),
        "a client's": upgrade(),
        "a zero length": upgrade(b"content-length: 0\r\n"),
        "a non-ASCII value": upgrade("x: café\r\n".encode()),
    }
    statuses = {}
    for case, request in cases.items():
        answer = _handshake_answer(server, request)
        statuses[case] = status = _librarys_answer(request)
        assert answer.startswith(b"HTTP/1.1 " + status + b"\r\n"), (case, status, answer)
        if status.startswith(b"101 "):
            # RFC 6455 §1.3 / §4.2.2: base64 of SHA-1 of the key and the GUID
            assert b"\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n" in answer
        else:
            assert b"\r\n\r\nFailed to open a WebSocket connection: " in answer, (case, answer)
    assert statuses["a client's"] == b"101 Switching Protocols"
    refused = ["a body", "chunked", "too many headers", "a line too long", "two keys"]
    assert not any(statuses[case].startswith(b"101") for case in refused), statuses
