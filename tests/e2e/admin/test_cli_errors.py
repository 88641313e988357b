"""`mockllm serve` stopped by a bad --log, a busy port or Ctrl-C: one line saying what to do,
the right exit status, no traceback."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import running_server


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mockllm", "serve", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("folder", "Is a directory"),
        ("missing/log.jsonl", "No such file or directory"),
        ("/proc/version", ""),
    ],
)
def test_a_bad_log_path_is_one_line(tmp_path: Path, where: str, reason: str) -> None:
    path = (
        str(tmp_path)
        if where == "folder"
        else where
        if where.startswith("/")
        else str(tmp_path / where)
    )
    result = serve("--port", "0", "--log", path)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"mockllm: cannot write the log to {path!r}: {reason}")
    assert line.endswith("give --log a file in an existing folder you can write to")


def test_a_busy_port_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve("--port", str(port))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"mockllm: cannot listen on 127.0.0.1:{port}: Address already in use; stop what is "
        "using it, or pick another --port (0 picks a free one)"
    ]


def test_ctrl_c_stops_with_one_line_and_status_130() -> None:
    # A process started with SIGINT ignored keeps it ignored (a shell's background job, and
    # an xdist worker after some test left it so: seen in `make test`): uvicorn then stops
    # gracefully on it and the server exits 0. Ctrl-C from a terminal is what is tested here.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with running_server(scenarios=()) as server:
            server.process.send_signal(signal.SIGINT)
            server.process.wait(timeout=20)
            code = server.process.returncode
            out = server.console.read_text()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert code == 130, out
    assert "Traceback" not in out
    assert out.rstrip().splitlines()[-1] == "mockllm: stopped (Ctrl-C)"
