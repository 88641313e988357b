"""The Responses API over WebSocket, as Codex uses it (its default transport).

One connection per session at the Responses path (`/v1/responses`, behind the optional
`/s/SCENARIO[/SESSION]`). Each text frame is `{"type": "response.create", ...}` with the
HTTP body's fields; the answer is the SSE stream's events, one JSON object per text frame
(no `event:` line, no `[DONE]`). A frame with `generate: false` is a warm-up: an empty
`response.created`/`response.completed`, no turn, not logged, but kept so the next frame
may continue it. A frame naming `previous_response_id` sends only the new input items:
the conversation is rebuilt from what this server kept (over WebSocket even with
`store: false`).

Every other frame is answered exactly as the HTTP request with that body would be: it goes
through `Exchanges.handle` (turn choice, validation, faults, the log), marked by an
`x-mockllm-transport: websocket` header, and what it would send over HTTP is translated:
SSE frames become text frames; an HTTP error (a 429, a 400) becomes the error event Codex
reads (`{"type": "error", "status_code": N, "error": {...}, "headers": {...}}`); a cut
stream's connection is closed, and a dropped connection is just that.
"""

from __future__ import annotations

import json
import time
from typing import Any

from mockllm.core import wirejson
from mockllm.core.engine import FIXED_CREATED
from mockllm.errors import RequestError
from mockllm.options import ServerOptions
from mockllm.providers import Adapter
from mockllm.providers.openai_responses import TRANSPORT_HEADER, Responses
from mockllm.serving.asgi import Message, Receive, Scope, Send
from mockllm.serving.exchange import Exchanges
from mockllm.serving.rendered import RENDERED, Rendered
from mockllm.serving.upgrades import SEND_TEXTS

# json.dumps(body, ensure_ascii=False), its encoder made once rather than per frame
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode

# Close codes: 1000 normal, 1008 policy (no such route), 1011 a cut stream.
NORMAL, POLICY, CUT = 1000, 1008, 1011


async def serve(
    scope: Scope,
    receive: Receive,
    send: Send,
    adapter: Adapter | None,
    route: str,
    names: tuple[str | None, str | None],
    exchanges: Exchanges,
    options: ServerOptions,
) -> None:
    """One WebSocket connection, until the client closes it or a fault drops it."""
    first = await receive()
    if first["type"] != "websocket.connect":
        return
    if not isinstance(adapter, Responses):  # only the Responses API speaks WebSocket
        await send({"type": "websocket.close", "code": POLICY})
        return
    await send({"type": "websocket.accept"})
    connection = _Connection(scope, receive, send, adapter, route, names, exchanges, options)
    await connection.run()


class _Connection:
    def __init__(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        adapter: Responses,
        route: str,
        names: tuple[str | None, str | None],
        exchanges: Exchanges,
        options: ServerOptions,
    ) -> None:
        self.scope, self._receive, self._send = scope, receive, send
        self.adapter, self.route, self.names = adapter, route, names
        self.exchanges, self.options = exchanges, options
        self.pending: list[Message] = []  # frames that arrived while a response was going out
        self.closed = False
        # mockllm's own server takes a turn's frames in one send (serving/upgrades.py)
        self.batches = SEND_TEXTS in scope.get("extensions", {})
        # The upgrade request's headers, marked, for every request made from its frames.
        headers = [(k, v) for k, v in scope["headers"] if k not in _HOP_BY_HOP]
        self.headers = [
            *headers,
            (b"content-type", b"application/json"),
            (TRANSPORT_HEADER, b"websocket"),
        ]

    async def run(self) -> None:
        while not self.closed:
            message = self.pending.pop(0) if self.pending else await self._receive()
            if message["type"] == "websocket.disconnect":
                return
            if message["type"] != "websocket.receive":
                continue
            text = message.get("text")
            if text is None:
                await self._error_event(400, "mockllm: send text frames (JSON), not binary ones")
                continue
            await self._frame(text)

    async def _frame(self, text: str) -> None:
        try:
            raw = text.encode("utf-8", "surrogatepass")  # the limit: as the exchange reads
            frame = wirejson.loads(raw, self.options.max_number_digits)
        except wirejson.InvalidJson:
            await self._exchange(text.encode("utf-8", "replace"))  # the API's own 400, logged
            return
        if not isinstance(frame, dict) or frame.get("type") != "response.create":
            kind = frame.get("type") if isinstance(frame, dict) else None
            await self._error_event(
                400,
                f"mockllm: unsupported WebSocket message type {kind!r}: send "
                '{"type": "response.create", ...} with the fields of a POST /v1/responses body',
            )
            return
        body, generate = request_body(frame)
        if generate is False:
            await self._warm_up(body)
            return
        # The body as a request's bytes (what the log keeps), and its JSON, parsed once here
        await self._exchange(_ENCODE(body).encode(), body)

    async def _warm_up(self, body: dict[str, Any]) -> None:
        try:
            parsed = self.adapter.parse_headed(body, self.route, {TRANSPORT_HEADER: "websocket"})
        except RequestError as error:
            await self._error_event(error.status, error.message, error)
            return
        except Exception as error:  # a body whose types are off
            refusal = self.adapter.refusal(error, json.dumps(body).encode())
            if refusal is None:
                raise
            await self._error_event(refusal.status, refusal.message, refusal)
            return
        created = int(time.time()) if self.options.real_time else FIXED_CREATED
        for event in self.adapter.warm_up(parsed, created):
            await self.send_text(event.decode())

    async def _exchange(self, raw: bytes, body: dict[str, Any] | None = None) -> None:
        """The frame as an HTTP request through the exchange, its answer sent as frames."""
        scope = {
            **self.scope,
            "type": "http",
            "method": "POST",
            "headers": [*self.headers, (b"content-length", str(len(raw)).encode())],
        }
        reply = _Reply(self)
        body_sent = False

        async def receive() -> Message:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": raw, "more_body": False}
            message = await self._receive()  # only while a fault pauses: a hang-up, or more
            if message["type"] == "websocket.disconnect":
                self.closed = True
                return {"type": "http.disconnect"}
            self.pending.append(message)
            return {"type": "http.request", "body": b"", "more_body": False}

        scenario, session = self.names
        await self.exchanges.handle(
            scope, receive, reply.send, self.adapter, self.route, scenario, session, body
        )
        await reply.finish()

    async def send_text(self, data: str) -> None:
        await self._send({"type": "websocket.send", "text": data})

    async def send_texts(self, texts: list[bytes]) -> None:
        """Text frames (UTF-8 payloads), in one send where the server takes a batch."""
        if self.batches:
            await self._send({"type": SEND_TEXTS, "texts": texts})
            return
        for text in texts:
            await self.send_text(text.decode())

    async def drop(self) -> None:
        self.closed = True
        await self._send({"type": "websocket.close", "code": CUT})

    async def _error_event(
        self, status: int, message: str, error: RequestError | None = None
    ) -> None:
        """A protocol error of the connection itself (not logged: no request was made)."""
        if error is not None:
            body = json.loads(self.adapter.error_body(error, ""))["error"]
        else:
            body = {"type": "invalid_request_error", "message": message, "param": None}
        await self.error_event(status, body, [])

    async def error_event(
        self, status: int, error: Any, headers: list[tuple[bytes, bytes]]
    ) -> None:
        """What Codex reads as an HTTP error over WebSocket (codex-rs responses_websocket.rs:
        a `type: error` event with `status_code`, the error object and headers)."""
        wanted = {k.decode(): v.decode() for k, v in headers if k in _ERROR_HEADERS}
        event = {"type": "error", "status_code": status, "error": error, "headers": wanted}
        await self.send_text(json.dumps(event))


def request_body(frame: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """A `response.create` frame made the HTTP body (in place: the frame is this server's
    own parse), and its `generate` field."""
    del frame["type"]  # the rest is the HTTP body's fields
    generate = frame.pop("generate", None)
    frame["stream"] = True  # every answer over WebSocket is the stream's events
    return frame, generate


class _Reply:
    """What the exchange sends over HTTP, sent as WebSocket frames."""

    def __init__(self, connection: _Connection) -> None:
        self.connection = connection
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.buffer = b""
        self.complete = False

    async def send(self, message: Message) -> None:
        if self.connection.closed:
            return
        if message["type"] == "http.response.start":
            self.status, self.headers = message["status"], list(message.get("headers", []))
            return
        if message["type"] != "http.response.body":
            return
        body = message.get("body", b"")
        texts = None
        if self.status == 200 and not self.buffer:  # a whole reply's stream: sliced
            texts = _sliced(message.get(RENDERED), body)
        self.buffer += body
        if self.status == 200:  # SSE: every complete frame out as one text frame
            if texts is None:
                *frames, self.buffer = self.buffer.split(b"\n\n")
                texts = [data for data in map(_data, frames) if data is not None]
            else:
                self.buffer = b""
            if texts:
                await self.connection.send_texts(texts)
        if not message.get("more_body"):
            self.complete = True
            if self.status != 200:
                await self._error(self.buffer)

    async def finish(self) -> None:
        """A response the exchange left unfinished (a cut stream, a stall): the connection
        goes, as it would have over HTTP."""
        if not self.complete and not self.connection.closed:
            await self.connection.drop()

    async def _error(self, body: bytes) -> None:
        try:
            error = json.loads(body).get("error")
        except (ValueError, AttributeError):
            error = {"message": body.decode(errors="replace")}
        await self.connection.error_event(self.status, error, self.headers)


def _data(frame: bytes) -> bytes | None:
    """The data of one SSE frame (`event:` lines dropped), or None if it has none."""
    head, found, data = frame.partition(b"\ndata: ")
    if found and _NEWLINE not in data and not head.startswith(b"data:"):  # what mockllm writes
        return data  # `event: NAME` then one `data:` line
    lines = [line[5:].lstrip() for line in frame.split(b"\n") if line.startswith(b"data:")]
    if not lines:
        return None
    return b"\n".join(lines)


def _sliced(rendered: Rendered | None, body: bytes) -> list[bytes] | None:
    """What `_data` gives of each frame of the stream `body`, sliced where its template's
    frames have their data (an attempt's ids keep every length, serving/rendered.py), or
    None: the body is split as any other (no template, or frames not as mockllm writes)."""
    template = None if rendered is None else rendered.template
    if template is None or len(body) != len(template.body):
        return None
    spans = template.frame_data
    if spans is None:
        spans = template.frame_data = _spans(template)
    return [body[start:end] for start, end in spans] if spans else None


def _spans(template: Rendered) -> tuple[tuple[int, int], ...]:
    """Where each frame's data lies in the template's body (`event: NAME`, one `data:`
    line, the blank line), or () if a frame is otherwise or an id could move its framing
    (an id with a newline, or in a head): splitting any of its attempts' bodies at
    `\\n\\n` and taking `_data` gives these very slices."""
    plans = template.plans or ()
    ids = [made for made, *_ in plans]  # an attempt's: the same prefix, length, alphabet
    if any(b"\n" in made + prefix + (table or b"") for made, _, prefix, _, table, *_ in plans):
        return ()
    spans, at = [], 0
    for event in template.events:
        frame = event.data
        head, found, data = frame.partition(b"\ndata: ")
        ends = len(frame) - 2
        if not found or frame.find(b"\n\n") != ends or frame[:1] == b"\n":
            return ()  # not one frame of `split(b"\\n\\n")`, or not `_data`'s one line
        if _NEWLINE in data[:-2] or head.startswith(b"data:") or any(i in head for i in ids):
            return ()
        spans.append((at + len(head) + 7, at + ends))
        at += len(frame)
    if b"".join(event.data for event in template.events) != template.body:
        return ()
    return tuple(spans)


# A byte as an int: bytes' `in` tries a needle as an integer first, and for a bytes needle
# the TypeError it makes and drops costs about 2,000 instructions, eight times the search.
_NEWLINE = ord("\n")

_HOP_BY_HOP = frozenset(
    {
        b"upgrade",
        b"connection",
        b"sec-websocket-key",
        b"sec-websocket-version",
        b"sec-websocket-extensions",
        b"sec-websocket-protocol",
        b"content-length",
        b"content-type",
        TRANSPORT_HEADER,
    }
)
# Headers of an HTTP error the error event carries (Codex reads retry and rate limits there).
_ERROR_HEADERS = frozenset(
    {b"retry-after", b"retry-after-ms", b"x-request-id"}
    | {
        f"x-ratelimit-{k}-{w}".encode()
        for k in ("limit", "remaining", "reset")
        for w in ("requests", "tokens")
    }
)
