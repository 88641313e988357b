"""tests/unit runs in-process only: a test that opens a socket or starts a process fails here,
so these stay fast and the end-to-end tests stay where the real servers are."""

from __future__ import annotations

import socket
import subprocess
from typing import NoReturn

import pytest


def _refuse(*args: object, **kwargs: object) -> NoReturn:
    raise AssertionError("tests/unit is in-process: no sockets, no subprocesses")


_socket = socket.socket


def _wrapped_only(
    family: int = -1, type: int = -1, proto: int = -1, fileno: int | None = None
) -> socket.socket:
    """An event loop's wake-up pair (socket.socketpair wraps two descriptors it made) is no
    network: only a socket made from nothing is refused."""
    if fileno is None:
        _refuse()
    return _socket(family, type, proto, fileno)


@pytest.fixture(autouse=True)
def _in_process_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "socket", _wrapped_only)
    monkeypatch.setattr(subprocess, "Popen", _refuse)
