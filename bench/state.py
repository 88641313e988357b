"""The shared-state rows (docs/scale.md): what `--state redis://` costs one process, and
what `--workers 2` on it gives on this machine.

The bench starts its own redis-server (no persistence, on a free port, on the server
core); without one on PATH these rows are skipped and the table says so. Every variant
answers `bench-tool-call` with the very bytes of the main run, so the rows compare the
same work. Each request counts an attempt, so on Redis every one is a round trip.

The goal (issue 36) is mockllm's CPU per request on Redis within 2x memory's plus the round
trip; "the round trip" is measured in the same run (`round_trip`): a process of its own,
on the server core, sends a bare PING over mockllm's own pipelined connection to the same
redis-server (state/redis_line.py) from 1 and from 32 concurrent callers, and its CPU per
command is what the client side of one round trip costs at that concurrency.
"""

from __future__ import annotations

import asyncio
import json
import resource
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from . import proc
from .load import Target
from .run import Reference, Samples, Settings, check_replies, measured, progress
from .servers import (
    HOST,
    ROOT,
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
ROUND_TRIP = "round_trip"  # the samples' name for the bare round trip's figures


def redis_missing() -> str | None:
    found = shutil.which("redis-server")
    return None if found else "no redis-server on PATH (apt-get install redis-server)"


def measure_state(settings: Settings, ref: Reference) -> Samples:
    samples: Samples = {v.name: {} for v in VARIANTS}
    samples[ROUND_TRIP] = {}
    with _redis(settings) as (redis, url):
        for r in range(settings.rounds):
            for variant in VARIANTS:
                progress(f"shared state round {r + 1}/{settings.rounds}: {variant.name}")
                with _started(variant, url, settings, ref, r) as running:
                    figures = _round(running, redis, settings, ref)
                for key, value in figures.items():
                    samples[variant.name].setdefault(key, []).append(value)
            progress(f"shared state round {r + 1}/{settings.rounds}: {ROUND_TRIP}")
            for key, value in round_trip(url, settings).items():
                samples[ROUND_TRIP].setdefault(key, []).append(value)
    return samples


def round_trip(url: str, settings: Settings) -> dict[str, float]:
    """The client CPU of one bare round trip (`python -m bench.state`), pinned where the
    server runs: {c1_cpu_us, c32_cpu_us} (µs per PING)."""
    taskset = ["taskset", "-c", str(settings.cpus[0])] if settings.cpus else []
    argv = [*taskset, sys.executable, "-m", "bench.state", url, str(settings.seconds)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _pings(url: str, seconds: float) -> dict[str, float]:
    """PINGs over mockllm's pipelined connection, from 1 then 32 concurrent callers, for
    `seconds` each: this process's CPU µs per PING."""
    from mockllm.state import connect
    from mockllm.state.redis_line import Line

    client = connect(url)
    line = Line(client)
    figures: dict[str, float] = {}
    try:
        for _ in range(200):  # connected, and the interpreter warm
            await line.call("PING")
        for callers in (1, 32):
            done = [0]
            stop_at = time.monotonic() + seconds

            async def caller(done: list[int] = done, stop_at: float = stop_at) -> None:
                while time.monotonic() < stop_at:
                    await line.call("PING")
                    done[0] += 1

            before = _cpu()
            await asyncio.gather(*(caller() for _ in range(callers)))
            figures[f"c{callers}_cpu_us"] = (_cpu() - before) * 1e6 / max(done[0], 1)
    finally:
        await line.aclose()
        await client.aclose()
    return figures


def _main(argv: list[str]) -> None:
    """`python -m bench.state URL SECONDS`: the round trip's figures as JSON on stdout."""
    try:  # the loop `mockllm serve` runs on
        import uvloop

        run = uvloop.run
    except ImportError:
        run = asyncio.run
    print(json.dumps(run(_pings(argv[0], float(argv[1])))))


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
        store_before = proc.cpu_reading(redis.pid)
        result, cpu = measured(running, plain, c, settings)
        store = proc.cpu_since(redis.pid, store_before)
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


if __name__ == "__main__":
    _main(sys.argv[1:])
