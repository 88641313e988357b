"""Runs sharing one server (docs/ci.md, "One server for several jobs"): real `pytest`
processes with --mockllm-url against one `mockllm serve --log`. Two runs at once never
share a session; a run that failed between two passing reruns fails in `mockllm report`;
a run given the other's run id is told so, not blamed on its agent."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import ServerProcess, running_server
from tests.support.hypothesis_profiles import examples

SUITE = '''
import os
import subprocess
import sys

import openai
import pytest

TOOLS = [{"type": "function", "function": {"name": "get_weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


def agent(base_url, between=None):
    """weather-single's loop; AGENT_BUG=1 never sends the call's result back."""
    client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    while True:
        message = client.chat.completions.create(
            model="m", messages=messages, tools=TOOLS
        ).choices[0].message
        if not message.tool_calls:
            return message.content
        if between:
            between()
        messages.append(message.model_dump(exclude_none=True))
        if os.environ.get("AGENT_BUG") == "1":
            return None
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "18 °C"})


def run_again():
    """NESTED=1: another run of this file, whole, while this test holds its session."""
    env = {k: v for k, v in os.environ.items() if k != "NESTED"}
    done = subprocess.run([sys.executable, "-m", "pytest", *os.environ["NESTED_ARGS"].split()],
                          env=env, capture_output=True, text=True)
    print("NESTED", done.returncode, done.stdout[-3000:])


@pytest.mark.parametrize("n", range(3))
def test_weather(mockllm, n):
    nested = os.environ.get("NESTED") == "1" and n == 0
    answer = agent(mockllm.url("weather-single"), run_again if nested else None)
    assert answer is not None and "18" in answer
    mockllm.assert_tool_called("get_weather", {"city": "Paris"}, times=1)
    assert len(mockllm.requests()) == 2
    mockllm.assert_clean_verdict()
'''


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with running_server(scenarios=()) as server:
        yield server


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "test_agent.py").write_text(SUITE, "utf-8")
    return tmp_path


def pytest_args(server: ServerProcess, *more: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:randomly",
            "--mockllm-url", server.url, *more, "test_agent.py"]  # fmt: skip


def run(suite: Path, args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("MOCKLLM_RUN_ID", "AGENT_BUG")}
    return subprocess.run(
        args, cwd=suite, env={**clean, **env}, capture_output=True, text=True, timeout=300
    )


def reset_all(server: ServerProcess) -> None:
    answer = server.http.post("/_mockllm/reset", headers={"content-type": "application/json"})
    answer.raise_for_status()


def logged(server: ServerProcess) -> list[dict[str, Any]]:
    assert server.log_file is not None
    lines = server.log_file.read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


def report(server: ServerProcess, *more: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mockllm", "report", str(server.log_file), *more]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_two_runs_at_once_of_a_correct_suite_pass_each_in_its_own_sessions(
    server: ServerProcess, suite: Path
) -> None:
    reset_all(server)
    start = len(logged(server))
    for _ in range(3):  # the clash was a race: several tries (it failed 9 runs in 10)
        env = {k: v for k, v in os.environ.items() if k not in ("MOCKLLM_RUN_ID", "AGENT_BUG")}
        runs = [
            subprocess.Popen(
                pytest_args(server, "-p", "no:cacheprovider"),
                cwd=suite,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for _ in range(2)
        ]
        outputs = [p.communicate(timeout=300)[0] for p in runs]
        assert [p.returncode for p in runs] == [0, 0], "\n".join(outputs)
    entries = logged(server)[start:]
    runs_seen = {e["run"] for e in entries}
    assert len(runs_seen) == 6  # a run id per run
    assert all(e["session"].endswith("~" + e["run"]) for e in entries)
    assert not any("clients" in e for e in entries)  # nobody reset a session another held


def test_a_run_given_the_other_runs_id_is_told_another_client_used_its_session(
    server: ServerProcess, suite: Path
) -> None:
    """Deterministic: the second run runs whole inside the first one's first test."""
    inner = " ".join(pytest_args(server, "-p", "no:cacheprovider")[3:])
    shared = run(
        suite, pytest_args(server, "-p", "no:cacheprovider", "-s"),
        NESTED="1", NESTED_ARGS=inner, MOCKLLM_RUN_ID="ci-7",
    )  # fmt: skip
    out = shared.stdout
    assert shared.returncode == 1, out
    said = "two clients (c"
    assert "NESTED 1" in out  # the run inside failed too: its session was held
    assert "ERROR at teardown of test_weather[0]" in out and said in out, out
    assert "both runs are named 'ci-7': give each run its own run id (docs/ci.md)" in out
    # The other side: by default each run draws its own id, and both pass.
    apart = run(
        suite, pytest_args(server, "-p", "no:cacheprovider", "-s"),
        NESTED="1", NESTED_ARGS=inner,
    )  # fmt: skip
    assert apart.returncode == 0 and "NESTED 0" in apart.stdout, apart.stdout
    assert said not in apart.stdout


def test_a_failing_run_between_two_passing_reruns_fails_in_the_report(
    server: ServerProcess, suite: Path, tmp_path: Path
) -> None:
    for run_id in ("", "ci-42"):  # drawn per run, and fixed by the CI (epochs tell them apart)
        reset_all(server)
        assert server.log_file is not None
        server.log_file.write_text("")
        outcomes = [
            run(suite, pytest_args(server, "-p", "no:cacheprovider", "-k", "0"),
                AGENT_BUG=bug, MOCKLLM_RUN_ID=run_id).returncode
            for bug in ("0", "1", "0")
        ]  # fmt: skip
        assert outcomes == [0, 1, 0]
        judged = report(server, "--html", str(tmp_path / "report.html"))
        assert judged.returncode == 1, judged.stdout
        lines = judged.stdout.splitlines()
        assert lines[0].startswith("✓ verdict: pass  test_weather-0-")
        assert lines[0].endswith("(2 requests) · run 1 of 3")
        assert lines[1].startswith("✗ verdict: FAIL  test_weather-0-")
        assert lines[1].endswith("(1 request) · run 2 of 3 (a rerun)")
        assert "! calls_answered: call_" in lines[2] and "was never answered" in lines[2]
        assert lines[3].endswith("(2 requests) · run 3 of 3 (a rerun)")
        assert "1 of 3 sessions failed" in judged.stdout
        assert "wrote " in judged.stdout and "(3 sessions, 5 requests)" in judged.stdout
        page = (tmp_path / "report.html").read_text("utf-8")
        assert page.count('"ok": false') + page.count('"ok":false') >= 1


def test_lf_reruns_the_failed_test_in_a_run_of_its_own(server: ServerProcess, suite: Path) -> None:
    reset_all(server)
    assert server.log_file is not None
    server.log_file.write_text("")
    cache = ["-o", f"cache_dir={suite / '.cache'}"]
    first = run(suite, pytest_args(server, *cache), AGENT_BUG="1")
    assert first.returncode == 1
    again = run(suite, pytest_args(server, *cache, "--lf"))
    assert again.returncode == 0 and "3 passed" in again.stdout, again.stdout
    runs = list(dict.fromkeys(e["run"] for e in logged(server)))
    assert len(runs) == 2  # --lf is a new run: its own id, its own sessions
    judged = report(server)
    assert judged.returncode == 1  # the failed run stays failed in the log
    fails = [line for line in judged.stdout.splitlines() if line.startswith("✗")]
    assert len(fails) == 3 and all(f"~{runs[0]} " in line for line in fails)
    reran = [line for line in judged.stdout.splitlines() if "(a rerun)" in line]
    assert len(reran) == 3 and all(
        line.startswith("✓") and f"~{runs[1]} " in line for line in reran
    )


def test_xdist_workers_of_one_run_share_its_run_id(server: ServerProcess, suite: Path) -> None:
    reset_all(server)
    assert server.log_file is not None
    server.log_file.write_text("")
    args = pytest_args(server, "-p", "no:cacheprovider")
    args[args.index("-n") + 1] = "2"
    done = run(suite, args)
    assert done.returncode == 0, done.stdout
    assert len({e["run"] for e in logged(server)}) == 1
    fixed = run(suite, [*args[:-1], "--mockllm-run-id", "nightly.3", "test_agent.py"])
    assert fixed.returncode == 0, fixed.stdout
    assert {e["run"] for e in logged(server)[-6:]} == {"nightly.3"}
    bad = run(suite, [*args[:-1], "--mockllm-run-id", "a b", "test_agent.py"])
    assert bad.returncode == 4 and "--mockllm-run-id: 'a b' is not a run id" in bad.stderr


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    session=st.one_of(st.none(), st.text(max_size=60)),
    client=st.one_of(st.none(), st.text(max_size=80)),
    release=st.booleans(),
)
def test_hostile_resets_and_releases_never_get_a_5xx_and_the_log_stays_readable(
    server: ServerProcess, session: str | None, client: str | None, release: bool
) -> None:
    params = {k: v for k, v in (("session", session), ("client", client)) if v is not None}
    route = "/_mockllm/release" if release else "/_mockllm/reset"
    answer = server.http.post(route, params=params, headers={"content-type": "application/json"})
    assert answer.status_code in (200, 400), answer.text
    assert ("error" in answer.json()) == (answer.status_code == 400)
    if not release and answer.status_code == 200:
        assert re.fullmatch(r"[0-9a-f]{8}", answer.json()["epoch"])
    served = server.http.post(
        "/s/hello/hostile~r1/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert served.status_code == 200  # the server keeps serving
    (entry, *_) = server.requests(session="hostile~r1")
    assert entry["run"] == "r1" and re.fullmatch(r"[0-9a-f]{8}", entry["epoch"])
    assert "clients" not in entry or len(entry["clients"]) == 2
