"""One pipelined connection for the scripts every request runs (counting its attempt,
recording its cut, storing its log entry): each call writes its command and waits for its
reply, and the replies are handed out in the order the commands went, as RESP sends them
back. Concurrent requests share the connection, so their replies arrive together; a call
costs a write and a future, not the client's per-command pool, retry and instrumentation
layers (about 3,000 bytecodes per call on redis-py 8).

The connection is redis-py's own (`connection_class` of the client's pool, with the URL's
host, TLS, credentials and database, and its handshake). Once it is open, its transport is
read by this module's protocol: each chunk Redis sends is fed to a `hiredis.Reader` and the
replies it holds are handed out at once, with no reader task and no stream between (about
530 bytecodes for two replies through redis-py's reader). So a command can also be sent
without waiting (`send_script`): its reply is checked when it comes.

No read timeout of redis-py's, since the connection waits between requests: each call times
out on its own after `COMMAND_TIMEOUT`. A timed-out call's reply still comes and is
dropped, so the replies stay in step. A connection lost fails every call waiting on it
(their commands may have run); the next call opens a new one. A call whose write fails never
reached Redis and is sent once more on a new connection.

Writes are coalesced: the commands sent during one event-loop turn are held and written
together at its end (one `write` syscall for every request that counted its attempt in that
turn, not one each), in the order they were sent. A command whose reply is not waited for
(`send_script`, the log's append at close) is written at once, with what is held before it.
Commands held when the write fails, or when the connection is lost before it, never reached
Redis: their calls send them once more on a new connection.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from mockllm.state import COMMAND_TIMEOUT

_MORE = object()  # hiredis's "no whole reply yet" (a RESP3 reply may be False)


class _Unsent(Exception):
    """A write that failed: the command never reached Redis, so it may be sent again."""


class _Open(asyncio.Protocol):
    """A live connection and the calls waiting for its replies, oldest first."""

    def __init__(self, line: Line, conn: Any) -> None:
        import hiredis
        from redis._parsers.base import BaseParser
        from redis.exceptions import InvalidResponse

        self.line, self.conn = line, conn
        self.loop = asyncio.get_running_loop()
        self.transport: Any = conn._writer.transport  # redis-py's, after its handshake
        self.waiting: deque[tuple[asyncio.Future[Any], asyncio.TimerHandle]] = deque()
        self.held: list[bytes] = []  # this turn's commands, not written yet (the last waiting)
        self.gone: asyncio.Future[None] = self.loop.create_future()  # done once it is lost
        # Error replies as redis-py's own exceptions (NoScriptError, OutOfMemoryError, ...)
        self.replies = hiredis.Reader(
            protocolError=InvalidResponse,
            replyError=BaseParser.parse_error,
            notEnoughData=_MORE,
        )

    def send(self, data: bytes) -> asyncio.Future[Any]:
        """Hold one packed command, written at the end of this loop turn with the others
        sent in it; the future of its reply (`_Unsent` if it was never written)."""
        waiter = self.loop.create_future()
        if not self.held:
            self.loop.call_soon(self.flush)
        self.held.append(data)
        expiry = self.loop.call_later(COMMAND_TIMEOUT, _expire, waiter)
        self.waiting.append((waiter, expiry))
        return waiter

    def flush(self) -> None:
        """Write the held commands, in one write; when it fails, the connection is lost and
        their calls send them again."""
        held, self.held = self.held, []
        if not held:
            return
        try:
            self.transport.write(held[0] if len(held) == 1 else b"".join(held))
        except Exception as error:
            self.held = held  # never written: `_lost` tells their calls so
            self.line._lost(self, error)

    def data_received(self, data: bytes) -> None:
        replies, waiting = self.replies, self.waiting
        replies.feed(data)
        try:
            while (reply := replies.gets()) is not _MORE:
                waiter, expiry = waiting.popleft()  # IndexError: a reply nobody asked for
                expiry.cancel()
                if waiter.done():  # timed out or cancelled: its reply is dropped
                    continue
                if isinstance(reply, Exception):  # Redis's error reply
                    waiter.set_exception(reply)
                else:
                    waiter.set_result(reply)
        except Exception as error:  # replies out of step: nothing on this line is right
            self.line._lost(self, error)

    def connection_lost(self, exc: Exception | None) -> None:
        self.line._lost(self, exc or ConnectionError("Redis closed the connection"))


class Line:
    def __init__(self, client: Any) -> None:
        from hiredis import pack_command
        from redis.exceptions import ConnectionError, NoScriptError

        pool = client.connection_pool
        self._class, self._kwargs = pool.connection_class, pool.connection_kwargs
        self._open: _Open | None = None
        self._opening: asyncio.Lock | None = None
        self._pack = pack_command
        # Bound once: an import statement in a call runs on every call
        self._no_script, self._refused = NoScriptError, ConnectionError

    async def script(self, script: Any, keys: list[Any], args: list[Any]) -> Any:
        """Run a registered script (`client.register_script`): by its digest, or by its
        text when Redis does not know it (restarted, or SCRIPT FLUSH). The digest's try is
        `call`'s steps in this coroutine (every request runs one: a coroutine less)."""
        data = self._pack(("EVALSHA", script.sha, len(keys), *keys, *args))
        try:
            try:
                return await (self._open or await self._connect()).send(data)
            except _Unsent:
                return await self._again(data)
        except self._no_script:
            return await self.call("EVAL", script.script, len(keys), *keys, *args)

    def send_script(self, script: Any, keys: list[Any], args: list[Any]) -> asyncio.Future[Any]:
        """Send a script by its digest now, without waiting: the future of its reply (the
        caller runs `script` again, as `self.script` does, on NoScriptError). A
        ConnectionError at once when no connection is open (or the write failed)."""
        if self._open is None:
            raise self._refused("no connection open to send on")
        line = self._open
        reply = line.send(self._pack(("EVALSHA", script.sha, len(keys), *keys, *args)))
        line.flush()  # now: on its way before the response's last byte
        if reply.done() and isinstance(unsent := reply.exception(), _Unsent):
            raise self._refused(str(unsent))
        return reply

    async def call(self, *args: Any) -> Any:
        """One command's reply; a Redis error reply raised as redis-py raises it."""
        data = self._pack(args)
        try:
            return await (self._open or await self._connect()).send(data)
        except _Unsent:
            return await self._again(data)

    async def _again(self, data: bytes) -> Any:
        """A command whose write never left, once more on a new connection."""
        try:
            return await (await self._connect()).send(data)
        except _Unsent as unsent:
            raise self._refused(str(unsent)) from None

    async def _connect(self) -> _Open:
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:  # one connect for every call that found none
            if self._open is None:
                conn = self._class(**{**self._kwargs, "socket_timeout": None})
                await conn.connect()
                line = self._open = _Open(self, conn)
                line.transport.set_protocol(line)  # replies come to `data_received` now
                line.loop.create_task(self._watch(line))
            return self._open

    async def _watch(self, line: _Open) -> None:
        """Close the connection when its event loop ends (asyncio.run cancels its tasks)."""
        try:
            await line.gone
        except asyncio.CancelledError:
            self._lost(line, ConnectionError("the event loop is closing"))
            raise

    def _lost(self, line: _Open, error: BaseException) -> None:
        """Fail every call waiting on `line`, and open a new connection for the next."""
        from redis.exceptions import ConnectionError

        if self._open is line:
            self._open = None
        reason = str(error) or type(error).__name__
        unsent, line.held = len(line.held), []  # the last `unsent` waiting were never written
        while line.waiting:
            waiter, expiry = line.waiting.popleft()
            expiry.cancel()
            if not waiter.done():
                never = len(line.waiting) < unsent
                waiter.set_exception(_Unsent(reason) if never else ConnectionError(reason))
        if not line.gone.done():
            line.gone.set_result(None)
        line.transport.abort()
        line.conn._writer = line.conn._reader = None  # closed here: redis-py has nothing to do

    async def aclose(self) -> None:
        line = self._open
        if line is not None:
            line.flush()
            line.transport.close()
            self._lost(line, ConnectionError("the connection was closed"))


def _expire(waiter: asyncio.Future[Any]) -> None:
    from redis.exceptions import TimeoutError as RedisTimeout

    if not waiter.done():
        waiter.set_exception(RedisTimeout(f"Timeout: no reply from Redis in {COMMAND_TIMEOUT:g} s"))
