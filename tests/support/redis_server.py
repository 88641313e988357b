"""A real `redis-server` for the shared-state tests: started on a free port in a temporary
folder, without persistence, and stopped afterwards. `make test` installs Debian's
redis-server (tests/ensure-debian.sh); where it cannot, the tests that need one skip loudly."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


class RedisServer:
    def __init__(self, process: subprocess.Popen[bytes], port: int, folder: Path) -> None:
        self.process, self.port, self.folder = process, port, folder

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def command(self, *args: str | int) -> Any:
        """One command on a connection of its own (decoded replies): what the tests inspect
        and provoke (DEBUG SLEEP, INFO) with."""
        import redis

        with redis.Redis(port=self.port, decode_responses=True) as client:
            return client.execute_command(*args)

    @contextmanager
    def asleep(self, seconds: float) -> Iterator[None]:
        """Redis blocked for `seconds` (DEBUG SLEEP on a connection of its own), entered once
        it has stopped answering, so what follows meets a sleeping store; left once it woke."""
        sleeper = threading.Thread(target=self.command, args=("DEBUG", "SLEEP", seconds))
        sleeper.start()
        deadline = time.monotonic() + 10
        # A bare socket: the redis client retries a timed-out command until it is answered.
        with socket.create_connection(("127.0.0.1", self.port), timeout=0.05) as probe:
            while True:
                assert time.monotonic() < deadline, "redis-server never went to sleep"
                probe.sendall(b"PING\r\n")
                try:
                    probe.recv(64)
                except TimeoutError:
                    break  # the PING waits unanswered: asleep
        try:
            yield
        finally:
            sleeper.join()

    def waiting(self) -> int:
        """How many connections to this server hold commands it has not read yet (the
        kernel's count, /proc/net/tcp): while it sleeps, each request that reached it."""
        port = f":{self.port:04X}"
        count = 0
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            unread = int(fields[4].split(":")[1], 16)
            count += fields[1].endswith(port) and fields[3] == "01" and unread > 0
        return count

    def until_waiting(self, count: int, seconds: float = 10) -> None:
        """Poll (with a deadline) until `count` connections wait on the sleeping server."""
        deadline = time.monotonic() + seconds
        while self.waiting() < count:
            assert time.monotonic() < deadline, f"fewer than {count} requests reached Redis"
            time.sleep(0.005)

    def stop(self) -> None:
        """Kill it at once, as a crash would: the tests of a lost store use this."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def start(self) -> None:
        """Start it again on the same port (empty: nothing is persisted)."""
        self.stop()
        self.process = _spawn(self.port, self.folder)
        _wait(self.port, self.process)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _spawn(port: int, folder: Path) -> subprocess.Popen[bytes]:
    command = [
        "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
        "--appendonly", "no", "--dir", str(folder), "--protected-mode", "yes",
        "--enable-debug-command", "local",  # DEBUG SLEEP: a slow Redis, on loopback only
    ]  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("redis-server did not answer PING within 10 s")


@contextmanager
def redis_server(folder: Path) -> Iterator[RedisServer]:
    """A fresh redis-server; skips (loudly, naming the fix) where none is installed."""
    if shutil.which("redis-server") is None:
        pytest.skip("NO redis-server: apt-get install redis-server (make test does, as root)")
    port = _free_port()
    server = RedisServer(_spawn(port, folder), port, folder)
    try:
        _wait(port, server.process)
        yield server
    finally:
        server.stop()
