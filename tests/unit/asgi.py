"""In-process ASGI helpers for unit tests: one POST through an app (its status and body), and a WebSocket scope."""

from __future__ import annotations

from typing import Any


async def post(app: Any, path: str, body: bytes, query: bytes = b"") -> tuple[int, bytes]:
    return await request(app, "POST", path, body, query)


async def request(
    app: Any, method: str, path: str, body: bytes = b"", query: bytes = b""
) -> tuple[int, bytes]:
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(),
             "query_string": query, "headers": [(b"content-type", b"application/json")],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8000)}  # fmt: skip
    sent: list[bytes] = []
    status = 0

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        else:
            sent.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(sent)


def websocket_scope(path: str, extensions: dict[str, Any] | None = None) -> dict[str, Any]:
    """The scope uvicorn hands an app for a WebSocket upgrade of `path`."""
    return {"type": "websocket", "path": path, "raw_path": path.encode(), "query_string": b"",
            "headers": [], "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8000),
            "subprotocols": [], "extensions": extensions or {}}  # fmt: skip
