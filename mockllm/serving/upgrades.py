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
import re
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
        return _body_after_upgrade(_upgrade_as_parsed(HandshakesOnly))
    return HandshakesOnly  # h11 reads the body of a request that asked to upgrade


def _upgrade_as_parsed(protocol: type[Any]) -> type[Any]:
    """`protocol` (uvicorn's httptools one) handing the upgrade request to mockllm's
    WebSocket protocol as it parsed it."""
    from uvicorn.logging import TRACE_LOG_LEVEL

    class UpgradeAsParsed(protocol):  # type: ignore[misc]
        def handle_websocket_upgrade(self) -> None:
            """uvicorn's own, but mockllm's WebSocket protocol takes the request as parsed
            here, where uvicorn writes it back as bytes for the library to parse again."""
            if self.logger.level <= TRACE_LOG_LEVEL:
                prefix = f"{self.client[0]}:{self.client[1]} - " if self.client else ""
                self.logger.log(TRACE_LOG_LEVEL, "%sUpgrading to WebSocket", prefix)
            self.connections.discard(self)
            ws = self.ws_protocol_class(
                config=self.config, server_state=self.server_state, app_state=self.app_state
            )
            ws.connection_made(self.transport)
            self.transport.set_protocol(ws)
            method, headers = self.scope["method"], self.scope["headers"]
            take = getattr(ws, "take_request", None)  # mockllm's QuietWebSockets has it
            if take is None or not take(method, self.url, headers):
                output = [method.encode(), b" ", self.url, b" HTTP/1.1\r\n"]
                for name, value in headers:
                    output += [name, b": ", value, b"\r\n"]
                output.append(b"\r\n")
                ws.data_received(b"".join(output))

    UpgradeAsParsed.__name__ = UpgradeAsParsed.__qualname__ = f"Parsed{protocol.__name__}"
    return UpgradeAsParsed


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


# websockets' header-name check (http11.py `_token_re`), over the names joined by ":"
_TOKENS = re.compile(rb"[-!#$%&\'*+.^_`|~0-9a-zA-Z]+(?::[-!#$%&\'*+.^_`|~0-9a-zA-Z]+)*")
# Printable ASCII only, in the URL and in the values: every release of the library reads
# those alike (16 decodes other bytes with surrogate escapes, 17 refuses them in a URL and
# decodes them as ISO-8859-1 in a value), and its value check (`_value_re`) passes them.
_URL = re.compile(rb"[!-~]*")  # no space (the request line splits there), no newline
_VALUES = re.compile(rb"[\t -~]*")  # over the values joined by a tab


def parsed_request(method: str, url: bytes, headers: list[tuple[bytes, bytes]]) -> Any:
    """The upgrade request as `websockets` reads it (`Request.parse`) from the bytes uvicorn
    writes back from its own parse, or None wherever that read could refuse it or read it
    otherwise: the library then reads those bytes itself, as before."""
    from websockets.datastructures import Headers
    from websockets.http11 import MAX_LINE_LENGTH, MAX_NUM_HEADERS, Request

    names, values = zip(*headers, strict=True) if headers else ((), ())
    if method != "GET" or len(headers) > MAX_NUM_HEADERS or not _URL.fullmatch(url):
        return None
    # the request line "GET URL HTTP/1.1\r\n" within the line limit, and so every header
    # line "NAME: VALUE\r\n" (all of them together are, here)
    if len(url) + 15 > MAX_LINE_LENGTH or sum(map(len, names + values)) + 4 > MAX_LINE_LENGTH:
        return None
    if not _TOKENS.fullmatch(b":".join(names)) or not _VALUES.fullmatch(b"\t".join(values)):
        return None
    text = [value.strip(b" \t").decode() for value in values]
    parsed = Headers(zip(map(bytes.decode, names), text, strict=True))
    if "transfer-encoding" in parsed or "content-length" in parsed:
        return None  # refused, or a zero length allowed: the library's to say
    return Request(url.decode(), parsed)


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

    return _takes_parsed_request(_answers_unparsed_upgrades(QuietWebSockets))


def _answers_unparsed_upgrades(protocol: type[Any]) -> type[Any]:
    """uvicorn's sans-I/O protocol answering an upgrade request the library could not parse.
    uvicorn before 0.55 (the last for Python 3.10 is 0.54) leaves it unanswered, so the
    client waits for ever; 0.55 answers it as here: what the library queued, else a 400,
    then the close."""
    if hasattr(protocol, "handle_handshake_exception"):  # uvicorn 0.55 and later
        return protocol

    class AnswersUnparsedUpgrades(protocol):  # type: ignore[misc]
        def data_received(self, data: bytes) -> None:
            conn = self.conn
            conn.receive_data(data)
            if conn.parser_exc is not None:
                self.handle_parser_exception()
            elif conn.handshake_exc is not None and not self.handshake_initiated:
                self.handshake_complete = self.close_sent = True
                answer = (
                    b"".join(conn.data_to_send())
                    or conn.reject(
                        400, "Failed to open a WebSocket connection: invalid request.\n"
                    ).serialize()
                )
                self.transport.write(answer)
                self.transport.close()
            else:
                self.handle_events()

    AnswersUnparsedUpgrades.__name__ = AnswersUnparsedUpgrades.__qualname__ = protocol.__name__
    return AnswersUnparsedUpgrades


def _takes_parsed_request(protocol: type[Any]) -> type[Any]:
    """uvicorn's sans-I/O `websockets` protocol taking the upgrade request as uvicorn's HTTP
    protocol parsed it (`_upgrade_as_parsed`), not as bytes to parse again."""
    from websockets.protocol import State
    from websockets.server import ServerProtocol

    class TakesParsedRequest(protocol):  # type: ignore[misc]
        conn: Any  # uvicorn's: the library's sans-I/O protocol of this connection

        def take_request(self, method: str, url: bytes, headers: list[Any]) -> bool:
            """The upgrade request as uvicorn parsed it, checked and answered by the library
            as if it had read it (False: the library is to read its bytes)."""
            request = parsed_request(method, url, headers)
            if request is None or self.conn.debug or self.config.ws_per_message_deflate:
                return False
            # A protocol made past the request (its parser reads frames from the start),
            # then set to the handshake's state for `accept` and `send_response`.
            conn = ServerProtocol(
                extensions=[],
                state=State.OPEN,
                max_size=self.config.ws_max_size,
                logger=self.conn.logger,
            )
            conn.state = State.CONNECTING
            self.conn = conn
            self.handle_connect(request)
            return True

    TakesParsedRequest.__name__ = TakesParsedRequest.__qualname__ = protocol.__name__
    return TakesParsedRequest
