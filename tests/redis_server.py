"""A real `redis-server` for the shared-state tests: started on a free port in a temporary
folder, without persistence, and stopped afterwards. `make test` installs Debian's
redis-server (tests/ensure-debian.sh); where it cannot, the tests that need one skip loudly."""

from __future__ import annotations

import shutil
import socket
import subprocess
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
