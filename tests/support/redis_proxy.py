"""A loopback TCP proxy in front of a real redis-server that can lose the store between two
commands of one request: it forwards a given number of state scripts (EVALSHA/EVAL other
than the request log's), then cuts every connection that sends another, until healed. What
a Redis lost at the worst moment looks like to mockllm (issue 24)."""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from mockllm.state.redis_log import _APPEND, _CLEAR, _TOUCHED

# The log's scripts pass through always: the test is of the state written for one answer.
LOG_SCRIPTS = {hashlib.sha1(s.encode()).hexdigest().encode() for s in (_APPEND, _CLEAR, _TOUCHED)}
LOG_TEXTS = (b"local base, limit, token", b"local base, since", b"local base, session")


def _commands(buffer: bytearray) -> Iterator[bytes]:
    """Complete RESP commands at the head of `buffer`, removed from it as they are taken."""
    while buffer:
        if buffer[:1] != b"*":  # an inline command (not sent by redis-py): one line
            end = buffer.find(b"\r\n")
            if end < 0:
                return
            yield bytes(buffer[: end + 2])
            del buffer[: end + 2]
            continue
        at = buffer.find(b"\r\n")
        if at < 0:
            return
        count, pos = int(buffer[1:at]), at + 2
        for _ in range(count):
            end = buffer.find(b"\r\n", pos)
            if end < 0:
                return
            size = int(buffer[pos + 1 : end])
            pos = end + 2 + size + 2
            if pos > len(buffer):
                return
        yield bytes(buffer[:pos])
        del buffer[:pos]


def _is_state_script(command: bytes) -> bool:
    head = command[:64].upper()
    if b"EVALSHA" in head:
        return not any(sha in command[:120] for sha in LOG_SCRIPTS)
    if b"\r\nEVAL\r\n" in head:
        return not any(text in command for text in LOG_TEXTS)
    return False


class Proxy:
    def __init__(self, redis_port: int) -> None:
        self.redis_port = redis_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.allowed: int | None = None  # state scripts still forwarded; None: all
        self.cut = 0  # connections cut so far
        self.hold_log = False  # hold back the replies to log writes (they ran: the reply waits)
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def fail_after(self, scripts: int) -> None:
        """Forward `scripts` more state scripts, then cut every connection sending one."""
        with self.lock:
            self.allowed = scripts

    def heal(self) -> None:
        with self.lock:
            self.allowed = None

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.redis_port))
            held = threading.Event()
            threading.Thread(target=self._up, args=(client, upstream, held), daemon=True).start()
            threading.Thread(target=self._down, args=(upstream, client, held), daemon=True).start()

    def _pass(self, command: bytes) -> bool:
        if not _is_state_script(command):
            return True
        with self.lock:
            if self.allowed is None:
                return True
            if self.allowed > 0:
                self.allowed -= 1
                return True
            self.cut += 1
            return False

    def _up(self, client: socket.socket, upstream: socket.socket, held: threading.Event) -> None:
        buffer = bytearray()
        try:
            while data := client.recv(65536):
                buffer += data
                for command in _commands(buffer):
                    if not self._pass(command):
                        raise OSError("cut")
                    is_eval = b"EVAL" in command[:40].upper()
                    if self.hold_log and is_eval and not _is_state_script(command):
                        held.set()
                    upstream.sendall(command)
        except OSError:
            pass
        finally:
            for s in (client, upstream):
                s.close()

    def _down(self, upstream: socket.socket, client: socket.socket, held: threading.Event) -> None:
        try:
            while data := upstream.recv(65536):
                while held.is_set() and self.hold_log:
                    time.sleep(0.02)
                client.sendall(data)
        except OSError:
            pass
        finally:
            for s in (client, upstream):
                s.close()

    def close(self) -> None:
        self.listener.close()


@contextmanager
def redis_proxy(redis_port: int) -> Iterator[Proxy]:
    proxy = Proxy(redis_port)
    try:
        yield proxy
    finally:
        proxy.close()
