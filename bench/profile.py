"""Profile mockllm's cold path in-process: the ASGI app driven directly, no sockets.

    .venv/bin/python -m bench.profile                  # every workload, top 25 by tottime
    .venv/bin/python -m bench.profile --only hist_200 --sort cumulative --top 40
    make bench-profile ARGS="--only cold_responses"
    make bench-profile ARGS=--memory       # bytes kept per log entry, and by which lines

Each workload of `make bench`'s cold phase (bench/workload.py) is sent `--requests` times
with a distinct body each time (the counter replaces `DISTINCT`), after `--fill` distinct
requests have filled the log, as the bench does. Prints the µs per request of each
workload (CPU time under no profiler, the best of five slices: the figure to compare
between commits on a busy machine), then the
profile of all workloads together (or of `--only` one). Only the app's own work shows:
no HTTP parsing, no event loop I/O — what the bench's floors do not do either.

`--memory` instead fills the log (default `--log-limit`, 10,000 entries) with distinct
tool-call requests under tracemalloc, and prints the bytes the second half of them kept
per request — the log entry, as every cache is full by then — and the source lines that
allocated them.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import linecache
import os
import pstats
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import phases
from bench.workload import (
    DISTINCT,
    HISTORY_LENGTHS,
    TOOL_CALL,
    Cold,
    cold_workloads,
    history_body,
    history_start,
    mockllm_path,
)
from mockllm.loading.loader import load_paths
from mockllm.options import DEFAULTS
from mockllm.serving.app import MockLLM
from mockllm.serving.server import build_app

SCENARIOS = Path(__file__).parent / "scenarios"


async def post(app: MockLLM, path: str, body: bytes) -> tuple[int, bytes]:
    """One request through the ASGI app, as uvicorn would hand it over."""
    scope: dict[str, Any] = {
        "type": "http",
        "method": "POST",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8000),
    }
    sent: list[bytes] = []
    status = 0
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if delivered:
            await asyncio.sleep(3600)  # the client never disconnects
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        else:
            sent.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(sent)


async def histories(app: MockLLM) -> list[Cold]:
    """Agent-loop requests of each length in HISTORY_LENGTHS, captured from a real loop
    (as bench/run.py does against the running server)."""
    path, messages, found = mockllm_path(TOOL_CALL), history_start(), []
    while len(messages) <= max(HISTORY_LENGTHS):
        body = history_body(messages)
        if len(messages) in HISTORY_LENGTHS:
            found.append(Cold(f"hist_{len(messages)}", "", path, body))
        status, answer = await post(app, path, body.replace(DISTINCT.encode(), b"0"))
        assert status == 200, answer
        reply = json.loads(answer)["choices"][0]["message"]
        call = reply["tool_calls"][0]
        result = {"role": "tool", "tool_call_id": call["id"], "content": "18 °C and sunny"}
        messages = [*messages, {k: v for k, v in reply.items() if v is not None}, result]
    return found


def distinct(workload: Cold, counter: Iterator[int]) -> Iterator[bytes]:
    while True:
        yield workload.body.replace(DISTINCT.encode(), str(next(counter)).encode())


async def run(args: argparse.Namespace) -> None:
    app = build_app(load_paths([args.scenarios]))
    workloads = [*cold_workloads(), *(await histories(app))]
    if args.only:
        workloads = [w for w in workloads if w.key in args.only.split(",")]
    counter = iter(range(1, 1 << 62))
    fill = distinct(cold_workloads()[0], counter)
    for _ in range(args.fill):
        await post(app, mockllm_path(TOOL_CALL), next(fill))
    bodies = {w.key: [next(distinct(w, counter)) for _ in range(args.requests)] for w in workloads}
    for w in workloads:  # unprofiled: the per-request figure, the best of 5 slices
        timed, best = bodies[w.key][: args.requests // 2], float("inf")
        for k in range(5):
            start = time.process_time()
            for body in timed[k::5]:
                status, answer = await post(app, w.path, body)
                assert status == 200, answer[:300]
            best = min(best, (time.process_time() - start) / len(timed[k::5]))
        print(f"{w.key:16} {best * 1e6:8.1f} µs CPU/request (in-process, unprofiled, best of 5)")
    await by_phase(app, workloads, counter, args.requests // 2)
    profiler = cProfile.Profile()
    profiler.enable()
    for w in workloads:
        for body in bodies[w.key][args.requests // 2 :]:
            await post(app, w.path, body)
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.strip_dirs().sort_stats(args.sort).print_stats(args.top)


async def by_phase(app: MockLLM, workloads: list[Cold], counter: Iterator[int], n: int) -> None:
    """The same workloads, fresh bodies, each phase of the exchange timed (bench/phases.py):
    µs per request, each phase's best of 5 slices."""
    clock = phases.Clock()
    print("\nby phase (own µs per request, wall clock, best of 5 slices; bench/phases.py):")
    with phases.instrumented(clock) as missing:
        for w in workloads:
            sent = [next(distinct(w, counter)) for _ in range(n)]
            best = dict.fromkeys(phases.ORDER, float("inf"))
            for k in range(5):
                clock.reset()
                for body in sent[k::5]:
                    await post(app, w.path, body)
                clock.leave()  # "other" up to now
                for phase, spent in clock.spent.items():
                    best[phase] = min(best[phase], spent / len(sent[k::5]))
            print(phases.line(w.key, best))
    if missing:
        print(f"(no function of {', '.join(sorted(set(missing)))} in this tree: timed as callers)")
    print()


async def memory(args: argparse.Namespace) -> None:
    """Bytes kept per logged request once the caches are full: the log entry's share."""
    options = DEFAULTS
    app = build_app(load_paths([args.scenarios]), options)
    workload = cold_workloads()[0]
    bodies = distinct(workload, iter(range(1, 1 << 62)))
    half = options.log_limit // 2  # over the 4,096 bodies the request cache remembers
    tracemalloc.start()
    for _ in range(half):
        await post(app, workload.path, next(bodies))
    gc.collect()
    before = tracemalloc.take_snapshot()
    for _ in range(half):
        await post(app, workload.path, next(bodies))
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    stats = after.compare_to(before, "lineno")
    kept = sum(stat.size_diff for stat in stats)
    print(f"{kept / half:,.0f} bytes kept per logged request ({half:,} distinct requests,")
    print(f"log of {options.log_limit:,} entries, request body {len(next(bodies))} bytes)")
    print("\nbytes/request  blocks/request  allocated at")
    for stat in stats[: args.top]:
        if stat.size_diff <= 0:
            break
        frame = stat.traceback[0]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        line = linecache.getline(frame.filename, frame.lineno).strip()
        print(f"{stat.size_diff / half:13,.1f} {stat.count_diff / half:15.2f}  {where}  {line}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument("--requests", type=int, default=2000, help="per workload (half timed)")
    parser.add_argument("--fill", type=int, default=10_000, help="log entries first")
    parser.add_argument("--only", help="comma-separated workload keys, e.g. hist_200")
    parser.add_argument("--sort", default="tottime", help="pstats sort key")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--memory", action="store_true", help="bytes kept per log entry")
    parser.add_argument("--scenarios", type=Path, default=SCENARIOS, help=argparse.SUPPRESS)
    parser.add_argument(
        "--against",
        metavar="REF",
        help="then the same run on mockllm at git commit-ish REF (bench/against.py), "
        "this driver and its workloads",
    )
    args = parser.parse_args(argv)
    asyncio.run(memory(args) if args.memory else run(args))
    if args.against:
        against(args.against, [a for a in (argv or sys.argv[1:]) if a != args.against])


def against(ref: str, argv: list[str]) -> None:
    """This driver on REF's mockllm: a folder holding REF's `mockllm` and this `bench`,
    first on the path of a child process, with the bench scenarios REF can load."""
    from bench.against import baseline_paths

    path, scenarios = baseline_paths(ref)
    argv = [a for a in argv if a != "--against"]
    print(f"\n=== the same on mockllm at {ref} ===", flush=True)
    env = {**os.environ, "PYTHONPATH": str(path)}
    command = [sys.executable, "-m", "bench.profile", *argv, "--scenarios", str(scenarios)]
    subprocess.run(command, env=env, cwd=path, check=True)  # -m puts the cwd first


if __name__ == "__main__":
    main()
