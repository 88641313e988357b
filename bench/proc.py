"""What the kernel knows about a server: CPU time, resident memory, CPU pinning.

Figures are summed over the server's process tree, so a peer started through a
launcher (npx → node) is measured whole; for mockllm and the floors the tree is one
process.
"""

from __future__ import annotations

import os
import shutil
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
    ticks = 0
    for member in tree(pid):
        fields = _stat_fields(Path(f"/proc/{member}/stat"))
        if fields:
            ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return ticks / _TICKS_PER_SECOND


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
