"""One pipelined connection for the scripts every request runs (counting its attempt,
recording its cut, storing its log entry): each call writes its command and waits for its
reply, and one reader task hands the replies out in the order the commands went, as RESP
sends them back. Concurrent requests share the connection, so their replies arrive
together; a call costs a write and a future, not the client's per-command pool,
retry and instrumentation layers (about 3,000 bytecodes per call on redis-py 8).

The connection is redis-py's own (`connection_class` of the client's pool, with the URL's
host, TLS, credentials and database, and its handshake); only the reading differs: no read
timeout of redis-py's, since the reader waits between requests, and each call times out on
its own after `COMMAND_TIMEOUT`. A timed-out call's reply still comes and is dropped, so
the replies stay in step. A connection lost fails every call waiting on it (their commands
may have run); the next call opens a new one. A call whose write fails never reached
Redis and is sent once more on a new connection.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from mockllm.state import COMMAND_TIMEOUT


class _Unsent(Exception):
    """A write that failed: the command never reached Redis, so it may be sent again."""


class _Open:
    """A live connection and the calls waiting for its replies, oldest first."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.waiting: deque[asyncio.Future[Any]] = deque()
        self.reader: asyncio.Task[None] | None = None


def packed(args: tuple[Any, ...]) -> bytes:
    """A command as RESP: an array of bulk strings (str, int and bytes arguments)."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class Line:
    def __init__(self, client: Any) -> None:
        pool = client.connection_pool
        self._class, self._kwargs = pool.connection_class, pool.connection_kwargs
        self._open: _Open | None = None
        self._opening: asyncio.Lock | None = None
        self._pack: Callable[[tuple[Any, ...]], bytes] = packed
        try:  # hiredis (the `redis` extra brings it) packs in C: a third of `packed`'s time
            from hiredis import pack_command

            self._pack = pack_command
        except ImportError:
            pass

    async def script(self, script: Any, keys: list[Any], args: list[Any]) -> Any:
        """Run a registered script (`client.register_script`): by its digest, or by its
        text when Redis does not know it (restarted, or SCRIPT FLUSH)."""
        from redis.exceptions import NoScriptError

        try:
            return await self.call("EVALSHA", script.sha, len(keys), *keys, *args)
        except NoScriptError:
            return await self.call("EVAL", script.script, len(keys), *keys, *args)

    async def call(self, *args: Any) -> Any:
        """One command's reply; a Redis error reply raised as redis-py raises it."""
        from redis.exceptions import ConnectionError

        data = self._pack(args)
        try:
            return await self._sent(self._open or await self._connect(), data)
        except _Unsent:
            pass
        try:  # the write never left: once more, on a new connection
            return await self._sent(await self._connect(), data)
        except _Unsent as unsent:
            raise ConnectionError(str(unsent)) from None

    async def _sent(self, line: _Open, data: bytes) -> Any:
        from redis.exceptions import TimeoutError as RedisTimeout

        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        line.waiting.append(waiter)
        try:  # redis-py disconnects a connection whose write failed
            await line.conn.send_packed_command(data, check_health=False)
        except Exception as error:
            self._lost(line, error)
            raise _Unsent(str(error) or type(error).__name__) from None
        expiry = loop.call_later(COMMAND_TIMEOUT, _expire, waiter, RedisTimeout)
        try:
            return await waiter
        finally:
            expiry.cancel()

    async def _connect(self) -> _Open:
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:  # one connect for every call that found none
            if self._open is None:
                conn = self._class(**{**self._kwargs, "socket_timeout": None})
                await conn.connect()
                line = self._open = _Open(conn)
                line.reader = asyncio.get_running_loop().create_task(self._read(line))
            return self._open

    async def _read(self, line: _Open) -> None:
        from redis.exceptions import ResponseError

        try:
            while True:
                try:
                    reply = await line.conn.read_response()
                except ResponseError as error:
                    reply = error
                waiter = line.waiting.popleft()  # IndexError: a reply nobody asked for
                if waiter.done():  # timed out or cancelled: its reply is dropped
                    continue
                if isinstance(reply, ResponseError):
                    waiter.set_exception(reply)
                else:
                    waiter.set_result(reply)
        except asyncio.CancelledError:
            self._lost(line, ConnectionError("the connection was closed"))
            raise
        except Exception as error:
            self._lost(line, error)
            await line.conn.disconnect(nowait=True)

    def _lost(self, line: _Open, error: BaseException) -> None:
        """Fail every call waiting on `line`, and open a new connection for the next."""
        from redis.exceptions import ConnectionError

        if self._open is line:
            self._open = None
        while line.waiting:
            waiter = line.waiting.popleft()
            if not waiter.done():
                waiter.set_exception(ConnectionError(str(error) or type(error).__name__))
        if line.reader is not None and line.reader is not asyncio.current_task():
            line.reader.cancel()

    async def aclose(self) -> None:
        line, self._open = self._open, None
        if line is not None:
            if line.reader is not None:
                line.reader.cancel()
            await line.conn.disconnect(nowait=True)


def _expire(waiter: asyncio.Future[Any], timeout: type[Exception]) -> None:
    if not waiter.done():
        waiter.set_exception(timeout(f"Timeout: no reply from Redis in {COMMAND_TIMEOUT:g} s"))
