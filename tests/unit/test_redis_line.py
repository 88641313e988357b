"""state/redis_line.py reads Redis's replies itself: each chunk fed to a hiredis Reader,
each whole reply handed to the oldest call waiting, an error reply raised as redis-py raises
it, a late reply dropped, a reply nobody asked for the end of the connection. It writes the
commands of one loop turn together, in order; commands never written are sent once more. In-process,
on a transport that records what is written (tests/fleet runs it against redis-server)."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import hiredis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.exceptions import ConnectionError, NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeout

from mockllm.state import redis_line
from mockllm.state.redis_line import Line, _Open


class Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closed = False
        self.protocol: Any = None

    def write(self, data: bytes) -> None:
        if self.closed:
            raise RuntimeError("closed")
        self.written.append(data)

    def set_protocol(self, protocol: Any) -> None:
        self.protocol = protocol

    def abort(self) -> None:
        self.closed = True

    close = abort


class Writer:
    def __init__(self) -> None:
        self.transport = Transport()


class Conn:
    """What Line uses of a redis-py connection: connect(), then its writer's transport."""

    def __init__(self, **kwargs: Any) -> None:
        self._writer: Any = Writer()
        self._reader: Any = None

    async def connect(self) -> None:
        return None


class Pool:
    connection_class = Conn
    connection_kwargs: ClassVar[dict[str, Any]] = {}


class Client:
    connection_pool = Pool  # what Line reads of a redis-py client


async def _opened() -> tuple[Line, _Open]:
    line = Line(Client())
    found = await line._connect()
    assert found.transport.protocol is found  # replies come to the protocol now
    return line, found


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_replies_go_to_their_calls_in_order_however_the_bytes_are_cut() -> None:
    async def main() -> None:
        line, opened = await _opened()
        calls = [asyncio.ensure_future(line.call("ECHO", str(i))) for i in range(3)]
        await asyncio.sleep(0)
        await asyncio.sleep(0)  # the turn's flush
        assert opened.transport.written == [  # one write for the turn's commands, in order
            b"".join(hiredis.pack_command(("ECHO", str(i))) for i in range(3))
        ]
        replies = b"$1\r\n0\r\n$1\r\n1\r\n$1\r\n2\r\n"
        for i in range(0, len(replies), 5):  # five bytes at a time
            opened.data_received(replies[i : i + 5])
        assert await asyncio.gather(*calls) == [b"0", b"1", b"2"]

    run(main())


def test_an_error_reply_is_redis_pys_exception_and_the_line_stays_in_step() -> None:
    async def main() -> None:
        line, opened = await _opened()
        script = type("S", (), {"sha": "0" * 40, "script": "return 1"})()
        first = asyncio.ensure_future(line.script(script, [], []))
        after = asyncio.ensure_future(line.call("GET", "k"))
        await asyncio.sleep(0)
        opened.data_received(b"-NOSCRIPT No matching script.\r\n$1\r\nv\r\n")
        await asyncio.sleep(0)
        assert await after == b"v"
        await _turn()
        assert opened.transport.written[-1].startswith(b"*3\r\n$4\r\nEVAL\r\n")  # by its text
        opened.data_received(b":1\r\n")
        assert await first == 1
        wrong = asyncio.ensure_future(line.call("INCR", "k"))
        await asyncio.sleep(0)
        opened.data_received(b"-WRONGTYPE Operation against a key\r\n")
        with pytest.raises(ResponseError, match="WRONGTYPE"):
            await wrong
        assert not isinstance(ResponseError("x"), NoScriptError)

    run(main())


def test_a_late_reply_is_dropped_and_the_next_call_gets_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(redis_line, "COMMAND_TIMEOUT", 0.01)

    async def main() -> None:
        line, opened = await _opened()
        with pytest.raises(RedisTimeout):
            await line.call("GET", "slow")
        nxt = asyncio.ensure_future(line.call("GET", "next"))
        await asyncio.sleep(0)
        opened.data_received(b"$4\r\nslow\r\n$4\r\nnext\r\n")
        assert await nxt == b"next"

    run(main())


def test_a_reply_nobody_asked_for_ends_the_connection_and_the_next_call_opens_one() -> None:
    async def main() -> None:
        line, opened = await _opened()
        waiting = asyncio.ensure_future(line.call("GET", "k"))
        await asyncio.sleep(0)
        opened.data_received(b"$1\r\na\r\n$1\r\nb\r\n")  # one reply too many
        assert await waiting == b"a"
        assert opened.transport.closed and line._open is None
        again = asyncio.ensure_future(line.call("GET", "k"))
        await asyncio.sleep(0)
        assert line._open is not None and line._open is not opened
        line._open.data_received(b"$1\r\nc\r\n")
        assert await again == b"c"

    run(main())


def test_a_lost_connection_fails_every_call_waiting_on_it() -> None:
    async def main() -> None:
        line, opened = await _opened()
        waiting = [asyncio.ensure_future(line.call("GET", str(i))) for i in range(3)]
        await _turn()  # written: they may have run, so they are not sent again
        opened.connection_lost(None)
        for call in waiting:
            with pytest.raises(ConnectionError, match="Redis closed the connection"):
                await call
        assert line._open is None

    run(main())


def test_a_script_is_sent_at_once_or_refused_when_no_connection_is_open() -> None:
    async def main() -> None:
        line = Line(Client())
        script = type("S", (), {"sha": "a" * 40, "script": "return 1"})()
        with pytest.raises(ConnectionError):
            line.send_script(script, [], ["x"])
        opened = await line._connect()
        reply = line.send_script(script, ["k"], ["x"])
        assert opened.transport.written == [
            hiredis.pack_command(("EVALSHA", "a" * 40, 1, "k", "x"))
        ]
        opened.data_received(b"*1\r\n:7\r\n")
        assert await reply == [7]

    run(main())


@settings(max_examples=50)
@given(
    st.lists(st.binary(max_size=40), min_size=1, max_size=8),
    st.lists(st.integers(1, 7), min_size=1, max_size=20),
)
def test_bulk_replies_come_back_whole_however_they_arrive(
    values: list[bytes], cuts: list[int]
) -> None:
    async def main() -> None:
        line, opened = await _opened()
        calls = [asyncio.ensure_future(line.call("GET", str(i))) for i in range(len(values))]
        await asyncio.sleep(0)
        data = b"".join(b"$%d\r\n%s\r\n" % (len(v), v) for v in values)
        at, i = 0, 0
        while at < len(data):
            step = cuts[i % len(cuts)]
            opened.data_received(data[at : at + step])
            at, i = at + step, i + 1
        assert await asyncio.gather(*calls) == values

    run(main())


async def _turn() -> None:
    """Let the calls started write, and the line's end-of-turn flush run."""
    for _ in range(6):  # (a call that connects first takes a few)
        await asyncio.sleep(0)


def test_many_concurrent_calls_leave_in_one_write_and_each_gets_its_own_reply() -> None:
    async def main() -> None:
        line, opened = await _opened()
        calls = [asyncio.ensure_future(line.call("ECHO", str(i))) for i in range(50)]
        await _turn()
        assert opened.transport.written == [
            b"".join(hiredis.pack_command(("ECHO", str(i))) for i in range(50))
        ]
        later = asyncio.ensure_future(line.call("ECHO", "later"))  # the next turn: its own
        await _turn()
        assert len(opened.transport.written) == 2
        opened.data_received(b"".join(b"$%d\r\n%d\r\n" % (len(str(i)), i) for i in range(50)))
        opened.data_received(b"$5\r\nlater\r\n")
        assert await asyncio.gather(*calls) == [str(i).encode() for i in range(50)]
        assert await later == b"later"

    run(main())


def test_calls_whose_write_failed_are_sent_once_more_on_a_new_connection() -> None:
    async def main() -> None:
        line, opened = await _opened()
        opened.transport.closed = True  # its next write raises
        calls = [asyncio.ensure_future(line.call("GET", str(i))) for i in range(3)]
        await _turn()
        again = line._open
        assert again is not None and again is not opened and line._open is again
        assert again.transport.written == [  # the three, in order, on the new connection
            b"".join(hiredis.pack_command(("GET", str(i))) for i in range(3))
        ]
        again.data_received(b":0\r\n:1\r\n:2\r\n")
        assert await asyncio.gather(*calls) == [0, 1, 2]

    run(main())


def test_a_write_that_fails_twice_fails_its_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Transport, data: bytes) -> None:
        raise OSError("broken pipe")

    monkeypatch.setattr(Transport, "write", refuse)  # on every connection

    async def main() -> None:
        line, _ = await _opened()
        calls = [asyncio.ensure_future(line.call("GET", str(i))) for i in range(3)]
        found = await asyncio.gather(*calls, return_exceptions=True)
        assert [type(error) for error in found] == [ConnectionError] * 3
        assert all("broken pipe" in str(error) for error in found)

    run(main())


def test_a_connection_lost_before_the_write_sends_what_it_held_again() -> None:
    async def main() -> None:
        line, opened = await _opened()
        written = asyncio.ensure_future(line.call("GET", "sent"))
        await _turn()
        held = asyncio.ensure_future(line.call("GET", "held"))
        await asyncio.sleep(0)  # the call is held; the flush has not run
        assert opened.held
        opened.connection_lost(None)
        with pytest.raises(ConnectionError):  # it may have run: not sent again
            await written
        await _turn()
        again = line._open
        assert again is not None and again is not opened
        assert again.transport.written == [hiredis.pack_command(("GET", "held"))]
        again.data_received(b"$1\r\nh\r\n")
        assert await held == b"h"

    run(main())


def test_a_script_is_written_at_once_after_the_commands_held_before_it() -> None:
    async def main() -> None:
        line, opened = await _opened()
        script = type("S", (), {"sha": "b" * 40, "script": "return 1"})()
        held = asyncio.ensure_future(line.call("GET", "k"))
        await asyncio.sleep(0)
        reply = line.send_script(script, [], ["x"])
        assert opened.transport.written == [  # before the loop turn ends, in order
            hiredis.pack_command(("GET", "k")) + hiredis.pack_command(("EVALSHA", "b" * 40, 0, "x"))
        ]
        opened.data_received(b"$1\r\nv\r\n:1\r\n")
        assert await held == b"v"
        assert await reply == 1
        opened.transport.closed = True
        with pytest.raises(ConnectionError):  # its write failed: refused at once
            line.send_script(script, [], ["y"])

    run(main())


def test_a_script_whose_write_failed_is_sent_again_then_by_its_text() -> None:
    """`script` takes `call`'s steps itself: a write that failed is sent once more on a new
    connection, by digest, and a NOSCRIPT there falls back to the script's text."""

    async def main() -> None:
        line, opened = await _opened()
        opened.transport.closed = True  # its next write raises
        script = type("S", (), {"sha": "c" * 40, "script": "return 1"})()
        reply = asyncio.ensure_future(line.script(script, ["k"], ["a"]))
        await _turn()
        again = line._open
        assert again is not None and again is not opened
        assert again.transport.written == [hiredis.pack_command(("EVALSHA", "c" * 40, 1, "k", "a"))]
        again.data_received(b"-NOSCRIPT No matching script.\r\n")
        await _turn()
        assert again.transport.written[-1] == hiredis.pack_command(
            ("EVAL", "return 1", 1, "k", "a")
        )
        again.data_received(b":1\r\n")
        assert await reply == 1

    run(main())


def test_a_script_whose_write_fails_twice_is_a_connection_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        Transport, "write", lambda self, data: (_ for _ in ()).throw(OSError("gone"))
    )

    async def main() -> None:
        line, _ = await _opened()
        script = type("S", (), {"sha": "d" * 40, "script": "return 1"})()
        with pytest.raises(ConnectionError, match="gone"):
            await line.script(script, [], [])

    run(main())
