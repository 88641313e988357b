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
        def _should_upgrade(self) -> bool:
            if not super()._should_upgrade():
                return False
            return is_handshake(str(self.scope.get("method", "")), self.headers)

        def _unsupported_upgrade_warning(self) -> None:
            pass  # served as plain HTTP (and logged there): nothing to warn of

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            cycle = getattr(self, "cycle", None)
            if cycle is not None and self._get_upgrade() is not None:
                # httptools reads nothing more of a connection that asked to upgrade
                cycle.keep_alive = False

    HandshakesOnly.__name__ = HandshakesOnly.__qualname__ = f"HandshakesOnly{protocol.__name__}"
    return HandshakesOnly


class _OneLine(logging.Logger):
    """uvicorn's own logger, but a client's bad frame is one line, not a traceback."""

    def exception(self, msg: object, *args: object, **kwargs: Any) -> None:
        self.warning("%s (closed 1007)", msg)


_QUIET = _OneLine("uvicorn.error.websocket")
_QUIET.parent = logging.getLogger("uvicorn.error")
_QUIET.setLevel(logging.WARNING)  # uvicorn asks `logger.level` before its trace lines


def quiet_websocket() -> type[Any]:
    """uvicorn's sans-I/O `websockets` protocol, logging invalid UTF-8 in one line."""
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    class QuietWebSockets(WebSocketsSansIOProtocol):
        def send_receive_event_to_app(self) -> None:
            # uvicorn logs the UnicodeDecodeError of a text frame with logger.exception
            logger, self.logger = self.logger, _QUIET
            try:
                super().send_receive_event_to_app()
            finally:
                self.logger = logger

    return QuietWebSockets
