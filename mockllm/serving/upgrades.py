"""The WebSocket layer's refusals, made mockllm's own (docs/security.md, "WebSocket").

uvicorn hands any request with `Upgrade: websocket` to the WebSocket library, which
answers one that is no handshake (a POST, no `Sec-WebSocket-Key`) with a plain-text 400
the app never sees, so it was neither in the provider's shape nor logged. Here only a
real handshake is upgraded; anything else reaches the app as plain HTTP, served or
refused in the provider's shape, and logged. And a text frame that is not UTF-8 is closed
1007 as before, with one line on stderr instead of a traceback: it is the client's fault.
"""

from __future__ import annotations

import base64
import binascii
import logging
import struct
from typing import Any


def is_handshake(method: str, headers: list[tuple[bytes, bytes]]) -> bool:
    """A WebSocket opening handshake (RFC 6455 §4.2.1) as the library will accept it."""
    if method != "GET":
        return False
    found = dict(headers)
    if found.get(b"sec-websocket-version", b"").strip() != b"13":
        return False
    try:
        key = base64.b64decode(found.get(b"sec-websocket-key", b"").strip(), validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(key) == 16


def handshakes_only(protocol: type[Any]) -> type[Any]:
    """`protocol` (uvicorn's HTTP protocol) upgrading only a real handshake."""

    class HandshakesOnly(protocol):  # type: ignore[misc]
        # httptools asks three times a request (upgrade, headers done, message done): the
        # answer, for the headers list it was given for (each request has its own)
        _upgrade: tuple[list[tuple[bytes, bytes]], bool] | None = None

        def _should_upgrade(self) -> bool:
            if self._upgrade is not None and self._upgrade[0] is self.headers:
                return self._upgrade[1]
            upgrade = super()._should_upgrade() and is_handshake(
                str(self.scope.get("method", "")), self.headers
            )
            self._upgrade = (self.headers, upgrade)
            return upgrade

        def _unsupported_upgrade_warning(self) -> None:
            pass  # served as plain HTTP (and logged there): nothing to warn of

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            cycle = getattr(self, "cycle", None)
            # httptools reads nothing more of a connection that asked to upgrade (the
            # parser says so first: uvicorn's header scan is not run for every request)
            asked = self.parser.should_upgrade() and self._get_upgrade() is not None
            if cycle is not None and asked:
                cycle.keep_alive = False

    HandshakesOnly.__name__ = HandshakesOnly.__qualname__ = f"HandshakesOnly{protocol.__name__}"
    if any(c.__module__.endswith("httptools_impl") for c in protocol.__mro__):
        return _body_after_upgrade(HandshakesOnly)
    return HandshakesOnly  # h11 reads the body of a request that asked to upgrade


def _body_after_upgrade(protocol: type[Any]) -> type[Any]:
    """httptools stops parsing at the end of the headers of a request that asks to upgrade
    (llhttp counts what follows as the new protocol's), so a POST with `Upgrade: websocket`
    reached the app without its body. Not upgraded, the bytes after the headers are its
    body, up to its Content-Length, handed to the app as uvicorn hands any body."""
    import httptools

    class BodyAfterUpgrade(protocol):  # type: ignore[misc]
        _left: int | None = None  # body bytes still to come after a refused upgrade

        def data_received(self, data: bytes) -> None:
            if self._left is not None:
                self._more_body(data)
                return
            self._unset_keepalive_if_required()
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserError:
                message = "Invalid HTTP request received."
                self.logger.warning(message)
                self.send_400_response(message)
            except httptools.HttpParserUpgrade as upgrade:
                if self._should_upgrade():
                    self.handle_websocket_upgrade()
                    return
                declared = dict(self.headers).get(b"content-length", b"0").strip()
                self._left = int(declared) if declared.isdigit() and len(declared) < 16 else 0
                self._more_body(data[upgrade.args[0] :])

        def _more_body(self, data: bytes) -> None:
            cycle = self.cycle
            if cycle is None or cycle.response_complete or self._left is None:
                return
            taken = data[: self._left]
            self._left -= len(taken)
            cycle.body += taken
            cycle.more_body = self._left > 0
            cycle.message_event.set()

    BodyAfterUpgrade.__name__ = BodyAfterUpgrade.__qualname__ = f"BodyAfter{protocol.__name__}"
    return BodyAfterUpgrade


class _OneLine(logging.Logger):
    """uvicorn's own logger, but a client's bad frame is one line, not a traceback."""

    def exception(self, msg: object, *args: object, **kwargs: Any) -> None:
        self.warning("%s (closed 1007)", msg)


_QUIET = _OneLine("uvicorn.error.websocket")
_QUIET.parent = logging.getLogger("uvicorn.error")
_QUIET.setLevel(logging.WARNING)  # uvicorn asks `logger.level` before its trace lines


# An ASGI extension of mockllm's own WebSocket protocol: `{"type": SEND_TEXTS, "texts":
# [bytes, ...]}` sends each UTF-8 payload as one text frame, all in one transport write.
# ASGI's `websocket.send` carries one frame; a Responses turn is about ten, and each send
# costs uvicorn an await, a re-encode and a write (docs/design.md, "Performance").
SEND_TEXTS = "mockllm.websocket.send_texts"
MAX_QUEUED = 4  # messages a connection holds for the app before it stops reading


def _text_frame(payload: bytes) -> bytes:
    """One unmasked, unfragmented text frame as a server sends it (RFC 6455 §5.2), with
    no extension negotiated: FIN and opcode 1, then the payload length in 7, 16 or 64 bits."""
    size = len(payload)
    if size < 126:
        return bytes((0x81, size)) + payload
    if size < 65536:
        return struct.pack("!BBH", 0x81, 126, size) + payload
    return struct.pack("!BBQ", 0x81, 127, size) + payload


def quiet_websocket() -> type[Any]:
    """uvicorn's sans-I/O `websockets` protocol, logging invalid UTF-8 in one line, and
    taking a batch of text frames in one send (SEND_TEXTS, offered in the scope)."""
    from uvicorn.protocols.utils import ClientDisconnected
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    from websockets.exceptions import InvalidState
    from websockets.protocol import State

    class QuietWebSockets(WebSocketsSansIOProtocol):
        def send_receive_event_to_app(self) -> None:
            # uvicorn pauses reading after every message until the app takes it: two epoll
            # changes a frame (a syscall each). Reading pauses once MAX_QUEUED wait.
            paused, self.read_paused = self.read_paused, True
            # uvicorn logs the UnicodeDecodeError of a text frame with logger.exception
            logger, self.logger = self.logger, _QUIET
            try:
                super().send_receive_event_to_app()
            finally:
                self.logger, self.read_paused = logger, paused
            if not paused and self.queue.qsize() >= MAX_QUEUED:
                self.read_paused = True
                self.transport.pause_reading()

        def handle_connect(self, event: Any) -> None:
            super().handle_connect(event)
            if self.handshake_complete:  # refused: no app runs
                return
            self.scope["extensions"][SEND_TEXTS] = {}  # the app's task has not started yet

        async def send(self, message: Any) -> None:
            if message["type"] != SEND_TEXTS:
                await super().send(message)
                return
            writable = getattr(self, "writable", None)  # write flow control: uvicorn 0.52.1+
            if writable is not None:
                await writable.wait()  # what uvicorn's own send waits for, once a batch
            if getattr(self, "disconnected", False):
                raise ClientDisconnected()
            if not self.handshake_complete or self.close_sent or self.initial_response:
                raise RuntimeError(f"{SEND_TEXTS} before the accept or after the close")
            conn = self.conn
            if conn.state is not State.OPEN:
                raise ClientDisconnected()
            if conn.extensions or conn.expect_continuation_frame:  # never so in mockllm
                try:
                    for text in message["texts"]:
                        conn.send_text(text)
                except InvalidState:
                    raise ClientDisconnected() from None
                self.transport.write(b"".join(conn.data_to_send()))
                return
            # what the library has queued (a pong) first, then the frames, framed here
            self.transport.write(
                b"".join([*conn.data_to_send(), *map(_text_frame, message["texts"])])
            )

    return QuietWebSockets
