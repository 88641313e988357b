"""What the MCP route checks before the `mcp` SDK sees a request, and how it reshapes what
the SDK refuses (docs/security.md, "MCP"): the body read whole first (a client hanging up
mid-body is logged, not a traceback), a request id already in flight in its session
refused (the SDK would drop the first request's answer), the SDK's sessions counted
against --max-mcp-sessions and the least recently used idle one closed, and every
refusal a JSON-RPC error (the SDK's transport layer answers some in plain text).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Any

import orjson

from mockllm.serving.asgi import Message, Receive, Send

INVALID_REQUEST = -32600
SESSION_HEADER = b"mcp-session-id"


class HungUp(Exception):
    """The client hung up before its body had come."""


async def read_whole(receive: Receive, limit: int) -> bytes | None:
    """The request body, or None past `limit` bytes (read no further); HungUp if the
    client went away first."""
    body = bytearray()
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            raise HungUp
        body += message.get("body", b"")
        if len(body) > limit:
            return None
        if not message.get("more_body"):
            return bytes(body)


def replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives `body` whole, then waits on the real one (for a disconnect)."""
    given = False

    async def receiving() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return receiving


IdKey = tuple[str, str]  # a JSON-RPC id: its JSON type and its JSON text


def request_ids(body: bytes) -> list[IdKey]:
    """The ids of the JSON-RPC requests in `body` (one message or a batch); none for what
    is not JSON: the SDK answers that itself."""
    try:
        data = orjson.loads(body)  # no recursion: 100,000 brackets are refused, not a crash
    except orjson.JSONDecodeError:
        return []
    messages = data if isinstance(data, list) else [data]
    return [
        _key(m["id"])
        for m in messages
        if isinstance(m, dict) and "method" in m and m.get("id") is not None
    ]


def _key(value: Any) -> IdKey:
    """An id as a dict key that tells 1 from "1" (JSON-RPC does) and takes any JSON. The
    ids clients send, an int or a string, are their own text (no JSON encoding per call)."""
    kind = type(value)
    if kind is int or kind is str:
        return (kind.__name__, str(value))
    return (kind.__name__, json.dumps(value, sort_keys=True))


def id_of(key: IdKey) -> Any:
    if key[0] == "str":
        return key[1]
    return json.loads(key[1])


def error_body(code: int, message: str, id_: Any = None) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}
    ).encode()


def shaped(send: Send) -> Send:
    """`send`, with an error the SDK's transport answers in plain text or with no body
    (415/400 for the Content-Type, 413, 405) rewritten as a JSON-RPC error of the same
    status, its text the message; its other headers (`Allow`) kept."""
    held: list[Message] = []

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            status = int(message["status"])
            headers = dict(message.get("headers") or [])
            kind = headers.get(b"content-type", b"")
            if status >= 400 and not kind.startswith(b"application/json"):
                held.append(message)
                return
        elif held and message["type"] == "http.response.body":
            held.append(message)
            if not message.get("more_body"):
                await _send_shaped(send, held)
            return
        await send(message)

    return sending


async def _send_shaped(send: Send, held: list[Message]) -> None:
    start, *parts = held
    status = int(start["status"])
    text = b"".join(p.get("body", b"") for p in parts).decode("utf-8", "replace").strip()
    body = error_body(INVALID_REQUEST, text or _REASONS.get(status, f"HTTP {status}"))
    keep = [
        (k, v)
        for k, v in start.get("headers") or []
        if k.lower() not in (b"content-type", b"content-length")
    ]
    headers = [*keep, (b"content-type", b"application/json")]
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


_REASONS = {
    405: "Method Not Allowed: this MCP endpoint takes POST (and GET, DELETE with a session) "
    "under a supported MCP-Protocol-Version",
}


class Sessions:
    """The SDK sessions this process holds over HTTP, least recently used first, each
    with its requests in flight; at most `limit` across every scripted server."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: OrderedDict[tuple[Hashable, str], Any] = OrderedDict()  # → its manager
        self._busy: dict[tuple[Hashable, str], int] = {}
        self._in_flight: set[tuple[Hashable, str, IdKey]] = set()

    def __len__(self) -> int:
        return len(self._open)

    def opened(self, server: Hashable, sid: str, manager: Any) -> None:
        self._open[(server, sid)] = manager

    def closed(self, server: Hashable, sid: str) -> None:
        self._open.pop((server, sid), None)

    def touch(self, server: Hashable, sid: str) -> None:
        if (server, sid) in self._open:
            self._open.move_to_end((server, sid))

    def claim(self, server: Hashable, sid: str, ids: list[IdKey]) -> IdKey | None:
        """Mark the request's ids in flight; the first already in flight instead, if any
        (nothing is marked then)."""
        for id_ in ids:
            if (server, sid, id_) in self._in_flight:
                return id_
        self._in_flight.update((server, sid, id_) for id_ in ids)
        self._busy[(server, sid)] = self._busy.get((server, sid), 0) + 1
        return None

    def release(self, server: Hashable, sid: str, ids: list[IdKey]) -> None:
        self._in_flight.difference_update((server, sid, id_) for id_ in ids)
        left = self._busy.get((server, sid), 1) - 1
        if left:
            self._busy[(server, sid)] = left
        else:
            self._busy.pop((server, sid), None)

    async def make_room(self) -> bool:
        """Room for one more session: those the SDK ended itself forgotten, then the least
        recently used idle one closed. False when every session has a request in flight."""
        for key in list(self._open):
            if key[1] not in _instances(self._open[key]):
                del self._open[key]  # ended by the SDK: idle timeout, DELETE, a crash
        for key in self._idle():
            if len(self._open) < self.limit:
                break
            manager = self._open.pop(key)
            transport = _instances(manager).get(key[1])
            if transport is not None:  # forgotten at once (its task ends later), then ended
                await manager._discard_session(key[1], transport)
        return len(self._open) < self.limit

    def _idle(self) -> Iterator[tuple[Hashable, str]]:
        return iter([k for k in self._open if not self._busy.get(k)])


def _instances(manager: Any) -> dict[str, Any]:
    """The SDK's sessions of one manager. A private field, as `_discard_session` is: the SDK
    offers no public way to count or end them (tests/e2e/mcp/test_mcp_hostile.py would tell)."""
    found = getattr(manager, "_server_instances", None)
    return found if isinstance(found, dict) else {}


def session_of(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The first `mcp-session-id` (as the SDK's starlette headers find it): read backwards
    into a dict, an earlier one overwrites a later one (a loop in C, not in Python)."""
    found = dict(reversed(headers)).get(SESSION_HEADER)
    return None if found is None else found.decode("latin-1")
