"""Issue 34's verdict that cannot be fooled, through real `pytest` runs against a real
`mockllm serve --log`: a marker's waiver is in the log, so the test, its report section,
`mockllm report`, `report --json` and `report --html` all give the same label; strict by
default (a test with no verdict assertion fails when its agent leaves a call unanswered,
and passes when it opts out); an empty session is no clean pass."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from selenium.webdriver.common.by import By

from mockllm.judge.verdict import FAIL, PASS
from tests.e2e.admin.test_cli import mockllm as run_mockllm
from tests.support import ServerProcess, running_server
from tests.support.browser import Viewer, chromium, missing
from tests.support.hypothesis_profiles import examples
from tests.support.viewer_data import embedded

pytest_plugins = ["pytester"]

AGENT = '''
import openai

TOOLS = [{"type": "function", "function": {"name": "get_weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
USER = [{"role": "user", "content": "Weather in Paris?"}]


def ask(url):
    return openai.OpenAI(base_url=url, api_key="k", max_retries=0)


def forgetful(url):
    """Asks, gets a call for get_weather, and stops: the call is never answered."""
    ask(url).chat.completions.create(model="m", messages=USER, tools=TOOLS)


def careful(url):
    """Runs every call the model asks for and sends its result back."""
    client, messages = ask(url), list(USER)
    while True:
        message = client.chat.completions.create(
            model="m", messages=messages, tools=TOOLS
        ).choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "18 C"})
'''

WAIVED = f"{PASS} (1 waived)"
REASON = "this agent stops after asking, by design"


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with running_server("--quiet") as server:
        yield server


def run(
    pytester: pytest.Pytester, server: ServerProcess, tests: str, *args: str
) -> pytest.RunResult:
    pytester.makepyfile(agent=AGENT, test_agent=tests)
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--mockllm-url", server.url, *args
    )


def session_of(server: ServerProcess, test: str) -> str:
    """The session the plugin named after `test` (its name is the plugin's business)."""
    names = {str(e["session"]) for e in server.requests() if str(e["session"]).startswith(test)}
    assert len(names) == 1, names
    return names.pop()


def report_lines(server: ServerProcess, session: str, *more: str) -> list[str]:
    assert server.log_file is not None
    done = run_mockllm("report", str(server.log_file), "--session", session, *more)
    return done.stdout.splitlines()


# --- waivers where the verdict is judged ----------------------------------------------------

MARKED = f'''
import pytest
from agent import forgetful

@pytest.mark.mockllm(allow={{"calls_answered": "{REASON}"}})
def test_marked_waiver(mockllm):
    forgetful(mockllm.url("weather-single"))
    print("LABEL", mockllm.verdict().label)

@pytest.mark.mockllm(allow={{"calls_answered": "{REASON}"}})
def test_marked_waiver_then_a_failing_assertion(mockllm):
    forgetful(mockllm.url("weather-single"))
    mockllm.assert_tool_requested("refund")
'''


def test_a_marker_waiver_gives_one_label_in_the_test_the_section_report_json_and_html(
    pytester: pytest.Pytester, server: ServerProcess, tmp_path: Path
) -> None:
    pytest_html = tmp_path / "pytest.html"
    result = run(pytester, server, MARKED, "-s", f"--mockllm-html={pytest_html}")
    result.assert_outcomes(passed=1, failed=1)  # strict: the waived check fails nothing
    out = result.stdout.str()
    assert f"LABEL {WAIVED}" in out
    # The failing assertion's transcript (printed once: no second copy in a section under
    # it) carries the waived label, and no other.
    failure = out[out.index("test_marked_waiver_then_a_failing_assertion") :]
    # (the short summary repeats the whole message when pytest runs on CI: not counted)
    failure = failure.split("short test summary info")[0]
    assert failure.count(f"{WAIVED} (15 checks)") == 1, failure
    assert FAIL not in failure
    assert "[by @pytest.mark.mockllm(allow=...) on test_agent.py::test_marked_waiver_then" in out

    session = session_of(server, "test_marked_waiver-")
    by = "[by @pytest.mark.mockllm(allow=...) on test_agent.py::test_marked_waiver]"
    assert report_lines(server, session) == [
        f"{WAIVED}  {session} (1 request)",
        f"     ~ calls_answered waived: {REASON} {by}",
        "1 session: all ok",
    ]
    [judged] = [json.loads(line) for line in report_lines(server, session, "--json")]
    assert judged == server.http.get("/_mockllm/verdict", params={"session": session}).json()
    assert judged["label"] == WAIVED and judged["ok"] is True
    assert judged["allowance"] == {
        "allow": {"calls_answered": REASON},
        "origin": "@pytest.mark.mockllm(allow=...) on test_agent.py::test_marked_waiver",
    }
    page = tmp_path / "report.html"
    report_lines(server, session, "--html", str(page))
    assert embedded(page.read_text())["verdicts"][session]["label"] == WAIVED
    # pytest's own HTML report of the run (--mockllm-html) says the same.
    assert embedded(pytest_html.read_text())["verdicts"][session]["label"] == WAIVED


# --- strict by default ----------------------------------------------------------------------

STRICT = """
import pytest
from agent import careful, forgetful

def test_leaves_a_call_unanswered(mockllm):
    forgetful(mockllm.url("weather-single"))

def test_answers_every_call(mockllm):
    careful(mockllm.url("weather-single"))

def test_makes_no_request(mockllm):
    mockllm.url("weather-single")

@pytest.mark.mockllm(allow={"requests_made": "only builds the URL"})
def test_makes_no_request_and_says_so(mockllm):
    mockllm.url("weather-single")

@pytest.mark.mockllm(strict=False)
def test_leaves_a_call_unanswered_and_opts_out(mockllm):
    forgetful(mockllm.url("weather-single"))

def test_fails_on_its_own(mockllm):
    forgetful(mockllm.url("weather-single"))
    assert False, "planted"
"""


def test_strict_fails_a_test_whose_agent_leaves_a_call_unanswered_at_teardown(
    pytester: pytest.Pytester, server: ServerProcess
) -> None:
    result = run(pytester, server, STRICT)
    # Fails: the unanswered call (at teardown) and the empty session; passes: the careful
    # agent, the waived empty session and the opted-out test; the planted failure fails
    # once (its body's failure, not again at teardown).
    result.assert_outcomes(passed=5, failed=1, errors=2)  # pytest counts a body that passed
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_leaves_a_call_unanswered*",
            f"*mockllm: {FAIL} (1 of 15 checks failed) in session "
            "'test_leaves_a_call_unanswered-*', judged at teardown:",
            "*✗ calls_answered: call_* (get_weather, turn 0, request (log seq *)) was never answered",
            "*strict by default*@pytest.mark.mockllm(strict=False)*--mockllm-strict=off*",
        ]
    )
    # The transcript is in the failure itself (read while the server runs), once.
    assert re.search(
        r"in the ini file \(docs/pytest.md\)\.\n\nmockllm session 'test_leaves_a_call_unanswered-.*"
        r"\n  request 1 \(log seq \d+\) · turn 0 · openai-chat",
        out,
    )
    assert not re.search(r"-+ mockllm -+\nmockllm session 'test_leaves_a_call_unanswered-", out)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_makes_no_request *",
            f"*mockllm: {FAIL} (no requests) (1 of 15 checks failed)*",
            "*✗ requests_made: no request reached this session*",
        ]
    )
    assert "ERROR at teardown of test_fails_on_its_own" not in out
    assert "ERROR at teardown of test_answers_every_call" not in out


@pytest.mark.parametrize(
    "opt_out",
    [["--mockllm-strict=off"], ["-o", "mockllm_strict=false"]],
    ids=["flag", "ini"],
)
def test_strict_is_turned_off_by_the_flag_or_the_ini_option(
    pytester: pytest.Pytester, server: ServerProcess, opt_out: list[str]
) -> None:
    result = run(pytester, server, STRICT, *opt_out)
    result.assert_outcomes(passed=5, failed=1)


def test_the_marker_turns_strict_back_on_under_the_flag_and_refuses_a_non_bool(
    pytester: pytest.Pytester, server: ServerProcess
) -> None:
    tests = """
import pytest
from agent import forgetful

@pytest.mark.mockllm(strict=True)
def test_strict_anyway(mockllm):
    forgetful(mockllm.url("weather-single"))

@pytest.mark.mockllm(strict="yes")
def test_a_wrong_value(mockllm):
    forgetful(mockllm.url("weather-single"))
"""
    result = run(pytester, server, tests, "--mockllm-strict=off")
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(["*@pytest.mark.mockllm(strict='yes'): True or False*"])


# --- the allowance's record, honest names, all_turns_served, report --json --------------------

AGENT_CODE: dict[str, object] = {}
exec(AGENT, AGENT_CODE)  # the same agents the pytest runs above use
forgetful, careful = AGENT_CODE["forgetful"], AGENT_CODE["careful"]


def test_an_allowance_is_a_record_in_the_log_the_ring_and_the_file(server: ServerProcess) -> None:
    from mockllm import Client

    session = Client(server.url).session("allowance-record")
    session.reset()
    forgetful(session.url("weather-single"))  # type: ignore[operator]
    session.allow({"calls_answered": REASON})
    records = [e for e in server.requests(session=session.name) if e["api"] == "allowance"]
    assert [r["allowance"] for r in records] == [
        {"allow": {"calls_answered": REASON}, "origin": "Session.allow()"}
    ]
    assert [e.api for e in session.requests()] == ["openai-chat"]  # requests only
    assert server.log_file is not None
    logged = [json.loads(line) for line in server.log_file.read_text().splitlines()]
    assert records[0]["seq"] in {e["seq"] for e in logged if e["api"] == "allowance"}
    # Forgetting the requests keeps the allowance; a reset ends it, in the file too.
    session.clear()
    forgetful(session.url("weather-single"))  # type: ignore[operator]
    assert session.verdict().label == WAIVED
    assert report_lines(server, session.name)[0].startswith(WAIVED)
    session.reset()
    forgetful(session.url("weather-single"))  # type: ignore[operator]
    assert session.verdict().label == FAIL
    # The report judges each use of the session apart (judge/uses.py): the one before the
    # reset kept its waiver, the one after it has none.
    before, *_, after, why, summary = report_lines(server, session.name)
    assert before.startswith(WAIVED) and before.endswith("(2 requests) · run 1 of 2"), before
    assert after == f"{FAIL}  {session.name} (1 request) · run 2 of 2 (a rerun)", after
    assert "calls_answered" in why and summary == "1 of 2 sessions failed"
    ended = [
        json.loads(line)
        for line in server.log_file.read_text().splitlines()
        if '"api": "allowance"' in line and json.loads(line)["session"] == session.name
    ][-1]
    assert (ended["method"], ended["path"], ended["allowance"]) == (
        "POST",
        "/_mockllm/reset",
        {"allow": {}, "origin": "reset"},
    )


def test_a_bare_put_says_where_it_came_from_and_a_bad_one_is_refused(
    server: ServerProcess,
) -> None:
    put = server.http.put(
        "/_mockllm/allow", params={"session": "bare-put"}, json={"calls_answered": REASON}
    )
    assert put.json()["origin"] == "PUT /_mockllm/allow"
    [record] = server.requests(session="bare-put")
    assert record["allowance"]["origin"] == "PUT /_mockllm/allow"
    wrong = server.http.put(
        "/_mockllm/allow", params={"session": "bare-put-2"}, json={"calls_answerd": "x"}
    )
    assert wrong.status_code == 400 and "did you mean 'calls_answered'" in wrong.text
    assert server.requests(session="bare-put-2") == []


def test_tool_requested_is_not_tool_result_fed_back(server: ServerProcess) -> None:
    from mockllm import Client

    client = Client(server.url)
    asked = client.session("asked-only")
    asked.reset()
    forgetful(asked.url("weather-single"))  # type: ignore[operator]
    asked.assert_tool_requested("get_weather", {"city": "Paris"}, times=1)
    with pytest.raises(AssertionError) as failed:
        asked.assert_tool_result_fed_back("get_weather")
    assert re.search(
        r"mockllm: the model asked for get_weather once, but no result came back for "
        r"call_\w+ \(turn 0\): the harness did not run it, or did not send its result",
        str(failed.value),
    ), failed.value
    ran = client.session("asked-and-ran")
    ran.reset()
    careful(ran.url("weather-single"))  # type: ignore[operator]
    calls = ran.assert_tool_result_fed_back("get_weather", {"city": "Paris"}, times=1)
    assert calls.last.result is not None and calls.last.result.content == "18 C"
    with pytest.raises(AssertionError, match="the model never asked for refund"):
        ran.assert_tool_result_fed_back("refund")
    # The old name still works, and says it is deprecated.
    with pytest.deprecated_call(match="assert_tool_called .* now assert_tool_requested"):
        asked.assert_tool_called("get_weather")


def test_all_turns_served_fails_an_agent_that_stopped_early(server: ServerProcess) -> None:
    from mockllm import Client

    client = Client(server.url)
    early = client.session("stopped-early")
    early.reset()
    forgetful(early.url("weather-single"))  # type: ignore[operator]
    with pytest.raises(AssertionError) as failed:
        early.assert_all_turns_served()
    assert "- scenario 'weather-single': 1 of 2 scripted turns never served (turn 1)" in str(
        failed.value
    )
    whole = client.session("went-the-whole-way")
    whole.reset()
    careful(whole.url("weather-single"))  # type: ignore[operator]
    whole.assert_all_turns_served()


def test_report_json_prints_the_verdict_objects_of_the_verdict_route(
    server: ServerProcess,
) -> None:
    from mockllm import Client

    client = Client(server.url)
    for name, agent in (("json-careful", careful), ("json-forgetful", forgetful)):
        client.session(name).reset()
        agent(client.session(name).url("weather-single"))  # type: ignore[operator]
    assert server.log_file is not None
    done = run_mockllm("report", str(server.log_file), "--json")
    assert done.returncode == 1  # some session of the log failed
    judged = {v["session"]: v for v in map(json.loads, done.stdout.splitlines())}
    for name in ("json-careful", "json-forgetful"):
        route = server.http.get("/_mockllm/verdict", params={"session": name}).json()
        assert judged[name] == route
    assert judged["json-careful"]["label"] == PASS
    assert judged["json-forgetful"]["label"] == FAIL
    both = run_mockllm("report", str(server.log_file), "--json", "--transcript")
    assert both.returncode == 2 and "--transcript text: one" in both.stderr


def test_an_allowance_made_on_one_replica_of_a_fleet_is_judged_by_the_other(redis: Any) -> None:
    """On a shared store the record goes through the fleet's one log: before, each replica
    kept the allowances it was given in its own memory."""
    from mockllm import Client

    shared = ("--quiet", "--state", redis.url())
    with running_server(*shared) as one, running_server(*shared) as two:
        session = Client(one.url).session("fleet-allowance")
        forgetful(session.url("weather-single"))  # type: ignore[operator]
        session.allow({"calls_answered": REASON}, origin="replica one")
        judged = Client(two.url).session("fleet-allowance").verdict()
        assert judged.label == WAIVED
        assert judged.raw["allowance"] == {
            "allow": {"calls_answered": REASON},
            "origin": "replica one",
        }


@settings(max_examples=examples(30), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(origin=st.text(max_size=400), session=st.text(min_size=1, max_size=30))
@example(origin="x", session="a\u2028line separator")  # `report --json` keeps one a line
def test_any_origin_is_recorded_bounded_and_the_log_stays_readable(
    server: ServerProcess, origin: str, session: str
) -> None:
    put = server.http.put(
        "/_mockllm/allow",
        params={"session": session, "origin": origin},
        json={"calls_answered": REASON},
    )
    assert put.status_code == 200, put.text
    said = put.json()["origin"]
    assert said == (" ".join(origin.split()) or "PUT /_mockllm/allow")
    records = [e for e in server.requests(session=session) if e["api"] == "allowance"]
    assert records[-1]["allowance"]["origin"] == said[:300]
    assert server.http.get("/_mockllm/health").json()["status"] == "ok"
    assert server.log_file is not None
    done = run_mockllm("report", str(server.log_file), "--json")
    assert done.returncode in (0, 1), done.stderr
    assert all(json.loads(line)["label"] for line in done.stdout.splitlines())


@pytest.mark.skipif(missing() is not None, reason=str(missing()))
def test_the_live_viewer_lists_requests_not_allowance_records_and_shows_the_waiver() -> None:
    from mockllm import Client

    with running_server("--quiet") as fresh:
        client = Client(fresh.url)
        client.session("only-a-record").allow({"calls_answered": REASON})  # no request yet
        waived = client.session("viewer-waived")
        waived.allow({"calls_answered": REASON})  # the marker's order: before the requests
        forgetful(waived.url("weather-single"))  # type: ignore[operator]
        with chromium() as driver:
            viewer = Viewer(driver).open(f"{fresh.url}/_mockllm/ui")
            viewer.wait(lambda d: viewer.names() == ["viewer-waived"])
            badge = viewer.sessions()[0].find_element(By.CSS_SELECTOR, ".badge.verdict")
            assert badge.text == WAIVED
            assert driver.find_element(By.ID, "count").text.endswith("1 session, 1 request")
            # Polling goes on past the records: a later request of the session shows.
            careful(client.session("viewer-later").url("weather-single"))  # type: ignore[operator]
            viewer.wait(lambda d: "viewer-later" in viewer.names(), timeout=15)
