"""Whether a request is upgraded to WebSocket (serving/upgrades.py's `handshakes_only`) is
decided once per request: httptools asks three times, and each answer cost uvicorn's
header scan and the handshake check again. A request's own headers decide it, so the next
request on the connection is decided anew."""

from __future__ import annotations

import base64
from typing import Any

from mockllm.serving.upgrades import handshakes_only

KEY = base64.b64encode(b"0123456789abcdef")
HANDSHAKE = [
    (b"upgrade", b"websocket"),
    (b"connection", b"Upgrade"),
    (b"sec-websocket-version", b"13"),
    (b"sec-websocket-key", KEY),
]
NO_KEY = HANDSHAKE[:3]  # asks to upgrade, but is no handshake


class _Uvicorn:
    """What `handshakes_only` builds on: uvicorn's protocol, its upgrade check counted."""

    def __init__(self) -> None:
        self.scope: dict[str, Any] = {"method": "GET"}
        self.headers: list[tuple[bytes, bytes]] = []
        self.asked = 0

    def _should_upgrade(self) -> bool:
        self.asked += 1
        return dict(self.headers).get(b"upgrade") == b"websocket"


def test_each_request_is_decided_once_by_its_own_headers() -> None:
    protocol = handshakes_only(_Uvicorn)()
    protocol.headers = list(HANDSHAKE)
    assert [protocol._should_upgrade() for _ in range(3)] == [True] * 3
    assert protocol.asked == 1
    protocol.headers = list(NO_KEY)  # the next request on the connection
    assert [protocol._should_upgrade() for _ in range(3)] == [False] * 3
    assert protocol.asked == 2
    protocol.headers = []  # a plain request
    assert protocol._should_upgrade() is False and protocol.asked == 3
