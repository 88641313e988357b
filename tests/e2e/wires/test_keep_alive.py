"""An idle connection stays open for its next request (`--keep-alive`), and a server on
every interface says where a client reaches it (docs/container.md).

Pooled clients (Go's, OkHttp, .NET's, Node's) keep a connection idle for a minute or more
and send the next request on it. uvicorn's own default closes it after 5 s, so the request
after a pause met a closed connection: "connection reset" in the harness, not in mockllm's
log. A raw socket is the client here because it never reconnects behind the test's back,
as httpx does when it notices the close.
"""

from __future__ import annotations

import json
import socket
import time

from tests.support import running_server

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()


def _ask(sock: socket.socket) -> bytes:
    """One Chat Completions request on `sock`; the response's status line, or b"" when the
    server has closed the connection."""
    head = (
        "POST /s/hello/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(BODY)}\r\n\r\n"
    )
    try:
        sock.sendall(head.encode() + BODY)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                return b""
            received += chunk
    except (ConnectionResetError, BrokenPipeError):
        return b""
    head_bytes, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head_bytes.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head_bytes.split(b"\r\n", 1)[0]


def _after_a_pause(url: str, pause: float) -> tuple[bytes, bytes]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        first = _ask(sock)
        time.sleep(pause)
        return first, _ask(sock)


def test_a_pooled_client_that_pauses_past_uvicorns_default_keeps_its_connection() -> None:
    with running_server(scenarios=()) as server:  # the default --keep-alive
        first, second = _after_a_pause(server.url, 6.0)  # uvicorn's default: 5 s
    assert first == b"HTTP/1.1 200 OK"
    assert second == b"HTTP/1.1 200 OK"


def test_an_idle_connection_is_closed_after_keep_alive_seconds() -> None:
    # The other side: what the old default did to the request after a pause.
    with running_server("--keep-alive", "1", scenarios=()) as server:
        first, second = _after_a_pause(server.url, 2.5)
    assert first == b"HTTP/1.1 200 OK"
    assert second == b""


def test_a_server_on_every_interface_announces_a_url_a_client_can_reach() -> None:
    # As in a container (docs/container.md): the banner and ready file name loopback, not
    # the unroutable 0.0.0.0.
    with running_server("--host", "0.0.0.0", scenarios=()) as server:
        first, _ = _after_a_pause(server.url, 0)
        printed = server.printed()
    assert server.url.startswith("http://127.0.0.1:")
    assert first == b"HTTP/1.1 200 OK"
    assert f"on {server.url}" in printed and "0.0.0.0" not in printed
