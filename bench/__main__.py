"""`python -m bench [--quick]`: run the benchmark, print the table, append a JSONL record."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .against import AgainstError, baseline
from .load import add_options, set_up
from .loops import measure_loops
from .report import Outcome, append, environment, record, table
from .run import (
    Settings,
    fetch_reference,
    measure_cold,
    measure_memory,
    measure_rounds,
    measure_startups,
    merge,
    progress,
)
from .servers import ROOT, ServerDef, selected
from .state import measure_state, redis_missing

DEFAULT_OUT = ROOT / "bench" / "results" / "results.jsonl"

# (full, --quick): on two cores the full run takes about eight minutes, --quick one to two minutes.
DEFAULTS = {
    "rounds": (3, 1),
    "duration": (2, 1),
    "ttfb_seconds": (0.5, 0.3),
    "warmup": (1, 0),
    "startups": (9, 2),
    "memory_requests": (100_000, 5_000),
    "loops": (300, 3),
    "mcp_calls": (2000, 30),
}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    for name, (full, quick) in DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    servers = [s for s in selected(args.servers) if _runnable(s.name, s.missing())]
    if not servers or servers[0].role != "subject":
        print("bench: the first server must be mockllm (the subject)", file=sys.stderr)
        return 2
    if args.against:
        try:  # right after the subject: every phase interleaves the two trees
            servers.insert(1, baseline(args.against))
        except AgainstError as error:
            print(error, file=sys.stderr)
            return 2
    wrk, cpus = set_up(args, "bench")  # the harness, its asyncio client and wrk: load core
    with tempfile.TemporaryDirectory(prefix="mockllm-bench-") as tmp:
        settings = Settings(
            rounds=args.rounds,
            seconds=args.duration,
            ttfb_seconds=args.ttfb_seconds,
            warmup_seconds=args.warmup,
            startups=args.startups,
            memory_requests=args.memory_requests,
            use_wrk=wrk is not None,
            cpus=cpus,
            stream_sends=args.stream_sends,
            workdir=Path(tmp),
            loops=args.loops,
            mcp_calls=args.mcp_calls,
        )
        outcome = _measure(servers, settings, wrk)
    print(table(outcome), flush=True)
    append(args.json_out, record(outcome))
    print(f"\nresults appended to {_shown(args.json_out)}")
    return 0


def _measure(servers: list[ServerDef], settings: Settings, wrk: str | None) -> Outcome:
    env = environment(wrk)
    ref = fetch_reference(settings)
    warm = [s for s in servers if not s.cold_only]
    samples = merge(
        measure_startups(warm, settings, ref),
        measure_rounds(warm, settings, ref),
        measure_cold(servers, settings, ref),
        measure_memory(warm, settings, ref),
    )
    loops = measure_loops(settings, [s for s in servers if s.role == "baseline"])
    missing = redis_missing()
    if missing:
        progress(f"SKIPPING the shared-state rows: {missing}")
        return Outcome(servers, samples, settings, env, state_skipped=missing, loops=loops)
    return Outcome(servers, samples, settings, env, measure_state(settings, ref), loops=loops)


def _runnable(name: str, missing: str | None) -> bool:
    if missing:
        progress(f"skipping {name}: {missing}")
    return missing is None


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Benchmark mockllm against bare starlette / ASGI floors (see bench/README.md).",
    )
    p.add_argument(
        "--quick", action="store_true", help="a 1-2 minute smoke run: 1 round, short runs"
    )
    p.add_argument("--rounds", type=int, help="interleaved rounds per server (default 3)")
    p.add_argument(
        "--duration",
        type=float,
        help="seconds per load run (default 2; wrk rounds to whole seconds)",
    )
    p.add_argument("--ttfb-seconds", type=float, help="seconds per first-byte run (default 0.5)")
    p.add_argument("--warmup", type=float, help="seconds of load before measuring (default 1)")
    p.add_argument("--startups", type=int, help="cold starts per server (default 5)")
    p.add_argument(
        "--memory-requests", type=int, help="requests before the final RSS (default 100000)"
    )
    p.add_argument(
        "--servers",
        type=lambda text: text.split(","),
        help="comma-separated subset of bench/servers.py SERVERS, mockllm first (default: all)",
    )
    p.add_argument(
        "--stream-sends",
        choices=("event", "one"),
        default="event",
        help="floors send the stream one ASGI send per SSE frame (default) or in one send",
    )
    p.add_argument(
        "--loops", type=int, help="10-turn tool loops per transport per round (default 300)"
    )
    p.add_argument(
        "--mcp-calls", type=int, help="MCP calls and model requests per round (default 2000)"
    )
    p.add_argument(
        "--against",
        metavar="REF",
        help="also measure mockllm at git commit-ish REF (exported to bench/results/trees/), "
        "interleaved with this tree in every phase; the table adds x<REF> per row",
    )
    add_options(p)
    p.add_argument(
        "--json-out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"JSONL file to append to (default {DEFAULT_OUT.relative_to(ROOT)})",
    )
    return p


if __name__ == "__main__":
    sys.exit(main())
