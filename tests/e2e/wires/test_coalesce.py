"""One write per response (mockllm/serving/coalesce.py), seen from a real socket: a whole
answer arrives in the client's first read, while a stream's paced events still arrive one
by one, as they are sent."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import struct
import sys
import time
from collections.abc import Iterator

import pytest

import mockllm
from mockllm import RunningServer, load_mapping
from mockllm.serving.coalesce import CoalescedWrites

CALL = {"name": "get_weather", "arguments": {"city": "Paris"}}
SCENARIOS = [
    load_mapping(
        {"name": "one-call", "turns": [{"reply": {"tool_calls": [CALL]}, "repeat": True}]}
    ),
    load_mapping(
        {
            "name": "paced",
            "turns": [
                {
                    "reply": {"text": "one two three four"},
                    "fault": {"delay": {"between_chunks_ms": 60}},
                }
            ],
        }
    ),
]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with mockllm.serve(SCENARIOS) as running:
        yield running


def _request(path: str, body: dict[str, object]) -> bytes:
    data = json.dumps(body).encode()
    head = f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
    return f"{head}content-length: {len(data)}\r\n\r\n".encode() + data


def _connect(server: RunningServer) -> socket.socket:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=5)


def _data_segments_in(conn: socket.socket) -> int:
    """Linux's count of data segments this socket received (struct tcp_info)."""
    info = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    return int(struct.unpack_from("I", info, _DATA_SEGS_IN)[0])


_DATA_SEGS_IN = 152  # offset of tcpi_data_segs_in in struct tcp_info (Linux 4.6+)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="TCP_INFO is Linux's")
def test_a_whole_answer_arrives_in_one_segment(server: RunningServer) -> None:
    ask = {"model": "m", "messages": [{"role": "user", "content": "weather?"}]}
    with _connect(server) as conn:
        for n in range(20):  # keep-alive: every response on the connection, not just the first
            before = _data_segments_in(conn)
            conn.sendall(_request("/s/one-call/v1/chat/completions", {**ask, "user": str(n)}))
            answer = b""
            while not answer.endswith(b"}") or b"\r\n\r\n" not in answer:
                select.select([conn], [], [], 5)
                answer += conn.recv(1 << 16)
            assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
            assert b'"name":"get_weather"' in answer
            # Head and body written apart arrive as two segments (TCP_NODELAY sends each).
            assert _data_segments_in(conn) - before == 1, n


def test_a_client_that_half_closes_after_its_request_still_gets_the_answer(
    server: RunningServer,
) -> None:
    """`nc -N` and raw-socket harnesses send the request, then shut their sending side:
    uvicorn closes the connection on that EOF, so what the turn holds must leave first."""
    ask = {"model": "m", "messages": [{"role": "user", "content": "weather?"}]}
    answered = 0
    for delay in (0, 0.0001, 0.0003, 0.001) * 10:
        with _connect(server) as conn:
            conn.sendall(_request("/s/one-call/v1/chat/completions", ask))
            time.sleep(delay)  # the EOF lands before, with or after the app's turn
            conn.shutdown(socket.SHUT_WR)
            answer = b""
            while data := conn.recv(1 << 16):
                answer += data
        answered += b'"name":"get_weather"' in answer
    assert answered == 40  # held writes dropped at the EOF answered 1 in 60 at 0 µs


def test_paced_stream_events_still_leave_one_by_one(server: RunningServer) -> None:
    ask = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "count"}]}
    with _connect(server) as conn:
        conn.sendall(_request("/s/paced/v1/chat/completions", ask))
        arrivals: list[tuple[float, bytes]] = []
        received = b""
        while not received.endswith(b"0\r\n\r\n"):
            select.select([conn], [], [], 5)
            data = conn.recv(1 << 16)
            assert data, "connection closed mid-stream"
            arrivals.append((time.monotonic(), data))
            received += data
    reads = [data for _, data in arrivals if b"data: " in data]
    span = arrivals[-1][0] - arrivals[0][0]
    # Held back, the events would come in one read at the end; paced, they come in several
    # reads over at least four pauses of 60 ms (a loaded machine may merge two reads).
    assert len(reads) >= 3 and span >= 0.15, [(round(t, 3), len(d)) for t, d in arrivals]


# --- CoalescedWrites on its own, over a recording transport --------------------------------


class Recording(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, bytes]] = []
        self.closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.calls.append(("write", bytes(data)))

    def close(self) -> None:
        self.calls.append(("close", b""))
        self.closing = True

    def abort(self) -> None:
        self.calls.append(("abort", b""))
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 7


def test_writes_of_one_turn_leave_as_one_in_order() -> None:
    async def main() -> list[tuple[str, bytes]]:
        real = Recording()
        writes = CoalescedWrites(real, asyncio.get_running_loop())
        writes.write(b"HTTP/1.1 200 OK\r\n\r\n")
        writes.write(bytearray(b"body"))
        assert real.calls == []  # held until the turn ends
        await asyncio.sleep(0)
        writes.write(b"next turn")
        await asyncio.sleep(0)
        return real.calls

    assert asyncio.run(main()) == [
        ("write", b"HTTP/1.1 200 OK\r\n\r\nbody"),
        ("write", b"next turn"),
    ]


@pytest.mark.parametrize("end", ["close", "abort"])
def test_close_and_abort_hand_over_what_is_held_first(end: str) -> None:
    async def main() -> list[tuple[str, bytes]]:
        real = Recording()
        writes = CoalescedWrites(real, asyncio.get_running_loop())
        writes.write(b"partial")
        getattr(writes, end)()
        await asyncio.sleep(0)  # the flush scheduled by write finds nothing left
        return real.calls

    assert asyncio.run(main()) == [("write", b"partial"), (end, b"")]


def test_nothing_is_written_to_a_closing_transport_and_the_rest_is_the_real_ones() -> None:
    async def main() -> list[tuple[str, bytes]]:
        real = Recording()
        writes = CoalescedWrites(real, asyncio.get_running_loop())
        writes.write(b"late")
        real.closing = True  # the client went away during the turn
        await asyncio.sleep(0)
        assert writes.get_write_buffer_size() == 7  # forwarded
        return real.calls

    assert asyncio.run(main()) == []
