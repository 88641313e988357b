"""tests/unit runs in-process only: a test that opens a socket or starts a process fails here,
so these stay fast and the end-to-end tests stay where the real servers are."""

from __future__ import annotations

import socket
import subprocess
from typing import NoReturn

import pytest


def _refuse(*args: object, **kwargs: object) -> NoReturn:
    raise AssertionError("tests/unit is in-process: no sockets, no subprocesses")


@pytest.fixture(autouse=True)
def _in_process_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "socket", _refuse)
    monkeypatch.setattr(subprocess, "Popen", _refuse)
