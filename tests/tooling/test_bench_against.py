"""The plumbing of `python -m bench --against REF` and of the profile's phase lines.

Smoke tests only: a baseline tree is exported, starts and answers, the table gives it a
column and a ratio per row, the profile prints a line per phase. No timing is asserted.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.against import AgainstError, baseline, export
from bench.report import Outcome, table
from bench.run import Settings
from bench.servers import (
    MOCKLLM,
    PARSE_FLOOR,
    STARLETTE_FLOOR,
    Context,
    free_port,
    launch,
    stop,
    wait_answered,
)
from tests.support import ROOT


def test_a_baseline_tree_is_exported_and_its_server_answers(tmp_path: Path) -> None:
    trees = tmp_path / "trees"
    server = baseline("HEAD", trees)
    assert server.role == "baseline" and server.name.startswith("mockllm@")
    tree = next(trees.iterdir())
    assert (tree / "mockllm" / "__init__.py").exists()
    assert (tree / ".bench-scenarios" / "bench-tool-call.yaml").exists()
    running = launch(server, Context(free_port(), tmp_path, "event"), None, tmp_path / "b.log")
    try:
        wait_answered(running)  # a 200 to bench-tool-call, or it raises with the log's tail
        # the server is REF's code: its modules come from the exported tree
        command = (Path("/proc") / str(running.pid) / "environ").read_bytes()
        assert f"PYTHONPATH={tree}".encode() in command
    finally:
        stop(running)
    assert export("HEAD", trees) == tree  # made once per commit, then reused


def test_an_unknown_ref_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(AgainstError, match="no commit 'no-such-ref-xyz'"):
        baseline("no-such-ref-xyz", tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--against", "no-such-ref-xyz"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "no commit 'no-such-ref-xyz'" in done.stderr


def test_the_table_gives_the_baseline_a_column_and_a_ratio(tmp_path: Path) -> None:
    ref = MOCKLLM.__class__("mockllm@abc1234", "baseline", "the baseline", MOCKLLM.command)
    samples = {
        "mockllm": {"cold_ns_c32_cpu_us": [60.0]},
        "mockllm@abc1234": {"cold_ns_c32_cpu_us": [40.0]},
        "starlette": {"cold_ns_c32_cpu_us": [30.0]},
    }
    settings = Settings(1, 1, 0.1, 0, 1, 10, False, None, "event", tmp_path)
    env = {"time": "t", "commit": "c", "cpu": "cpu", "cpus": 2, "wrk": None}
    outcome = Outcome([MOCKLLM, ref, STARLETTE_FLOOR], samples, settings, env)
    lines = table(outcome).splitlines()
    header = next(line for line in lines if line.startswith("metric")).split()
    assert header[2:7] == [
        "mockllm",
        "mockllm@abc1234",
        "starlette",
        "xstarlette",
        "xmockllm@abc1234",
    ]
    row = next(line for line in lines if line.startswith("distinct non-stream c=32 server CPU"))
    # this tree 60 / the floor 30, this tree / the baseline 40, the baseline / the floor
    assert row.split()[-6:-3] == ["2.00x", "1.50x", "1.33x"], row
    assert math.isclose(outcome.value("mockllm@abc1234", "cold_ns_c32_cpu_us"), 40.0)


def test_the_profile_prints_a_line_per_phase() -> None:
    command = [sys.executable, "-m", "bench.profile", "--requests", "20", "--fill", "0"]
    command += ["--only", "cold_ns,cold_st", "--top", "0"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    start = lines.index(
        "by phase (own µs per request, wall clock, best of 5 slices; bench/phases.py):"
    )
    for key, line in zip(("cold_ns", "cold_st"), lines[start + 1 : start + 3], strict=True):
        assert line.startswith(key), line
        for phase in ("parse", "validate", "locate", "answer", "render", "deliver", "log"):
            # each phase found in this tree: a renamed function would read 0.0 (its time
            # charged to its caller's phase, as the memory store's answer once was)
            figure = re.search(rf" {phase} +([\d.]+)", line)
            assert figure is not None, (phase, line)
            # a plain scenario's turn that calls no tool has nothing to locate (Scenario.plain)
            assert float(figure[1]) > 0 or (phase, key) == ("locate", "cold_st"), (phase, line)
    assert not any(line.startswith("(not in this tree") for line in lines)


def test_a_history_is_held_to_the_parse_floor_and_a_wire_to_starlette(tmp_path: Path) -> None:
    # 200 µs is 4x starlette's 50 but 1.33x the parse floor's 150: within the history's 1.5x
    # of the parse floor; the same ratio to starlette fails a wire's 1.3x.
    samples = {
        "mockllm": {"hist_200_c32_cpu_us": [200.0], "cold_ns_c32_cpu_us": [200.0]},
        "starlette": {"hist_200_c32_cpu_us": [50.0], "cold_ns_c32_cpu_us": [50.0]},
        "starlette_json": {"hist_200_c32_cpu_us": [150.0], "cold_ns_c32_cpu_us": [150.0]},
    }
    settings = Settings(1, 1, 0.1, 0, 1, 10, False, None, "event", tmp_path)
    env = {"time": "t", "commit": "c", "cpu": "cpu", "cpus": 2, "wrk": None}
    outcome = Outcome([MOCKLLM, STARLETTE_FLOOR, PARSE_FLOOR], samples, settings, env)
    verdicts = outcome.verdicts()
    assert verdicts["hist_200_c32_cpu_us"] is True
    assert verdicts["cold_ns_c32_cpu_us"] is False
    row = next(line for line in table(outcome).splitlines() if line.startswith("history of 200"))
    assert row.endswith("<=1.5x starlette_json  PASS"), row
    # without the parse floor in the run there is no verdict, not one against starlette
    measured = {name: samples[name] for name in ("mockllm", "starlette")}
    alone = Outcome([MOCKLLM, STARLETTE_FLOOR], measured, settings, env).verdicts()
    assert alone["hist_200_c32_cpu_us"] is None


def test_a_phase_whose_module_a_tree_lacks_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # `--against` profiles an older tree with this tree's phases: a module it does not have
    # yet (serving/redis_store.py at 746315f) must leave that entry out, not stop the run
    from bench import phases

    extra = ("answer", "mockllm.serving.not_in_this_tree", "Store.answer_turn")
    monkeypatch.setattr(phases, "PHASES", (*phases.PHASES, extra))
    with phases.instrumented(phases.Clock()) as missing:
        assert missing == []  # every phase still has an entry this tree has
