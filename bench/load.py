"""Load generators: wrk (from the distribution) and a bundled asyncio client.

wrk is the main tool: it is C, so on its own core it never limits a Python server,
and every server is driven by the same binary. wrk cannot see when the first byte of
a response arrives, so time-to-first-byte of streams always comes from the asyncio
client; when wrk is not installed the asyncio client does everything.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import shutil
import subprocess
import sys
import time
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import proc
from .servers import HOST
from .workload import DISTINCT


@dataclass(frozen=True)
class Target:
    port: int
    path: str
    body: bytes  # with `DISTINCT` in it: every request replaces it with a counter
    kind: str | None = None  # sent as `x-bench-kind`: which reply a floor answers with
    extra: tuple[tuple[str, str], ...] = ()  # more headers: a peer's (`ServerDef.headers`)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}{self.path}"

    @property
    def headers(self) -> tuple[tuple[str, str], ...]:
        """Every request's headers besides Host, Content-Type and Content-Length."""
        return ((("X-Bench-Kind", self.kind),) if self.kind else ()) + self.extra

    @property
    def distinct(self) -> bool:
        return DISTINCT.encode() in self.body

    def bodies(self) -> Iterator[bytes]:
        """The body of each request in turn: always the same, or distinct by a counter."""
        if not self.distinct:
            return itertools.repeat(self.body)
        prefix, _, suffix = self.body.partition(DISTINCT.encode())
        return (prefix + str(n).encode() + suffix for n in itertools.count(1))


@dataclass(frozen=True)
class LoadResult:
    tool: str  # "wrk" or "asyncio"
    connections: int
    requests: int  # completed with status 200
    seconds: float
    errors: int  # failed, or answered with a status other than 200
    p50_us: float  # time to the end of the response
    p99_us: float
    max_us: float
    ttfb_p50_us: float | None = None  # time to the first body byte (asyncio client only)
    ttfb_p99_us: float | None = None

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def add_options(parser: argparse.ArgumentParser) -> None:
    """The load generator and the cores: the same flags for every bench command."""
    parser.add_argument(
        "--loadgen",
        choices=("auto", "wrk", "asyncio"),
        default="auto",
        help="auto: wrk when installed, else the bundled asyncio client",
    )
    parser.add_argument(
        "--server-cpu", type=int, default=0, help="core for the servers (default 0)"
    )
    parser.add_argument("--load-cpu", type=int, default=1, help="core for the load (default 1)")


def set_up(args: argparse.Namespace, prog: str) -> tuple[str | None, tuple[int, int] | None]:
    """(wrk's version or None for the asyncio client, (server core, load core) or None);
    pins this process, and the load it starts, to the load core."""
    wrk = wrk_version() if args.loadgen != "asyncio" else None
    if args.loadgen == "wrk" and wrk is None:
        print(f"{prog}: --loadgen wrk but wrk is not installed", file=sys.stderr)
        raise SystemExit(2)
    cpus = proc.pinning(args.server_cpu, args.load_cpu)
    if cpus:
        proc.pin_self(cpus[1])
    return wrk, cpus


def wrk_version() -> str | None:
    if not shutil.which("wrk"):
        return None
    out = subprocess.run(["wrk", "-v"], capture_output=True, text=True, check=False)
    first = (out.stdout + out.stderr).strip().splitlines()
    return first[0].split(" [")[0] if first else "wrk"


# --- wrk ---------------------------------------------------------------------------------------

_REQUEST_LUA = """\
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [==[{body}]==]
"""

# Distinct bodies: wrk calls request() for every request (one thread, one counter).
_DISTINCT_LUA = """\
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local prefix, suffix, n = [==[{prefix}]==], [==[{suffix}]==], 0
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, prefix .. n .. suffix)
end
"""

# Percentiles from wrk's own histogram, printed as JSON instead of wrk's rounded text.
# wrk has already applied its coordinated-omission correction to that histogram: a
# stall of T µs at a mean interval of I µs per connection adds T/I synthetic samples,
# as if requests had kept arriving at the measured rate. The max is not corrected.
_SUMMARY_LUA = """\
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH {"requests":%d,"duration_us":%d,"errors":%d,'
      .. '"p50_us":%d,"p99_us":%d,"max_us":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
"""

# wrk runs for its whole -d even when a thread stops, so a counted run exits itself
# once `count` responses are in (one wrk thread: the count is global).
_COUNT_LUA = """\
local seen, bad = 0, 0
function response(status, headers, body)
  seen = seen + 1
  if status ~= 200 then bad = bad + 1 end
  if seen >= {count} then
    io.write(string.format('BENCH {"requests":%d,"errors":%d}\\n', seen - bad, bad))
    io.flush()
    os.exit(0)
  end
end
"""


def wrk_run(target: Target, connections: int, seconds: float, workdir: Path) -> LoadResult:
    """`seconds` of closed-loop load (wrk takes whole seconds only: at least one)."""
    seconds = max(1, round(seconds))
    script = _script(workdir, target, _SUMMARY_LUA)
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s"]
    stats = _wrk([*argv, "-s", str(script), target.url], seconds + 60)
    return LoadResult(
        "wrk",
        connections,
        stats["requests"] - stats["errors"],
        stats["duration_us"] / 1e6,
        stats["errors"],
        stats["p50_us"],
        stats["p99_us"],
        stats["max_us"],
    )


def wrk_count(target: Target, connections: int, count: int, workdir: Path) -> LoadResult:
    """Exactly `count` responses (latencies are not kept: this run is about memory)."""
    script = _script(workdir, target, _COUNT_LUA.replace("{count}", str(count)))
    argv = ["wrk", "-t1", f"-c{connections}", "-d3600s", "--timeout", "10s"]
    started = time.perf_counter()
    stats = _wrk([*argv, "-s", str(script), target.url], 3600)
    seconds = time.perf_counter() - started
    return LoadResult(
        "wrk", connections, stats["requests"], seconds, stats["errors"], *[math.nan] * 3
    )


def _script(workdir: Path, target: Target, tail: str) -> Path:
    text = target.body.decode()
    if "]==]" in text:
        raise ValueError("request body cannot be embedded in a Lua long string")
    if target.distinct:
        prefix, _, suffix = text.partition(DISTINCT)
        head = _DISTINCT_LUA.format(prefix=prefix, suffix=suffix)
    else:
        head = _REQUEST_LUA.format(body=text)
    for name, value in target.headers:
        head += f'wrk.headers["{name}"] = "{value}"\n'
    path = workdir / f"wrk-{abs(hash((target.body, target.headers, tail)))}.lua"
    path.write_text(head + tail)
    return path


def _wrk(argv: list[str], timeout: float) -> dict[str, int]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("BENCH "):
            stats: dict[str, int] = json.loads(line[6:])
            return stats
    raise RuntimeError(f"wrk failed ({done.returncode}): {done.stdout}{done.stderr}")


# --- the asyncio client --------------------------------------------------------------------------


def client_run(
    target: Target, connections: int, seconds: float | None = None, count: int | None = None
) -> LoadResult:
    """Closed-loop load over keep-alive HTTP/1.1 connections, for `seconds` or `count`."""
    return _run(_drive(target, connections, seconds, count))


def _run(coro: Coroutine[Any, Any, LoadResult]) -> LoadResult:
    """On uvloop when installed: the client should cost as little as the servers' loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    if sys.version_info >= (3, 11):
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(coro)
    return asyncio.run(coro)  # pragma: no cover - 3.10 keeps the default loop


class _Budget:
    """Requests left to send across all connections (None: until the deadline)."""

    def __init__(self, count: int | None, deadline: float) -> None:
        self.left, self.deadline = count, deadline

    def take(self) -> bool:
        if time.perf_counter() >= self.deadline:
            return False
        if self.left is None:
            return True
        self.left -= 1
        return self.left >= 0


@dataclass
class _Tally:
    ttfb: list[float]
    full: list[float]
    errors: int = 0


async def _drive(
    target: Target, connections: int, seconds: float | None, count: int | None
) -> LoadResult:
    requests = _requests(target)
    opened = [await asyncio.open_connection(HOST, target.port) for _ in range(connections)]
    tally = _Tally([], [])
    started = time.perf_counter()
    budget = _Budget(count, started + (seconds if seconds is not None else 3600))
    try:
        await asyncio.gather(
            *(_loop(_Connection(r, w), requests, budget, tally) for r, w in opened)
        )
    finally:
        for _, writer in opened:
            writer.close()
    elapsed = time.perf_counter() - started
    full, ttfb = sorted(tally.full), sorted(tally.ttfb)
    return LoadResult(
        "asyncio",
        connections,
        len(full),
        elapsed,
        tally.errors,
        percentile(full, 0.50),
        percentile(full, 0.99),
        full[-1] if full else math.nan,
        percentile(ttfb, 0.50),
        percentile(ttfb, 0.99),
    )


async def _loop(
    conn: _Connection, requests: Iterator[bytes], budget: _Budget, tally: _Tally
) -> None:
    while budget.take():
        try:
            status, first, total = await conn.exchange(next(requests))
        except (ConnectionError, ValueError):
            tally.errors += 1
            return  # the connection is unusable; the others carry on
        if status == 200:
            tally.ttfb.append(first * 1e6)
            tally.full.append(total * 1e6)
        else:
            tally.errors += 1


def _requests(target: Target) -> Iterator[bytes]:
    """Each request in turn, head and body (shared by all connections: one counter)."""
    extra = "".join(f"{name}: {value}\r\n" for name, value in target.headers)
    for body in target.bodies():
        head = (
            f"POST {target.path} HTTP/1.1\r\nHost: {HOST}:{target.port}\r\n{extra}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        yield head.encode() + body


class _Connection:
    """One keep-alive connection; parses just enough HTTP/1.1 (Content-Length, chunked)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.buffer = bytearray()
        self.read_at = 0.0  # when the latest bytes arrived

    async def exchange(self, request: bytes) -> tuple[int, float, float]:
        """(status, seconds to the first body byte, seconds to the end of the response)."""
        start = time.perf_counter()
        self.writer.write(request)
        head_end = await self._until(b"\r\n\r\n", 0)
        status, length, chunked = _parse_head(bytes(self.buffer[:head_end]))
        body_at = head_end + 4
        if not chunked and length == 0:
            del self.buffer[:body_at]
            elapsed = time.perf_counter() - start
            return status, elapsed, elapsed
        await self._need(body_at + 1)
        first = self.read_at - start  # the read that brought the first body byte
        end = await self._chunked_end(body_at) if chunked else body_at + length
        await self._need(end)
        del self.buffer[:end]
        return status, first, time.perf_counter() - start

    async def _chunked_end(self, at: int) -> int:
        while True:
            line_end = await self._until(b"\r\n", at)
            size = int(bytes(self.buffer[at:line_end]).split(b";")[0], 16)
            at = line_end + 2 + size + 2  # size line, data, CRLF (no trailers after 0)
            if size == 0:
                return at
            await self._need(at)

    async def _until(self, marker: bytes, start: int) -> int:
        while (found := self.buffer.find(marker, start)) < 0:
            await self._read()
        return found

    async def _need(self, size: int) -> None:
        while len(self.buffer) < size:
            await self._read()

    async def _read(self) -> None:
        data = await self.reader.read(1 << 16)
        if not data:
            raise ConnectionError("server closed the connection")
        self.buffer += data
        self.read_at = time.perf_counter()


def _parse_head(head: bytes) -> tuple[int, int, bool]:
    """(status, content-length, chunked) from a response head."""
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    length, chunked = 0, False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
    return status, length, chunked


def percentile(ordered: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list (nan when empty)."""
    if not ordered:
        return math.nan
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]
