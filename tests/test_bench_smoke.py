"""`python -m bench --quick` (what `make bench ARGS=--quick` runs) works end to end.

A smoke test only: it checks that the table and the JSONL record come out, never a
timing — benchmark figures swing too much between machines and runs to assert on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.report import GOALS, METRICS, STATE_ROWS

from .support import ROOT

SERVERS = ["mockllm", "starlette", "asgi"]


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
    assert header.split()[:5] == ["metric", "unit", *SERVERS]
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
    # The shared-state rows (a redis-server of the bench's own), or a loud skip.
    if "skipped" in record["state"]:
        assert "Shared state rows SKIPPED: no redis-server" in done.stdout
    else:
        assert list(record["state"]) == ["memory", "redis", "redis_2w"]
        for metric in STATE_ROWS:
            assert any(line.startswith(metric.label + " ") for line in lines), metric.label
