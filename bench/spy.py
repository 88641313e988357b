"""Profile the running server under load with py-spy: where its CPU goes per request.

    make bench-spy ARGS="--only cold_ns"              # mockllm, distinct non-stream bodies
    .venv/bin/python -m bench.spy --only hist_200     # a 200-message agent history
    .venv/bin/python -m bench.spy --only hist_200 --floor                 # the starlette floor
    .venv/bin/python -m bench.spy --only hist_200 --floor starlette_json  # the parse floor

The server starts exactly as `make bench` starts it (bench/servers.py: the same command,
pinned to the server core), the reference replies and agent histories come from
bench/run.py's `fetch_reference`, and wrk drives the workload with a distinct body per
request (bench/load.py). The log is filled first (`--fill`, as the bench's cold phase
does), `--warmup` seconds of the workload follow (their CPU per request is the
unprofiled figure), then `py-spy record --native` samples the server for `--seconds`
while wrk keeps the same load on. It prints the server's CPU per request in both runs,
then the samples summed by leaf frame (self time, C code included), by the innermost
Python source line and by module (bench/stacks.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import stacks
from .load import LoadResult, Target, add_options, set_up
from .run import FULL_LOG, Settings, counted, fetch_reference, measured, progress, started
from .servers import MOCKLLM, ROOT, SERVERS, Running, ServerDef, wait_answered
from .workload import DISTINCT, HISTORY_LENGTHS, cold_workloads

FLOORS = {s.name: s for s in SERVERS if s.role == "floor"}
WORKLOADS = [w.key for w in cold_workloads()] + [f"hist_{n}" for n in HISTORY_LENGTHS]
NOT_PERMITTED = 3  # exit status when py-spy may not attach (no ptrace): the smoke test skips
# What py-spy and the kernel say when ptrace is refused (EACCES, EPERM).
_REFUSED = re.compile(r"permission denied|operation not permitted|ptrace", re.IGNORECASE)
# What the event loop's C code is charged to: uvloop and httptools run under Runner.run.
_GLOSS = {"asyncio": "uvloop's and httptools' C code runs under asyncio's Runner.run"}


@dataclasses.dataclass(frozen=True)
class Window:
    """One load run and the server's CPU per completed request during it."""

    result: LoadResult
    cpu_us: float


@dataclasses.dataclass(frozen=True)
class Recording:
    pid: int
    warm: Window | None  # the unprofiled warm-up
    sampled: Window  # the load py-spy sampled
    stacks: list[stacks.Stack]
    note: str  # py-spy's last words: its count of samples and errors


class SpyFailed(Exception):
    """py-spy could not record; `refused`: it was not allowed to attach."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.refused = bool(_REFUSED.search(message))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    server = MOCKLLM if args.floor is None else FLOORS[args.floor]
    py_spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if py_spy is None:
        print("bench.spy: py-spy is not installed (pip install -e '.[bench]')", file=sys.stderr)
        return 2
    wrk, cpus = set_up(args, "bench.spy")  # the harness, wrk and py-spy: the load core
    with tempfile.TemporaryDirectory(prefix="mockllm-spy-") as tmp:
        settings = Settings(
            rounds=1,
            seconds=args.seconds,
            ttfb_seconds=0,
            warmup_seconds=args.warmup,
            startups=0,
            memory_requests=0,
            use_wrk=wrk is not None,
            cpus=cpus,
            stream_sends="event",
            workdir=Path(tmp),
        )
        try:
            recording = _profile(server, settings, args, py_spy, args.raw or Path(tmp) / "raw")
        except SpyFailed as failed:
            print(f"bench.spy: py-spy could not record {server.name}: {failed}", file=sys.stderr)
            return NOT_PERMITTED if failed.refused else 1
    pinned = f"server on cpu {cpus[0]}, load and py-spy on cpu {cpus[1]}" if cpus else "not pinned"
    print(f"bench.spy: {server.name} (pid {recording.pid}), {args.only} at c={args.connections}")
    print(f"load: {wrk or 'bundled asyncio client (wrk not installed)'}; {pinned}")
    print("\n".join(_cpu(recording, args)))
    print("\n".join(_shares(recording, args.top)))
    if args.raw:
        print(f"\nraw stacks kept in {args.raw} (flamegraph.pl, inferno and speedscope read them)")
    return 0


def _profile(
    server: ServerDef, settings: Settings, args: argparse.Namespace, py_spy: str, raw: Path
) -> Recording:
    ref = fetch_reference(settings)  # the floors' replies, and the captured agent loop
    cold = {w.key: w for w in ref.cold}
    workload, fill = cold[args.only], cold["cold_ns"]
    with started(server, settings, ref.bodies) as running:
        wait_answered(running)
        target = Target(running.port, workload.path, workload.body, workload.key)
        if args.fill:  # as the bench's cold phase: the log full, as after a test suite
            progress(f"filling the log: {args.fill} distinct cold_ns requests")
            counted(
                running,
                _tagged(Target(running.port, fill.path, fill.body), "f"),
                settings,
                args.fill,
            )
        warm = None
        if args.warmup:
            progress(f"warm-up: {args.warmup:g} s of {args.only} at c={args.connections}")
            with_warmup = dataclasses.replace(settings, seconds=args.warmup)
            warm = Window(*measured(running, _tagged(target, "w"), args.connections, with_warmup))
        progress(f"recording {args.seconds} s of {args.only} with py-spy at {args.rate} Hz")
        sampled, note = _record(running, _tagged(target, "r"), settings, args, py_spy, raw)
    return Recording(running.pid, warm, sampled, stacks.read(raw.read_text()), note)


def _tagged(target: Target, tag: str) -> Target:
    """The workload with `tag` before its counter: the fill, the warm-up and the recording
    never send a body the server has already seen (mockllm caches a body seen twice)."""
    body = target.body.replace(DISTINCT.encode(), tag.encode() + DISTINCT.encode(), 1)
    return dataclasses.replace(target, body=body)


def _record(
    running: Running,
    target: Target,
    settings: Settings,
    args: argparse.Namespace,
    py_spy: str,
    raw: Path,
) -> tuple[Window, str]:
    """py-spy attached first; the load starts once it samples and lasts as long, so the
    CPU per request and the samples cover the same requests."""
    argv = [py_spy, "record", "-p", str(running.pid), "-d", str(args.seconds)]
    argv += ["-r", str(args.rate), "--native", "-f", "raw", "-o", str(raw)]
    spy = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert spy.stdout is not None
    said = []
    for line in spy.stdout:  # "py-spy> Sampling process 250 times a second …" once attached
        said.append(line.rstrip())
        if "Sampling process" in line:
            break
    else:
        spy.wait()
        raise SpyFailed("\n".join(said[:6]) or f"exit status {spy.returncode}")
    window = Window(*measured(running, target, args.connections, settings))
    rest, _ = spy.communicate(timeout=60)
    said += rest.splitlines()
    if spy.returncode or not raw.is_file():
        raise SpyFailed("\n".join(said[-6:]) or f"exit status {spy.returncode}")
    return window, next((line for line in said if "Samples:" in line), "")


def _cpu(recording: Recording, args: argparse.Namespace) -> list[str]:
    lines = []
    runs = (("unprofiled (the warm-up)", recording.warm), ("while sampled", recording.sampled))
    for name, window in runs:
        if window is not None:
            r = window.result
            lines.append(
                f"server CPU per request, {name}: {window.cpu_us:,.1f} µs "
                f"({r.requests:,} requests in {r.seconds:.1f} s, {r.rate:,.0f} req/s, "
                f"p99 {r.p99_us / 1e3:,.1f} ms)"
            )
    total = sum(s.samples for s in recording.stacks)
    errors = re.search(r"Errors: (\d+)", recording.note)
    lines.append(
        f"py-spy: {total:,} samples of the server busy in {args.seconds} s at "
        f"{args.rate} Hz ({errors[1] if errors else '?'} errors). It stops the server for "
        "each sample, which slows it and adds to its CPU: compare the unprofiled figure."
    )
    return lines


def _shares(recording: Recording, top: int) -> list[str]:
    found = recording.stacks
    total = sum(s.samples for s in found) or 1

    def pct(n: int) -> str:
        return f"{100 * n / total:5.1f}%"

    lines = ["", f"top {top} leaf frames by self share (C code included; for C, the Python"]
    lines.append("frame it ran under most, with the share of the leaf's samples):")
    for s in stacks.by_leaf(found)[:top]:
        under = f"  <- {s.under} {100 * s.under_samples / s.samples:.0f}%" if s.under else ""
        lines.append(f"  {pct(s.samples)}  {s.key}{under}")
    lines += ["", f"top {top} innermost Python source lines (C code below them charged to them):"]
    lines.append("   share  in C    line")
    for s in stacks.by_line(found)[:top]:
        text = stacks.source(s.frame, [ROOT]) if s.frame else ""
        lines.append(f"  {pct(s.samples)} {pct(s.native)}  {s.key}  {text}".rstrip())
    lines += ["", "by module (innermost Python frame):", "   share  in C    module"]
    for s in stacks.by_module(found)[:top]:
        gloss = f"  ({_GLOSS[s.key]})" if s.key in _GLOSS else ""
        lines.append(f"  {pct(s.samples)} {pct(s.native)}  {s.key}{gloss}")
    packages = ", ".join(f"{s.key} {pct(s.samples).strip()}" for s in stacks.by_package(found))
    lines += ["", f"by package: {packages}"]
    return lines


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.spy",
        description="py-spy on the running server under wrk (see bench/README.md, Profiling).",
    )
    p.add_argument("--only", choices=WORKLOADS, default="cold_ns", help="the workload")
    p.add_argument(
        "--floor",
        nargs="?",
        const="starlette",
        choices=sorted(FLOORS),
        help="profile a floor instead of mockllm (alone: the starlette floor)",
    )
    p.add_argument("--seconds", type=int, default=10, help="seconds of sampling (default 10)")
    p.add_argument("--rate", type=int, default=250, help="samples per second (default 250)")
    p.add_argument("--warmup", type=float, default=2, help="seconds of load first (default 2)")
    p.add_argument(
        "--fill",
        type=int,
        default=FULL_LOG,
        help=f"distinct requests that fill the log first (default {FULL_LOG}, as the bench)",
    )
    p.add_argument("--connections", type=int, default=32, help="concurrent connections")
    p.add_argument("--top", type=int, default=25, help="rows per table (default 25)")
    p.add_argument("--raw", type=Path, help="keep py-spy's raw stacks in this file")
    add_options(p)
    return p


if __name__ == "__main__":
    sys.exit(main())
