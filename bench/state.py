"""The shared-state rows (docs/scale.md): what `--state redis://` costs one process, and
what `--workers 2` on it gives on this machine.

The bench starts its own redis-server (no persistence, on a free port, on the server
core); without one on PATH these rows are skipped and the table says so. Every variant
answers `bench-tool-call` with the very bytes of the main run, so the rows compare the
same work. Each request counts an attempt, so on Redis every one is a round trip.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from . import proc
from .load import Target
from .run import Reference, Samples, Settings, check_replies, measured, progress
from .servers import (
    HOST,
    Context,
    Running,
    ServerDef,
    free_port,
    launch,
    mockllm_command,
    stop,
    wait_answered,
)
from .workload import TOOL_CALL, request_body


@dataclass(frozen=True)
class Variant:
    name: str
    about: str
    workers: int
    shared: bool


VARIANTS = (
    Variant("memory", "1 process, --state memory (the default)", 1, False),
    Variant("redis", "1 process, --state redis://", 1, True),
    Variant("redis_2w", "--workers 2, --state redis://", 2, True),
)


def redis_missing() -> str | None:
    found = shutil.which("redis-server")
    return None if found else "no redis-server on PATH (apt-get install redis-server)"


def measure_state(settings: Settings, ref: Reference) -> Samples:
    samples: Samples = {v.name: {} for v in VARIANTS}
    with _redis(settings) as (redis, url):
        for r in range(settings.rounds):
            for variant in VARIANTS:
                progress(f"shared state round {r + 1}/{settings.rounds}: {variant.name}")
                with _started(variant, url, settings, ref, r) as running:
                    figures = _round(running, redis, settings, ref)
                for key, value in figures.items():
                    samples[variant.name].setdefault(key, []).append(value)
    return samples


def _round(
    running: Running, redis: subprocess.Popen[bytes], settings: Settings, ref: Reference
) -> dict[str, float]:
    wait_answered(running)
    check_replies(running, ref)  # the same bytes as the main run's mockllm
    plain = Target(running.port, running.path(TOOL_CALL), request_body(stream=False))
    if settings.warmup_seconds:
        measured(running, plain, 32, settings)
    figures: dict[str, float] = {}
    for c in (1, 32):
        store_before = proc.cpu_seconds(redis.pid)
        result, cpu = measured(running, plain, c, settings)
        store = proc.cpu_seconds(redis.pid) - store_before
        figures[f"c{c}_rps"], figures[f"c{c}_p50_us"] = result.rate, result.p50_us
        figures[f"c{c}_cpu_us"] = cpu
        figures[f"c{c}_redis_cpu_us"] = store * 1e6 / result.requests if result.requests else 0
    return figures


@contextmanager
def _started(
    variant: Variant, url: str, settings: Settings, ref: Reference, round_: int
) -> Iterator[Running]:
    extra = ["--quiet", "--workers", str(variant.workers)]
    # A store of its own per round: the attempts an earlier round counted on this Redis
    # would make these first requests retries, with fresh ids (docs/scenarios.md).
    prefix = f"bench-{variant.name}-{round_}"
    extra += ["--state", url, "--state-prefix", prefix] if variant.shared else []
    taskset: list[str] = []
    if settings.cpus:  # one worker on the server core; two get both cores (shared with load)
        cores = ",".join(map(str, settings.cpus)) if variant.workers > 1 else str(settings.cpus[0])
        taskset = ["taskset", "-c", cores]

    def command(ctx: Context) -> list[str]:
        return [*taskset, *mockllm_command(ctx), *extra]

    server = ServerDef(f"mockllm {variant.name}", "subject", variant.about, command)
    running = launch(server, Context(free_port(), ref.bodies, settings.stream_sends), None,
                     settings.workdir / f"state-{variant.name}.log")  # fmt: skip
    try:
        yield running
    finally:
        stop(running)


@contextmanager
def _redis(settings: Settings) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    argv = ["redis-server", "--port", str(port), "--bind", HOST, "--save", "", "--appendonly"]
    argv += ["no", "--dir", str(settings.workdir)]
    if settings.cpus:
        argv = ["taskset", "-c", str(settings.cpus[0]), *argv]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection((HOST, port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("bench: redis-server did not start") from None
                time.sleep(0.02)
        yield process, f"redis://{HOST}:{port}/0"
    finally:
        process.kill()
        process.wait()
