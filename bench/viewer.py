"""`make bench-viewer`: how long the viewer takes to first show a 5,000-request log in
headless Chromium — the static report from file://, and the live page of a server that
holds the same log. Measured, not asserted: it prints the medians and asserts nothing.

The log is real: tool loops (half of them streamed) and stream cuts, played over HTTP
against an in-process server. The figure is the `mockllm-rendered` performance mark,
which live.js sets when its first render is done (milliseconds since navigation start).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from mockllm.testing.background import RunningServer, serve
from mockllm.viewer.page import report_page
from tests.support.browser import chromium, missing

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
RENDERED = "return performance.getEntriesByName('mockllm-rendered')[0]?.startTime ?? null"


def play(server: RunningServer, requests: int) -> None:
    """Two requests per session: a tool loop on weather-single (its answer streamed every
    other time), or on stream-cut a stream broken inside the call and its retry."""
    with httpx.Client(base_url=server.url) as http:
        for i in range(requests // 2):
            cut = i % 5 == 4
            scenario = "stream-cut" if cut else "weather-single"
            url = f"/s/{scenario}/s{i}/v1/chat/completions"
            ask: dict[str, Any] = {
                "model": "m",
                "messages": [{"role": "user", "content": f"Weather in Paris? ({i})"}],
                "tools": TOOLS,
            }
            if cut:
                with contextlib.suppress(httpx.RemoteProtocolError):  # the cut, as scripted
                    http.post(url, json={**ask, "stream": True})
                http.post(url, json=ask)
                continue
            reply = http.post(url, json=ask).json()["choices"][0]["message"]
            result = {"role": "tool", "tool_call_id": reply["tool_calls"][0]["id"], "content": "18"}
            answer = {**ask, "messages": [*ask["messages"], reply, result], "stream": i % 2 == 0}
            http.post(url, json=answer)


def first_render_ms(driver: Any, url: str, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        driver.get("about:blank")
        driver.get(url)
        deadline = time.monotonic() + 60
        while (mark := driver.execute_script(RENDERED)) is None:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url}: no first render within 60 s")
            time.sleep(0.02)
        times.append(float(mark))
    return times


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.viewer", description=__doc__)
    p.add_argument("--requests", type=int, default=5000, help="log entries (default 5000)")
    p.add_argument("--runs", type=int, default=5, help="page loads per form (default 5)")
    args = p.parse_args(argv)
    reason = missing()
    if reason:
        print(f"bench.viewer: {reason}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp, serve() as server:
        started = time.perf_counter()
        play(server, args.requests)
        played = time.perf_counter() - started
        entries = [e.raw for e in server.client.requests()]
        started = time.perf_counter()
        page = report_page(entries)
        built = time.perf_counter() - started
        report = Path(tmp) / "report.html"
        report.write_text(page, "utf-8")
        with chromium() as driver:
            static = first_render_ms(driver, report.as_uri(), args.runs)
            live = first_render_ms(driver, f"{server.url}/_mockllm/ui", args.runs)
    sessions = len({e["session"] for e in entries})
    print(
        f"viewer, {len(entries)} log entries in {sessions} sessions "
        f"(played in {played:.1f} s), median of {args.runs} loads in headless Chromium:"
    )
    print(f"  static report: {len(page) / 1e6:.1f} MB, built in {built * 1000:.0f} ms (Python)")
    print(f"  static report from file://, first render: {statistics.median(static):.0f} ms")
    print(f"  live /_mockllm/ui, first render:          {statistics.median(live):.0f} ms")
    print(json.dumps({"static_ms": static, "live_ms": live, "build_ms": built * 1000}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
