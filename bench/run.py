"""The measurement phases: reference replies, cold starts, load rounds, memory.

Every phase is interleaved across servers (mockllm, floor, asgi, mockllm, …) so a
slow stretch of the machine hits every server alike. Each server process is fresh
per round; the harness and its load generators stay on the load core.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mockllm.options import DEFAULTS

from . import proc
from .floor_common import save_reply
from .load import LoadResult, Target, client_run, wrk_count, wrk_run
from .servers import (
    MOCKLLM,
    Answer,
    Context,
    Running,
    ServerDef,
    free_port,
    launch,
    post,
    stop,
    wait_answered,
)
from .workload import (
    DISTINCT,
    HISTORY_LENGTHS,
    STREAM,
    STREAM_EVENTS,
    TOOL,
    TOOL_CALL,
    Cold,
    cold_workloads,
    history_body,
    history_start,
    request_body,
)

# mockllm's default --log-limit: until the log holds this many entries, each request's
# entry adds to the RSS; after it, each new entry replaces the oldest.
LOG_LIMIT = DEFAULTS.log_limit

CONCURRENCY = (1, 32)


@dataclass(frozen=True)
class Settings:
    rounds: int
    seconds: float  # per load run (wrk rounds to whole seconds)
    ttfb_seconds: float  # per asyncio TTFB run
    warmup_seconds: float
    startups: int
    memory_requests: int
    use_wrk: bool
    cpus: tuple[int, int] | None  # (server core, load core), None: not pinned
    stream_sends: str
    workdir: Path
    loops: int = 30  # 10-turn loops per transport per round (bench/loops.py)
    mcp_calls: int = 300  # MCP calls, and model requests, per round (bench/loops.py)


# server name → metric key → one value per round (per cold start for startup)
Samples = dict[str, dict[str, list[float]]]


@dataclass
class Reference:
    """mockllm's replies, which the floors send verbatim, and the cold workloads."""

    bodies: Path
    tool_call: bytes
    stream: bytes
    cold: list[Cold]


_STARTED = time.perf_counter()


def progress(text: str) -> None:
    elapsed = time.perf_counter() - _STARTED
    print(f"bench [{elapsed:5.1f} s] {text}", file=sys.stderr, flush=True)


@contextmanager
def started(server: ServerDef, settings: Settings, bodies: Path) -> Iterator[Running]:
    ctx = Context(free_port(), bodies, settings.stream_sends)
    cpu = settings.cpus[0] if settings.cpus else None
    running = launch(server, ctx, cpu, settings.workdir / f"{server.name}.log")
    try:
        yield running
    finally:
        stop(running)


# --- reference -----------------------------------------------------------------------------------


def fetch_reference(settings: Settings) -> Reference:
    """Ask mockllm once for both replies; check the stream really has 50 frames."""
    bodies = settings.workdir / "bodies"
    bodies.mkdir(exist_ok=True)
    with started(MOCKLLM, settings, bodies) as running:
        wait_answered(running)
        replies = {}
        for kind, scenario, stream in (("tool-call", TOOL_CALL, False), ("stream", STREAM, True)):
            answer = post(running.port, running.path(scenario), request_body(stream))
            if answer.status != 200:
                raise RuntimeError(f"mockllm answered {answer.status}: {answer.body[:500]!r}")
            save_reply(bodies, kind, answer.headers, answer.body)
            replies[kind] = answer.body
        cold = [*cold_workloads(), *_histories(running)]
        for workload in cold:  # the floors answer a cold row with its first request's reply
            answer = post(running.port, workload.path, _first(workload.body))
            if answer.status != 200:
                raise RuntimeError(f"{workload.key}: mockllm answered {answer.status}")
            save_reply(bodies, workload.key, answer.headers, answer.body)
    frames = data_frames(replies["stream"])
    if frames != STREAM_EVENTS:
        raise RuntimeError(
            f"bench-stream streams {frames} data: frames, not {STREAM_EVENTS}; "
            "adjust the text length in bench/scenarios/bench-stream.yaml"
        )
    return Reference(bodies, replies["tool-call"], replies["stream"], cold)


def _histories(running: Running) -> list[Cold]:
    """Agent-loop requests of each length in HISTORY_LENGTHS, from a real loop: ask, get
    the call, answer it, resend — as an SDK-driven harness does."""
    path, messages, found = running.path(TOOL_CALL), history_start(), []
    while len(messages) <= max(HISTORY_LENGTHS):
        body = history_body(messages)
        if len(messages) in HISTORY_LENGTHS:
            label = f"history of {len(messages)} messages"
            found.append(Cold(f"hist_{len(messages)}", label, path, body))
        answer = post(running.port, path, _first(body))
        if answer.status != 200:
            raise RuntimeError(f"history of {len(messages)}: mockllm answered {answer.status}")
        reply = json.loads(answer.body)["choices"][0]["message"]
        call = reply["tool_calls"][0]
        result = {"role": "tool", "tool_call_id": call["id"], "content": "18 °C and sunny"}
        messages = [*messages, {k: v for k, v in reply.items() if v is not None}, result]
    return found


def _first(body: bytes) -> bytes:
    return body.replace(DISTINCT.encode(), b"0")


def data_frames(stream: bytes) -> int:
    """SSE `data:` frames in a stream's body."""
    return sum(1 for line in stream.split(b"\n") if line.startswith(b"data:"))


def target(running: Running, scenario: str, body: bytes, kind: str | None = None) -> Target:
    """A load target on `running` for `scenario`: its path and the headers it needs."""
    extra = tuple(running.headers(scenario).items())
    return Target(running.port, running.path(scenario), body, kind, extra)


# --- cold starts -------------------------------------------------------------------------------


def measure_startups(servers: list[ServerDef], settings: Settings, ref: Reference) -> Samples:
    samples: Samples = {s.name: {"startup_ms": []} for s in servers}
    for i in range(settings.startups):
        for server in servers:
            with started(server, settings, ref.bodies) as running:
                seconds = wait_answered(running)
            samples[server.name]["startup_ms"].append(seconds * 1e3)
        progress(f"cold start {i + 1}/{settings.startups} done")
    return samples


# --- load rounds ----------------------------------------------------------------------------------


def measure_rounds(servers: list[ServerDef], settings: Settings, ref: Reference) -> Samples:
    samples: Samples = {s.name: {} for s in servers}
    for r in range(settings.rounds):
        for server in servers:
            progress(f"round {r + 1}/{settings.rounds}: {server.name}")
            with started(server, settings, ref.bodies) as running:
                figures = one_round(running, settings, ref)
            for key, value in figures.items():
                samples[server.name].setdefault(key, []).append(value)
    return samples


def one_round(running: Running, settings: Settings, ref: Reference) -> dict[str, float]:
    wait_answered(running)
    check_replies(running, ref)
    figures = {"rss_idle_mb": proc.rss_mb(running.pid)}
    plain = target(running, TOOL_CALL, request_body(stream=False))
    stream = target(running, STREAM, request_body(stream=True))
    if settings.warmup_seconds:  # steady state first
        _load(running, plain, 32, settings, settings.warmup_seconds)
    for c in CONCURRENCY:
        result, cpu = measured(running, plain, c, settings)
        figures |= _figures(f"ns_c{c}", result, cpu)
    for c in CONCURRENCY:
        result, cpu = measured(running, stream, c, settings)
        figures |= _figures(f"st_c{c}", result, cpu)
        # wrk cannot see the first byte: first byte and full time come from one asyncio run,
        # so the pair is consistent (the same client's overhead is in both).
        probe = result
        if settings.use_wrk:
            probe = client_run(stream, c, seconds=settings.ttfb_seconds)
            _note_errors(running, probe)
        figures[f"st_c{c}_ttfb_us"] = _or_nan(probe.ttfb_p50_us)
        figures[f"st_c{c}_full_us"] = probe.p50_us
    return figures


def check_replies(running: Running, ref: Reference) -> None:
    """Same request, same bytes: a floor (or mockllm) that drifted would void the ratios.
    A peer sends its own bytes, but the same work: checked by `peer_drift`."""
    expected_replies = ((TOOL_CALL, False, ref.tool_call), (STREAM, True, ref.stream))
    for scenario, stream, expected in expected_replies:
        headers = running.headers(scenario)
        answer = post(running.port, running.path(scenario), request_body(stream), headers)
        name = running.server.name
        if running.server.role in ("peer", "baseline"):  # another tree's ids may differ
            drift = peer_drift(answer, stream)
            if drift:
                raise RuntimeError(f"{name} does not answer {scenario} as mockllm does: {drift}")
        elif answer.status != 200 or answer.body != expected:
            raise RuntimeError(
                f"{name} does not answer {scenario} with mockllm's bytes "
                f"(status {answer.status}, {len(answer.body)} vs {len(expected)} bytes)"
            )


def peer_drift(answer: Answer, stream: bool) -> str | None:
    """How a peer's reply differs in kind from mockllm's (None: it does not): a 200 with
    one `get_weather` call, or a stream of exactly STREAM_EVENTS `data:` frames."""
    if answer.status != 200:
        return f"status {answer.status}: {answer.body[:300]!r}"
    if stream:
        frames = data_frames(answer.body)
        return None if frames == STREAM_EVENTS else f"{frames} data: frames, not {STREAM_EVENTS}"
    try:
        calls = json.loads(answer.body)["choices"][0]["message"]["tool_calls"]
        names = [call["function"]["name"] for call in calls]
    except (ValueError, LookupError, TypeError):
        return f"not a Chat Completions tool call: {answer.body[:300]!r}"
    return None if names == [TOOL] else f"calls {names}, not [{TOOL!r}]"


def measured(
    running: Running, target: Target, connections: int, settings: Settings
) -> tuple[LoadResult, float]:
    """One load run and the server's CPU µs per completed request during it."""
    before = proc.cpu_reading(running.pid)
    result = _load(running, target, connections, settings, settings.seconds)
    spent = proc.cpu_since(running.pid, before)
    return result, spent * 1e6 / result.requests if result.requests else math.nan


def _load(
    running: Running, target: Target, connections: int, settings: Settings, seconds: float
) -> LoadResult:
    if settings.use_wrk:
        result = wrk_run(target, connections, seconds, settings.workdir)
    else:
        result = client_run(target, connections, seconds=seconds)
    _note_errors(running, result)
    return result


def _figures(prefix: str, result: LoadResult, cpu_us: float) -> dict[str, float]:
    return {
        f"{prefix}_rps": result.rate,
        f"{prefix}_p50_us": result.p50_us,
        f"{prefix}_p99_us": result.p99_us,
        f"{prefix}_max_us": result.max_us,
        f"{prefix}_cpu_us": cpu_us,
    }


def _note_errors(running: Running, result: LoadResult) -> None:
    if result.errors:
        progress(
            f"warning: {running.server.name}: {result.errors} failed requests "
            f"at c={result.connections} ({result.tool})"
        )


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value


# --- cold rounds: distinct bodies ---------------------------------------------------------


def measure_cold(servers: list[ServerDef], settings: Settings, ref: Reference) -> Samples:
    """Every request distinct, with mockllm's log already full (as after a test suite)."""
    samples: Samples = {s.name: {} for s in servers if s.role != "peer"}
    for r in range(settings.rounds):
        for server in servers:
            if server.role == "peer":
                continue  # a peer's replies differ; cold rows compare mockllm with its floors
            progress(f"cold round {r + 1}/{settings.rounds}: {server.name}")
            with started(server, settings, ref.bodies) as running:
                wait_answered(running)
                figures = _cold_round(running, settings, ref)
            for key, value in figures.items():
                samples[server.name].setdefault(key, []).append(value)
    return samples


def _cold_round(running: Running, settings: Settings, ref: Reference) -> dict[str, float]:
    cold = ref.cold
    if running.server.role == "baseline":  # its own histories: another tree's call ids may
        own = {w.key: w for w in _histories(running)}  # differ, and it would refuse ours
        cold = [own.get(w.key, w) for w in cold]
    targets = {w.key: Target(running.port, w.path, w.body, w.key) for w in cold}
    if settings.warmup_seconds:  # fill the log ring (10 000 entries by default) first
        counted(running, targets["cold_ns"], settings, FULL_LOG)
    figures: dict[str, float] = {}
    result, _ = measured(running, targets["cold_ns"], 1, settings)
    figures["cold_ns_c1_p50_us"], figures["cold_ns_c1_p99_us"] = result.p50_us, result.p99_us
    for key, target in targets.items():
        result, cpu = measured(running, target, 32, settings)
        figures[f"{key}_c32_cpu_us"], figures[f"{key}_c32_p99_us"] = cpu, result.p99_us
    return figures


FULL_LOG = 10_000


def counted(running: Running, target: Target, settings: Settings, n: int) -> LoadResult:
    if settings.use_wrk:
        result = wrk_count(target, 32, n, settings.workdir)
    else:
        result = client_run(target, 32, count=n)
    _note_errors(running, result)
    return result


# --- memory ---------------------------------------------------------------------------------------


def measure_memory(servers: list[ServerDef], settings: Settings, ref: Reference) -> Samples:
    """RSS of a fresh server before and after `memory_requests` distinct logged requests,
    and how much it grew per request while mockllm's log filled (its first LOG_LIMIT)."""
    samples: Samples = {}
    for server in servers:
        progress(f"memory: {settings.memory_requests} requests to {server.name}")
        with started(server, settings, ref.bodies) as running:
            wait_answered(running)
            idle = proc.rss_mb(running.pid)
            cold_ns = next(w for w in ref.cold if w.key == "cold_ns")
            # cold_ns is bench-tool-call made distinct: at the server's own path for it
            distinct = target(running, TOOL_CALL, cold_ns.body, cold_ns.key)
            filling = min(settings.memory_requests, LOG_LIMIT)
            done = counted(running, distinct, settings, filling).requests
            full = proc.rss_mb(running.pid)
            if settings.memory_requests > filling:
                counted(running, distinct, settings, settings.memory_requests - filling)
            after = proc.rss_mb(running.pid)
        samples[server.name] = {
            "rss_before_load_mb": [idle],
            "rss_after_mb": [after],
            "rss_per_request_b": [(full - idle) * 2**20 / max(done, 1)],
        }
    return samples


def merge(*parts: Samples) -> Samples:
    merged: Samples = {}
    for part in parts:
        for server, metrics in part.items():
            merged.setdefault(server, {}).update(metrics)
    return merged
