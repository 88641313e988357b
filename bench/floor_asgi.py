"""The second reference: a raw ASGI callable on uvicorn, no framework at all.

It reads the request body and sends the fixed reply with the least ASGI traffic
possible: one start message, then one body message (non-stream) or one per SSE frame,
the last with more_body=False (stream, with --stream-sends event).
"""

from __future__ import annotations

from typing import Any

from .floor_common import Options, Reply, parse_options, serve

Scope = dict[str, Any]
Encoded = tuple[list[tuple[bytes, bytes]], list[bytes]]


def build(options: Options) -> Any:
    by_reply = {id(reply): _encoded(reply) for reply in options.replies.values()}

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass  # read the whole request body, as any real server must
        kind = next((v.decode() for k, v in scope["headers"] if k == b"x-bench-kind"), None)
        parts = scope["path"].split("/")
        reply = options.reply(kind, parts[2] if len(parts) > 2 else "")
        if reply is None or scope["method"] != "POST":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        headers, chunks = by_reply[id(reply)]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        last = len(chunks) - 1
        for i, chunk in enumerate(chunks):
            await send({"type": "http.response.body", "body": chunk, "more_body": i < last})

    return app


def _encoded(reply: Reply) -> Encoded:
    return [(k.encode(), v.encode()) for k, v in reply.headers], reply.chunks


def main() -> None:
    options = parse_options("bench floor: raw ASGI, fixed replies")
    serve(build(options), options.port)


if __name__ == "__main__":
    main()
