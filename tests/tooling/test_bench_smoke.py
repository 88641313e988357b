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

from bench.report import GOALS, LOOP_ROWS, METRICS, STATE_ROWS
from bench.run import peer_drift
from bench.servers import AIMOCK, Answer
from tests.support import ROOT

# The aimock peer runs where `make bench` installed it (bench/peers/aimock/node_modules);
# `make test` does not install it, so on a fresh clone the bench must skip it, loudly.
PEER_MISSING = AIMOCK.missing()
SERVERS = ["mockllm", "starlette", "asgi", "starlette_json", *([] if PEER_MISSING else ["aimock"])]


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
    assert header.split()[: 2 + len(SERVERS)] == ["metric", "unit", *SERVERS]
    if PEER_MISSING:
        assert f"skipping aimock: {PEER_MISSING}" in done.stderr
    else:  # the peer answered the warm rows (checked by the bench) and nothing else
        assert _cells(lines, "non-stream c=32 server CPU *", "aimock") != "-"
        assert _cells(lines, "stream c=32 server CPU *", "aimock") != "-"
        assert _cells(lines, "distinct non-stream c=32 server CPU *", "aimock") == "-"
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
    # The conversation rows (bench/loops.py): a 10-turn tool loop over WebSocket and over
    # HTTP, and an MCP call against a model request, for mockllm and the starlette floor.
    for metric in LOOP_ROWS:
        row = next(line for line in lines if line.startswith(metric.label + " "))
        cells = [cell.strip() for cell in row.split("  ") if cell.strip()]
        assert cells[1] == metric.unit and re.fullmatch(r"[\d,.]+", cells[2]), row  # mockllm's
    loops = record["loops"]
    assert list(loops) == ["mockllm", "starlette"]
    assert loops["mockllm"]["median"]["ws_loop_ms"] > 0
    assert loops["starlette"]["median"]["http_loop_ms"] > 0
    assert loops["mockllm"]["median"]["mcp_call_cpu_us"] is not None
    assert "mcp_call_cpu_us" not in loops["starlette"]["median"]  # the floor has no MCP
    # The shared-state rows (a redis-server of the bench's own), or a loud skip.
    if "skipped" in record["state"]:
        assert "Shared state rows SKIPPED: no redis-server" in done.stdout
    else:
        assert list(record["state"]) == ["memory", "redis", "redis_2w", "round_trip"]
        for metric in STATE_ROWS:
            assert any(line.startswith(metric.label + " ") for line in lines), metric.label
        # The goal is judged on the run's own round trip (a PING over mockllm's connection)
        assert record["state"]["round_trip"]["median"]["c32_cpu_us"] > 0
        goal = next(line for line in lines if line.startswith("goal, redis CPU c=32"))
        assert goal.endswith(("PASS", "FAIL")), goal


def _cells(lines: list[str], label: str, server: str) -> str:
    """The figure in `server`'s column of the row `label` (labels hold single spaces, the
    table separates cells with two or more)."""
    header = next(line for line in lines if line.startswith("metric")).split()
    row = next(line for line in lines if line.startswith(label + " "))
    cells = [cell for cell in row.split("  ") if cell.strip()]
    return cells[header.index(server)].strip()  # both start with the label, then the unit


def test_a_peer_is_held_to_the_same_work_not_the_same_bytes() -> None:
    """The bench stops on a peer whose reply is not one get_weather call, or whose
    stream is not 50 data: frames: its figures would measure different work."""
    call = {"function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
    reply = {"choices": [{"message": {"role": "assistant", "tool_calls": [call]}}]}
    frame = b'data: {"choices":[{"delta":{"content":"abcd"}}]}\n\n'

    def answer(body: bytes, status: int = 200) -> Answer:
        return Answer(status, {}, body)

    assert peer_drift(answer(json.dumps(reply).encode()), stream=False) is None
    assert peer_drift(answer(frame * 49 + b"data: [DONE]\n\n"), stream=True) is None

    other = {"choices": [{"message": {"tool_calls": [{"function": {"name": "search"}}]}}]}
    assert peer_drift(answer(json.dumps(other).encode()), stream=False) == (
        "calls ['search'], not ['get_weather']"
    )
    text = {"choices": [{"message": {"role": "assistant", "content": "hi"}}]}
    assert "not a Chat Completions tool call" in str(
        peer_drift(answer(json.dumps(text).encode()), stream=False)
    )
    missed = b'{"error":{"message":"No fixture matched"}}'
    assert str(peer_drift(answer(missed, 404), stream=False)).startswith("status 404")
    assert peer_drift(answer(frame * 20), stream=True) == "20 data: frames, not 50"
