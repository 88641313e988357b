"""The servers under test, and how to start, probe and stop one.

`SERVERS` is the extension point: every entry is measured with the same workload,
interleaved round by round, and gets a column in the table. To add a peer (another
mock server), append a `ServerDef` with role "peer" — see bench/README.md.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .workload import TOOL_CALL, mockllm_path, request_body

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "bench" / "scenarios"
HOST = "127.0.0.1"

# --- server definitions -------------------------------------------------------------------


@dataclass(frozen=True)
class Context:
    """What a server's command line may need."""

    port: int
    bodies: Path  # reference replies fetched from mockllm (see bench/floor_common.py)
    stream_sends: str  # how the floors send the stream: "event" (one send per frame) or "one"


@dataclass(frozen=True)
class ServerDef:
    name: str
    # subject: this tree's mockllm; baseline: another tree's (`--against`, bench/against.py)
    role: Literal["subject", "baseline", "floor", "peer"]
    about: str  # one line for the table's legend
    command: Callable[[Context], list[str]]
    path: Callable[[str], str] = mockllm_path  # scenario name → request path
    # scenario name → extra request headers (a peer that picks its fixture by header)
    headers: Callable[[str], dict[str, str]] = lambda scenario: {}
    missing: Callable[[], str | None] = lambda: None  # why it cannot run here, or None
    cold_only: bool = False  # measured in the cold phase only (distinct bodies, histories)


def mockllm_command(ctx: Context) -> list[str]:
    script = Path(sys.executable).with_name("mockllm")  # the console script users run
    launcher = [str(script)] if script.exists() else [sys.executable, "-m", "mockllm"]
    where = ["--host", HOST, "--port", str(ctx.port), "--scenarios", str(SCENARIOS)]
    return [*launcher, "serve", *where]


def _floor_command(module: str, *flags: str) -> Callable[[Context], list[str]]:
    def command(ctx: Context) -> list[str]:
        return [
            sys.executable,
            "-m",
            module,
            "--port",
            str(ctx.port),
            "--bodies",
            str(ctx.bodies),
            "--stream-sends",
            ctx.stream_sends,
            *flags,
        ]

    return command


MOCKLLM = ServerDef(
    "mockllm",
    "subject",
    "mockllm serve (uvicorn, httptools, uvloop)",
    mockllm_command,
)
STARLETTE_FLOOR = ServerDef(
    "starlette",
    "floor",
    "bare starlette app sending mockllm's bytes (the floor targets refer to)",
    _floor_command("bench.floor_starlette"),
)
ASGI_FLOOR = ServerDef(
    "asgi",
    "floor",
    "raw ASGI app on uvicorn sending mockllm's bytes (second reference)",
    _floor_command("bench.floor_asgi"),
)
# What any server that reads the request must do: only the cold rows, where the body
# differs each time and its size grows with the history, show what parsing it costs.
PARSE_FLOOR = ServerDef(
    "starlette_json",
    "floor",
    "the starlette floor plus json.loads(await request.body()): the parse floor (cold rows)",
    _floor_command("bench.floor_starlette", "--parse"),
    cold_only=True,
)

# --- peers: other mock servers, on the warm workload (bench/README.md, "Adding a peer") ---

AIMOCK_DIR = ROOT / "bench" / "peers" / "aimock"
AIMOCK_BIN = AIMOCK_DIR / "node_modules" / ".bin" / "aimock"


def _aimock_version() -> str:
    """The exact version bench/peers/aimock/package.json pins (its lockfile agrees)."""
    manifest = json.loads((AIMOCK_DIR / "package.json").read_text())
    version: str = manifest["dependencies"]["@copilotkit/aimock"]
    return version


def aimock_command(ctx: Context) -> list[str]:
    # aimock.json names its fixture folder relative to the working directory, ROOT (launch).
    config = AIMOCK_DIR / "aimock.json"
    where = ["--host", HOST, "--port", str(ctx.port)]
    return ["node", str(AIMOCK_BIN), "--config", str(config), *where]


def aimock_missing() -> str | None:
    if not shutil.which("node"):
        return "node not on PATH"
    if not AIMOCK_BIN.exists():
        return f"not installed: run `npm ci` in {AIMOCK_DIR.relative_to(ROOT)} (`make bench` does)"
    return None


AIMOCK = ServerDef(
    "aimock",
    "peer",
    f"aimock {_aimock_version()} (npm, Node), fixtures in bench/peers/aimock/ (a peer: its own "
    "bytes, warm rows only)",
    aimock_command,
    # Every OpenAI request goes to one route: aimock picks a fixture by the request's
    # X-AIMock-Context header, where mockllm picks a scenario by the /s/{name}/ path.
    path=lambda scenario: "/v1/chat/completions",
    headers=lambda scenario: {"X-AIMock-Context": scenario},
    missing=aimock_missing,
)

# Order matters: the first entry is the subject, the first floor is "the floor" the
# targets refer to. Peers go last.
SERVERS: list[ServerDef] = [MOCKLLM, STARLETTE_FLOOR, ASGI_FLOOR, PARSE_FLOOR, AIMOCK]


def selected(names: list[str] | None) -> list[ServerDef]:
    if not names:
        return list(SERVERS)
    known = {s.name: s for s in SERVERS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"bench: unknown server(s) {unknown}; known: {list(known)}")
    return [known[n] for n in names]


# --- running one ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Running:
    server: ServerDef
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    started_at: float  # perf_counter() just before spawning

    @property
    def pid(self) -> int:
        return self.process.pid

    def path(self, scenario: str) -> str:
        return self.server.path(scenario)

    def headers(self, scenario: str) -> dict[str, str]:
        return self.server.headers(scenario)


def launch(server: ServerDef, ctx: Context, cpu: int | None, log: Path) -> Running:
    """Spawn the server (pinned to `cpu` through taskset, which execs: same pid)."""
    argv = server.command(ctx)
    if cpu is not None:
        argv = ["taskset", "-c", str(cpu), *argv]
    with log.open("ab") as out:
        started = time.perf_counter()
        process = subprocess.Popen(
            argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    return Running(server, process, ctx.port, log, started)


def stop(running: Running) -> None:
    """SIGTERM the server's process group (it has its own session), SIGKILL if it lingers."""
    if running.process.poll() is None:
        with suppress(ProcessLookupError):
            os.killpg(running.process.pid, signal.SIGTERM)
        try:
            running.process.wait(5)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(running.process.pid, signal.SIGKILL)
            running.process.wait()


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def post(
    port: int, path: str, body: bytes, headers: dict[str, str] | None = None, timeout: float = 10
) -> Answer:
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("POST", path, body, {"content-type": "application/json", **(headers or {})})
        response = conn.getresponse()
        data = response.read()  # http.client undoes chunked framing
        got = {k.lower(): v for k, v in response.getheaders()}
        return Answer(response.status, got, data)
    finally:
        conn.close()


def wait_answered(running: Running, timeout: float = 30) -> float:
    """Poll until a model request is answered 200; seconds since spawn."""
    path, headers, body = running.path(TOOL_CALL), running.headers(TOOL_CALL), request_body(False)
    deadline = running.started_at + timeout
    while time.perf_counter() < deadline:
        if running.process.poll() is not None:
            raise RuntimeError(f"{running.server.name} exited early:\n{tail(running.log)}")
        try:
            answer = post(running.port, path, body, headers)
        except OSError:  # not listening yet (refused) or reset while starting
            time.sleep(0.0005)
            continue
        if answer.status != 200:
            raise RuntimeError(
                f"{running.server.name} answered {answer.status}: {answer.body[:500]!r}"
            )
        return time.perf_counter() - running.started_at
    name = running.server.name
    raise RuntimeError(f"{name} not answering after {timeout} s:\n{tail(running.log)}")


def tail(log: Path, lines: int = 20) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
