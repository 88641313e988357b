"""The ASGI vocabulary of the serving path, typed with starlette's own types, and the one
reader of a request body that every route shares (model routes, admin POSTs, the recorder)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockllm.errors import RequestError

if TYPE_CHECKING:
    from starlette.types import Message, Receive, Scope, Send
else:  # starlette is imported on the first admin request, not at start-up
    Scope = Message = dict[str, Any]
    Receive = Send = Any


async def read_body(receive: Receive, limit: int, declared: str | None = None) -> bytes:
    """The whole request body; over `limit` bytes (or a `declared` content-length over
    it), a 413 RequestError (--max-body), raised before the rest is read."""
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large(int(declared), limit)
    message = await receive()
    first: bytes = message.get("body", b"")
    if len(first) > limit:
        raise too_large(len(first), limit)
    if not message.get("more_body"):
        return first  # the usual request: one message, its bytes as they came
    body = bytearray(first)  # grows in place: `bytes +=` would copy it all per chunk
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > limit:
            raise too_large(len(body), limit)
        if not message.get("more_body"):
            return bytes(body)


def too_large(size: int, limit: int) -> RequestError:
    message = f"mockllm: request body of {size} bytes exceeds the server's limit of {limit} bytes"
    message += " (--max-body)"
    return RequestError(413, message, kind="body_too_large", code="request_too_large")


__all__ = ["Message", "Receive", "Scope", "Send", "read_body", "too_large"]
