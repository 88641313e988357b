"""One socket write per response instead of one per ASGI message.

uvicorn writes the status line and headers as soon as the app sends
`http.response.start`, then the body at `http.response.body`: two `write` syscalls for
every answer, each its own TCP segment on a TCP_NODELAY socket. On loopback a write also
runs the receiver's side of the TCP stack, so a py-spy profile of `mockllm serve` under
load showed about a fifth of the server's CPU in libc `write`, two thirds of it on the
headers (`make bench-spy`, bench/README.md).

`coalescing(protocol)` subclasses uvicorn's HTTP protocol so that its transport holds the
writes made during one event-loop turn and hands them over together at the end of it.
The bytes and their order are unchanged, and nothing waits: a stream's pauses (`delay`,
`stall`) fall between turns, so each frame still leaves when it is sent. Closing or
aborting the connection, or the client closing its sending side (EOF), first hands over
what is held.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast


class CoalescedWrites:
    """A transport whose writes within one loop turn leave in one `write`."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._held is None:
            self._held = [bytes(data)]
            self._loop.call_soon(self.flush)
        else:
            self._held.append(bytes(data))

    def flush(self) -> None:
        held, self._held = self._held, None
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self.flush()
        self._transport.abort()

    # What uvicorn's protocols ask of their transport, passed on by name: reached through
    # __getattr__, each call first failed the usual lookup, and the AttributeError it made
    # cost more than the call (about 6,000 instructions; docs/design.md, "Performance")
    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def __getattr__(self, name: str) -> Any:  # everything else is the real transport's
        return getattr(self._transport, name)


def coalescing(protocol: type[asyncio.Protocol]) -> type[asyncio.Protocol]:
    """`protocol` (one of uvicorn's HTTP protocol classes) writing through CoalescedWrites."""

    class Coalescing(protocol):  # type: ignore[misc,valid-type]
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            real = cast(asyncio.Transport, transport)
            super().connection_made(CoalescedWrites(real, asyncio.get_running_loop()))

        def eof_received(self) -> bool | None:
            # A client that half-closes after its request (`nc -N`, raw-socket harnesses)
            # makes uvicorn close the transport here: what the app wrote this turn must
            # leave first, as it did when every write left at once.
            self.transport.flush()
            return cast(bool | None, super().eof_received())

    Coalescing.__name__ = Coalescing.__qualname__ = f"Coalescing{protocol.__name__}"
    return Coalescing


def http_protocol() -> type[asyncio.Protocol]:
    """uvicorn's fastest HTTP protocol here (httptools, else h11), writing coalesced."""
    fastest: type[asyncio.Protocol]
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        fastest = HttpToolsProtocol
    except ImportError:  # httptools is a dependency, but a wheel may be missing
        from uvicorn.protocols.http.h11_impl import H11Protocol

        fastest = H11Protocol
    return coalescing(fastest)
