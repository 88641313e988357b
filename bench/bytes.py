"""The bounds in bytes of issue 35, measured against a fresh `mockllm serve` of this tree:
RSS after distinct big tool schemas, a big log read (its time, its size and how long a
concurrent health check waits), one 9 MB body among 50 entries, never-closed MCP sessions.

    python -m bench.bytes schemas [N]     # N distinct 1 MB schemas (300)
    python -m bench.bytes log [N]         # N entries of 100 KB, then GET /_mockllm/requests
    python -m bench.bytes bigframe        # 49 small entries and one of 9 MB, then the read
    python -m bench.bytes mcp [N]         # N MCP initialize never closed (5000)
    ... -- FLAGS                          # after --: flags for `mockllm serve`

Figures from the shared two-core machine are in docs/security.md ("Bounds in bytes").
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ORDERS = Path(__file__).parent.parent / "docs" / "mcp.md"
AUTH = {"authorization": "Bearer x"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


@contextmanager
def serving(flags: list[str]) -> Iterator[tuple[str, int]]:
    with tempfile.TemporaryDirectory() as tmp:
        ready = Path(tmp) / "ready"
        argv = [sys.executable, "-m", "mockllm", "serve", "--port", "0"]
        process = subprocess.Popen(
            [*argv, "--ready-file", str(ready), *flags], stdout=subprocess.DEVNULL
        )
        try:
            while not ready.exists():
                time.sleep(0.05)
            yield ready.read_text().strip(), process.pid
        finally:
            process.terminate()
            process.wait()


def rss(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(x for x in status.splitlines() if x.startswith("VmRSS")).split()[1]) >> 10


def probed(url: str, work: Callable[[], Any]) -> tuple[Any, float, list[float]]:
    """`work`'s result, its seconds, and the waits (ms) of health checks sent meanwhile."""
    waits: list[float] = []
    done = threading.Event()

    def poll() -> None:
        with httpx.Client(timeout=120) as c:
            c.get(url + "/_mockllm/health")  # the client's own first connection, not counted
            while not done.is_set():
                t = time.monotonic()
                c.get(url + "/_mockllm/health")
                waits.append((time.monotonic() - t) * 1000)
                time.sleep(0.02)

    thread = threading.Thread(target=poll)
    thread.start()
    time.sleep(0.3)
    t = time.monotonic()
    out = work()
    took = time.monotonic() - t
    done.set()
    thread.join()
    return out, took, sorted(waits) or [0.0]


def chat(c: httpx.Client, url: str, session: str, text: str, **more: Any) -> None:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **more}
    c.post(f"{url}/s/hello/{session}/v1/chat/completions", headers=AUTH, json=body)


def read(c: httpx.Client, url: str, session: str) -> int:
    with c.stream("GET", f"{url}/_mockllm/requests?session={session}") as r:
        return sum(len(b) for b in r.iter_bytes())


def say_read(what: str, size: int, took: float, waits: list[float]) -> None:
    p50 = waits[len(waits) // 2]
    print(f"{what}: {size / 1e6:.1f} MB in {took:.2f} s; health waits p50 {p50:.0f} ms,")
    print(f"  worst {waits[-1]:.0f} ms over {len(waits)} checks")


def log(c: httpx.Client, url: str, pid: int, n: int) -> None:
    for i in range(n):
        chat(c, url, "biglog", f"{i} " + "x" * 100_000)
    print(f"RSS after {n} entries of 100 KB: {rss(pid)} MB")
    size, took, waits = probed(url, lambda: read(c, url, "biglog"))
    say_read("GET /_mockllm/requests", size, took, waits)
    print(f"RSS after the read: {rss(pid)} MB")


def bigframe(c: httpx.Client, url: str, pid: int, n: int) -> None:
    for _ in range(49):
        chat(c, url, "bf", "hi")
    chat(c, url, "bf", "x" * 9_000_000)
    size, took, waits = probed(url, lambda: read(c, url, "bf"))
    say_read("GET /_mockllm/requests over 50 entries, one of 9 MB", size, took, waits)


def schemas(c: httpx.Client, url: str, pid: int, n: int) -> None:
    start = rss(pid)
    for i in range(n):
        schema = {"type": "object", "properties": {"a": {"description": f"{i} " + "d" * 2**20}}}
        tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
        chat(c, url, "schemas", "hi", tools=tools)
    print(f"RSS {start} MB -> {rss(pid)} MB after {n} distinct 1 MB schemas")
    c.request("DELETE", url + "/_mockllm/requests", headers={"content-type": "application/json"})
    print(f"RSS after the log is deleted: {rss(pid)} MB")


def mcp(c: httpx.Client, url: str, pid: int, n: int) -> None:
    c.post(url + "/_mockllm/scenarios", content=_orders(), headers={"content-type": "text/yaml"})
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    c.post(url + "/s/orders-loop/b/mcp/orders", json=INIT, headers=headers)  # imports the SDK
    start, statuses = rss(pid), dict[int, int]()
    for _ in range(n):
        s = c.post(url + "/s/orders-loop/b/mcp/orders", json=INIT, headers=headers).status_code
        statuses[s] = statuses.get(s, 0) + 1
    print(f"RSS {start} MB -> {rss(pid)} MB after {n} MCP sessions never closed ({statuses})")


def _orders() -> bytes:
    text = ORDERS.read_text().split("```yaml file=orders.yaml\n", 1)[1].split("```", 1)[0]
    return text.encode()


PROBES = {"log": (log, 1500), "bigframe": (bigframe, 1), "schemas": (schemas, 300)}
PROBES["mcp"] = (mcp, 5000)


def main(argv: list[str]) -> None:
    ours, _, flags = " ".join(argv).partition(" -- ")
    what, *count = ours.split()
    probe, default = PROBES[what]
    n = int(count[0]) if count else default
    with (
        serving(["--max-body", "20MB", *flags.split()]) as (url, pid),
        httpx.Client(timeout=600) as c,
    ):
        probe(c, url, pid, n)


if __name__ == "__main__":
    main(sys.argv[1:])
