"""The shared-state section judges issue 36's goals on the run's own round trip.

No timing is asserted: the figures below are made up, the verdicts follow from them.
"""

from __future__ import annotations

import json
import subprocess
import sys

from bench.report import _state_goals
from tests.support import ROOT
from tests.support.redis_server import RedisServer


def _medians(redis_cpu: float, c1: float, c32: float) -> dict[str, dict[str, float]]:
    return {
        "memory": {"c32_cpu_us": 50.0},
        "redis": {"c32_cpu_us": redis_cpu, "c1_rps": c1, "c32_rps": c32},
        "round_trip": {"c1_cpu_us": 20.0, "c32_cpu_us": 12.0},
    }


def test_the_cpu_goal_is_twice_memory_plus_the_round_trip() -> None:
    met = _state_goals(_medians(112.0, 2000, 5000))
    assert "a bare PING over mockllm's pipelined connection costs its client 12.0 µs" in met[0]
    assert met[1].endswith("112.0 <= 112.0 µs/req  PASS"), met[1]
    missed = _state_goals(_medians(112.1, 2000, 5000))
    assert missed[1].endswith("112.1 <= 112.0 µs/req  FAIL"), missed[1]


def test_c32_throughput_below_c1s_fails() -> None:
    assert _state_goals(_medians(100.0, 2000, 5000))[2].endswith("PASS")
    assert _state_goals(_medians(100.0, 5000, 2000))[2].endswith("FAIL")


def test_no_round_trip_no_verdict() -> None:
    """An older record without the round trip: the rows are printed, no verdict made up."""
    assert _state_goals({"memory": {}, "redis": {}}) == []


def test_the_round_trip_probe_measures_pings(redis: RedisServer) -> None:
    """`python -m bench.state URL SECONDS`: CPU µs per PING at c=1 and c=32, as JSON."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.state", redis.url(), "0.2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    figures = json.loads(done.stdout)
    assert set(figures) == {"c1_cpu_us", "c32_cpu_us"}
    assert all(0 < value < 10_000 for value in figures.values()), figures
