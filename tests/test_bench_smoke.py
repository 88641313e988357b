"""`python -m bench --quick` (what `make bench ARGS=--quick` runs) works end to end.

A smoke test only: it checks that the table and the JSONL record come out, never a
timing — benchmark figures swing too much between machines and runs to assert on.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from bench.report import GOALS, METRICS, STATE_ROWS

from .support import ROOT

SERVERS = ["mockllm", "starlette", "asgi", "starlette_json"]


def test_quick_bench_prints_the_table_and_appends_a_record(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    # --quick, shortened further: this checks that every phase runs, not what it measures.
    # The bundled asyncio client takes sub-second runs, and needs no wrk on the CI machine.
    fast = [
        "--loadgen",
        "asyncio",
        "--duration",
        "0.3",
        "--warmup",
        "0",
        "--ttfb-seconds",
        "0.1",
        "--startups",
        "1",
        "--memory-requests",
        "500",
    ]
    command = [sys.executable, "-m", "bench", "--quick", *fast, "--json-out", str(results)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("metric"))
    assert header.split()[:6] == ["metric", "unit", *SERVERS]
    # The parse floor runs in the cold phase only: a figure in the history rows, none in
    # the warm ones; the history table gives it a column and mockllm's cost beyond it.
    growth = lines.index("CPU per request as the history grows (c=32, every body distinct):")
    assert "starlette_json µs" in lines[growth + 1], lines[growth + 1]
    assert "beyond starlette_json µs/message" in lines[growth + 1], lines[growth + 1]
    # starlette, mockllm, ratio, mockllm per message, starlette_json, beyond it per message
    last = r"200 messages( +[\d,.]+){2} +[\d.]+x( +-?[\d,.]+){3}$"
    assert re.match(last, lines[growth + 5]), lines[growth + 5]
    for metric in METRICS:
        label = metric.label.format(n="500")
        row = next((line for line in lines if line.startswith(label + " ")), None)
        assert row is not None, f"no row {label!r} in:\n{done.stdout}"
        if metric.key in GOALS:
            assert row.endswith(("PASS", "FAIL", "n/a")), row

    records = results.read_text().splitlines()
    assert len(records) == 1
    record = json.loads(records[0])
    assert list(record["servers"]) == SERVERS
    assert set(record["targets"]) == set(GOALS)
    parse_floor = record["servers"]["starlette_json"]["median"]
    assert parse_floor["hist_200_c32_cpu_us"] > 0
    assert "ns_c32_cpu_us" not in parse_floor  # no warm rounds for it
    # The shared-state rows (a redis-server of the bench's own), or a loud skip.
    if "skipped" in record["state"]:
        assert "Shared state rows SKIPPED: no redis-server" in done.stdout
    else:
        assert list(record["state"]) == ["memory", "redis", "redis_2w"]
        for metric in STATE_ROWS:
            assert any(line.startswith(metric.label + " ") for line in lines), metric.label
