"""Send one response over raw ASGI, carry out a `Delivery`, and record what went out.

Pauses watch for the client hanging up (`client_disconnected` in the log). A `reset`
ending returns without finishing the body: uvicorn then closes the connection before the
final chunk, which every SDK sees as an aborted transfer (docs/scenarios.md, faults).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import traceback

from mockllm.core.faults import Delivery
from mockllm.errors import RequestError
from mockllm.log.journal import Journal, LiveEntry
from mockllm.providers import Adapter
from mockllm.serving.asgi import Receive, Send
from mockllm.serving.rendered import RENDERED

JSON = b"application/json"
_ABORT_NOTICE = "ASGI callable returned without completing response."
_NO_CACHE = (b"cache-control", b"no-cache")
# What `_headers` gives a 200 body and a 200 stream but the id and the length, fixed per
# adapter (`Responder.whole` builds only those two): kept on the adapter itself, so it dies
# with its server (a module-level table kept a stopped server's adapters, and their stores).
_HEADS = "_mockllm_ok_heads"
Head = tuple[tuple[bytes, bytes], bytes, tuple[tuple[bytes, bytes], ...]]


class Responder:
    __slots__ = (
        "_receive",
        "_send",
        "adapter",
        "entry",
        "journal",
        "max_stall",
        "request_id",
        "started",
    )

    def __init__(
        self,
        journal: Journal,
        entry: LiveEntry,
        send: Send,
        receive: Receive,
        adapter: Adapter,
        max_stall: float,
    ) -> None:
        self.journal, self.entry, self.adapter = journal, entry, adapter
        self._send, self._receive, self.max_stall = send, receive, max_stall
        # Deterministic: from session, scenario, turn and attempt, set once they are known;
        # until then None, and `_id` makes it from the seq.
        self.request_id: str | None = None
        self.started = False

    def _id(self) -> str:
        """The request id, made from the entry's seq if the turn was never known."""
        if self.request_id is None:
            self.request_id = self.adapter.request_id("seq", self.entry.seq)
        return self.request_id

    async def crashed(self) -> None:
        """mockllm itself failed on this request: the traceback goes in the log entry, and a
        500 in the provider's shape to the client, unless the answer had already begun."""
        self.entry.server_error = traceback.format_exc()
        if not self.started:
            message = "mockllm internal error; see server_error in the request log"
            await self.error(RequestError(500, message, kind="server_error"))

    async def error(self, error: RequestError, first_byte_ms: int = 0) -> None:
        self.entry.error = {"kind": error.kind, "message": error.message}
        self.entry.retry_after = _retry_after(error.headers)
        if first_byte_ms and not await self._pause(first_byte_ms / 1000):
            return
        body = self.adapter.error_body(error, self._id())
        headers = self._headers(JSON, len(body), error.status, self.entry.retry_after) + [
            (k.encode(), v.encode()) for k, v in error.headers
        ]
        headers += self.adapter.error_headers(error)
        await self._start(error.status, headers)
        await self._body(body, more=False)

    async def json(self, body: bytes) -> None:
        """A whole 200 JSON body that is no reply of a turn (an embeddings answer)."""
        await self._start(200, self._headers(JSON, len(body)))
        await self._body(body, more=False)

    async def whole(self, body: bytes, stream: bool, rendered: object = None) -> None:
        """A reply without a fault: `deliver` of a `Delivery([body])`, with the steps that
        delivery skips (pauses, chunks, a cut) left out, `_start` and `_body` written out:
        the path of nearly every request. `rendered`: the Rendered `body` is, handed on
        with it (the WebSocket route slices a stream's frames from it)."""
        heads = getattr(self.adapter, _HEADS, None) or _heads(self.adapter)  # (`_headers`)
        content_type, id_header, wire = heads[stream]
        headers = [
            content_type,
            (id_header, (self.request_id or self._id()).encode()),
            *wire,
            _NO_CACHE if stream else (b"content-length", b"%d" % len(body)),
        ]
        self.started = True
        entry = self.entry
        entry.status = 200
        await self._send({"type": "http.response.start", "status": 200, "headers": headers})
        journal = self.journal
        journal.record_sent(entry, body)
        if (written := journal.close(entry)) is not None:
            await written  # a shared log's entry is in the store before the last byte leaves
        message = {"type": "http.response.body", "body": body, "more_body": False}
        if rendered is not None:
            message[RENDERED] = rendered
        await self._send(message)

    async def deliver(self, delivery: Delivery, stream: bool) -> None:
        if delivery.first_byte_ms and not await self._pause(delivery.first_byte_ms / 1000):
            return
        body = b"".join(delivery.chunks)
        # A complete JSON body says its length; a stream or a cut body is chunked.
        length = len(body) if not stream and delivery.ending == "complete" else None
        headers = self._headers(self.adapter.stream_content_type if stream else JSON, length)
        if stream:
            headers.append(_NO_CACHE)
        await self._start(200, headers)
        if not delivery.paced:  # the fast path: one send
            await self._body(body, more=delivery.ending == "reset")
            return
        for i, chunk in enumerate(delivery.chunks):
            if i and delivery.between_ms and not await self._pause(delivery.between_ms / 1000):
                return
            await self._body(chunk, more=True)
        if delivery.ending == "stall":
            if await self._pause(self.max_stall):
                self.entry.note(f"stalled for --max-stall {self.max_stall:g} s, then reset")
        elif delivery.ending != "reset":
            await self._body(b"", more=False)
        # "reset" and a stall end with the body unfinished: uvicorn drops the connection

    async def _pause(self, seconds: float) -> bool:
        """Wait, unless the client hangs up first: then log it and say so (False)."""
        try:
            message = await asyncio.wait_for(self._receive(), seconds)
        except asyncio.TimeoutError:
            return True
        if message.get("type") == "http.disconnect":
            self.entry.client_disconnected = True
            return False
        return True

    def _headers(
        self,
        content_type: bytes,
        length: int | None = None,
        status: int = 200,
        retry_after: float | None = None,
    ) -> list[tuple[bytes, bytes]]:
        request_id = self.request_id or self._id()
        headers = [
            (b"content-type", content_type),
            (self.adapter.request_id_header.encode(), request_id.encode()),
            *self.adapter.wire_headers(status, retry_after),
        ]
        if length is not None:
            headers.append((b"content-length", str(length).encode()))
        return headers

    async def _start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.started = True
        self.entry.status = status
        await self._send({"type": "http.response.start", "status": status, "headers": headers})

    async def _body(self, data: bytes, more: bool) -> None:
        self.journal.record_sent(self.entry, data)
        if not more and (written := self.journal.close(self.entry)) is not None:
            await written  # a shared log's entry is in the store before the last byte leaves
        await self._send({"type": "http.response.body", "body": data, "more_body": more})


def _heads(adapter: Adapter) -> tuple[Head, Head]:
    """`adapter`'s `_HEADS`: what `_headers` gives a 200 body and a 200 stream, but the id
    and the length."""
    wire = tuple(adapter.wire_headers(200, None))
    id_header = adapter.request_id_header.encode()
    stream = (b"content-type", adapter.stream_content_type)
    heads = (((b"content-type", JSON), id_header, wire), (stream, id_header, wire))
    with contextlib.suppress(AttributeError):  # (an adapter with __slots__ builds them each time)
        setattr(adapter, _HEADS, heads)
    return heads


def _retry_after(headers: tuple[tuple[str, str], ...]) -> float | None:
    """The delay an error answer asks for, as the SDKs read it: retry-after-ms first."""
    found = {k.lower(): v for k, v in headers}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return float(found[name]) * scale
        except (KeyError, ValueError):
            continue
    return None


class _QuietAborts(logging.Filter):
    """uvicorn reports a body left unfinished; for a scripted reset that is the point."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != _ABORT_NOTICE


_QUIET = _QuietAborts()


def quiet_scripted_aborts() -> None:
    logging.getLogger("uvicorn.error").addFilter(_QUIET)  # adding the same filter twice is a no-op
