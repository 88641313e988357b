"""What the kernel knows about a server: CPU time, resident memory, CPU pinning.

Figures are summed over the server's process tree, so a peer started through a
launcher (npx → node) is measured whole; for mockllm and the floors the tree is one
process.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def tree(pid: int) -> list[int]:
    """`pid` and all its live descendants."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        fields = _stat_fields(stat)
        if fields:
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children.get(current, [])
    return found


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process tree, in seconds (10 ms resolution on most kernels)."""
    return _ticks(tree(pid))


def _ticks(members: list[int]) -> float:
    ticks = 0
    for member in members:
        fields = _stat_fields(Path(f"/proc/{member}/stat"))
        if fields:
            ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return ticks / _TICKS_PER_SECOND


@dataclass(frozen=True)
class CpuReading:
    """The process tree's CPU at one moment: in clock ticks (`cpu_seconds`) and, where the
    kernel has schedstat, each thread's run time in nanoseconds."""

    seconds: float
    thread_ns: dict[int, int]


def cpu_reading(pid: int, members: list[int] | None = None) -> CpuReading:
    """The reading of `pid`'s tree now (`members`: the tree, when already listed)."""
    members = tree(pid) if members is None else members
    thread_ns = {}
    for member in members:
        for task in Path(f"/proc/{member}/task").glob("[0-9]*"):
            try:
                thread_ns[int(task.name)] = int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue  # exited between listing and reading, or no schedstat
    return CpuReading(_ticks(members), thread_ns)


def settled_reading(pid: int, quiet: float = 0.001, longest: float = 0.05) -> CpuReading:
    """A reading once the tree has used no CPU for `quiet` seconds (waiting `longest` at
    most): work a server does after the client has its last byte (closing a connection,
    its log) is then charged to the work that caused it, not to whatever is measured next."""
    members = tree(pid)
    reading = cpu_reading(pid, members)
    deadline = time.monotonic() + longest
    while time.monotonic() < deadline:
        time.sleep(quiet)
        again = cpu_reading(pid, members)
        if again.thread_ns == reading.thread_ns:
            return again
        reading = again
    return reading


def cpu_since(pid: int, before: CpuReading) -> float:
    """Seconds of CPU the tree spent since `before` (`cpu_between` now)."""
    return cpu_between(before, cpu_reading(pid))


def cpu_between(before: CpuReading, after: CpuReading) -> float:
    """Seconds of CPU between two readings, from the threads' run times in nanoseconds: the
    10 ms ticks of utime + stime are too coarse for runs of a few hundred ms (a 60-loop
    WebSocket run is ~140 ms, 14 ticks: ±7 % a figure). A thread that ended in between took
    its time with it: an idle worker retiring took none, so its loss is ignored; where the
    ticks (which keep an ended thread's time) show more than two ticks beyond, it had been
    working, and the ticks are the figure. The ticks too where there is no schedstat."""
    if not before.thread_ns:
        return after.seconds - before.seconds
    was = before.thread_ns
    fine = sum(ns - was.get(tid, 0) for tid, ns in after.thread_ns.items()) / 1e9
    if was.keys() <= after.thread_ns.keys():
        return fine
    coarse = after.seconds - before.seconds
    return coarse if coarse - fine > 2 / _TICKS_PER_SECOND else fine


def rss_mb(pid: int) -> float:
    """VmRSS of the process tree, in MB (2**20 bytes)."""
    kilobytes = 0
    for member in tree(pid):
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:
            continue  # exited between listing and reading
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                kilobytes += int(line.split()[1])
    return kilobytes / 1024


def _stat_fields(path: Path) -> list[str] | None:
    """Fields after the command name, which may itself hold spaces and parentheses."""
    try:
        text = path.read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def pinning(server_cpu: int, load_cpu: int) -> tuple[int, int] | None:
    """(server core, load core) when both exist and taskset can pin; else None."""
    cores = os.sched_getaffinity(0)
    if server_cpu == load_cpu or not {server_cpu, load_cpu} <= cores:
        return None
    return (server_cpu, load_cpu) if shutil.which("taskset") else None


def pin_self(cpu: int) -> None:
    """Pin this process (the harness, its asyncio client and the wrk it spawns)."""
    os.sched_setaffinity(0, {cpu})
