"""One verdict, one meaning: the same log gives the same labels in `mockllm report`, its
HTML, the live viewer (a real Chromium) and the transcript; allowances show as waived
everywhere. The log is a real run: the official SDKs against a real `mockllm serve --log`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selenium.webdriver.common.by import By

from mockllm.errors import ScenarioError
from mockllm.judge.verdict import CHECK_NAMES, FAIL, PASS, verdict
from mockllm.loading.loader import load_text
from tests.support import BUNDLED, ROOT, ServerProcess, running_server
from tests.support.browser import Viewer, chromium, missing
from tests.support.hypothesis_profiles import examples

pytest_plugins = ["pytester"]

TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
ANTHROPIC_TOOLS: list[Any] = [
    {"name": "lookup_order", "input_schema": {"type": "object"}},
    {"name": "get_weather", "input_schema": {"type": "object"}},
]
DOC = (ROOT / "docs" / "verdict.md").read_text()
# The scenario docs/verdict.md shows, served as it is printed there.
WAIVING = re.findall(r"```yaml\n(.*?)```", DOC, re.S)[0]
EXPECTED = {
    "clean": PASS,
    "refused": FAIL,  # a provider rule refused its second request: the verdict fails
    "waived": f"{PASS} (1 waived)",
    "exhausted": FAIL,
    "unwaived": FAIL,  # the same agent on a scenario without the allowance
}


def openai_client(server: ServerProcess, scenario: str, session: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/s/{scenario}/{session}/v1", api_key="t")


def anthropic_client(server: ServerProcess, scenario: str, session: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=f"{server.url}/s/{scenario}/{session}", api_key="t")


def weather_loop(client: openai.OpenAI, rounds: int = 1) -> None:
    """A correct loop, run `rounds` times over the same history (past a scenario's end)."""
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    reply = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
    call = reply.choices[0].message.tool_calls[0]
    messages += [
        reply.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "18 °C"},
    ]
    for _ in range(rounds):
        done = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        messages.append(done.choices[0].message.model_dump(exclude_none=True))
        messages.append({"role": "user", "content": "And tomorrow?"})


def text_before_result(server: ServerProcess) -> None:
    """Anthropic: a user turn whose text comes before the tool_result block, which the API
    refuses (anthropic.tool_results_not_first)."""
    client = anthropic_client(server, "weather-single", "refused")
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.messages.create(
        model="m", max_tokens=100, messages=messages, tools=ANTHROPIC_TOOLS
    )
    use = next(b for b in first.content if b.type == "tool_use")
    messages += [
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "here it is"},
                {"type": "tool_result", "tool_use_id": use.id, "content": "18 °C"},
            ],
        },
    ]
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(model="m", max_tokens=100, messages=messages, tools=ANTHROPIC_TOOLS)


def stops_at_max_steps(server: ServerProcess, scenario: str, session: str) -> None:
    """An agent with max_steps=1: it asks once and stops, leaving the call unanswered."""
    client = anthropic_client(server, scenario, session)
    messages: list[Any] = [{"role": "user", "content": "Where is A2024?"}]
    reply = client.messages.create(
        model="m", max_tokens=100, messages=messages, tools=ANTHROPIC_TOOLS
    )
    assert reply.stop_reason == "tool_use"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("scenarios")
    (folder / "stops-at-max-steps.yaml").write_text(WAIVING)
    plain = re.sub(r"\n\s*allow:\n(\s+\w+: .*\n)+", "\n", WAIVING).replace(
        "stops-at-max-steps", "no-allowance"
    )
    (folder / "no-allowance.yaml").write_text(plain)
    with running_server(scenarios=(BUNDLED, folder)) as server:
        weather_loop(openai_client(server, "weather-single", "clean"))
        text_before_result(server)
        stops_at_max_steps(server, "stops-at-max-steps", "waived")
        stops_at_max_steps(server, "no-allowance", "unwaived")
        with pytest.raises(openai.BadRequestError):
            weather_loop(openai_client(server, "weather-single", "exhausted"), rounds=2)
        yield server


def report(log: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mockllm", "report", str(log), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def cli_labels(stdout: str) -> dict[str, str]:
    """`LABEL  SESSION (N requests)` lines of `mockllm report`."""
    found = re.findall(r"^(\S.*?)  (\S+) \(\d+ requests?\)$", stdout, re.M)
    return {session: label for label, session in found}


def test_report_labels_each_session_by_the_one_verdict(run: ServerProcess) -> None:
    assert run.log_file is not None
    done = report(run.log_file)
    assert done.returncode == 1, done.stderr
    assert cli_labels(done.stdout) == EXPECTED
    lines = done.stdout.splitlines()
    refused = lines.index(f"{FAIL}  refused (2 requests)")
    assert re.match(
        r"     ! requests_accepted: request \(log seq \d+\) \(turn 1\) was refused: 400 "
        "anthropic.tool_results_not_first: messages.2: ",
        lines[refused + 1],
    )
    waived = lines.index(f"{PASS} (1 waived)  waived (1 request)")
    assert lines[waived + 1] == "     ~ calls_answered waived: the agent stops at max_steps"
    exhausted = lines.index(f"{FAIL}  exhausted (3 requests)")
    assert re.match(
        r"     ! scenario_not_exhausted: request \(log seq \d+\) \(turn 2\): 400 scenario_exhausted: "
        "scenario 'weather-single' has no turn 2",
        lines[exhausted + 1],
    )
    assert lines[-1] == "3 of 5 sessions failed"


def test_the_route_the_transcript_and_report_agree(run: ServerProcess) -> None:
    for session, label in EXPECTED.items():
        judged = run.http.get("/_mockllm/verdict", params={"session": session}).json()
        assert judged["label"] == label
        text = run.http.get("/_mockllm/transcript", params={"session": session}).text
        assert f"\n  {label} (" in text, text
    waived = run.http.get("/_mockllm/transcript", params={"session": "waived"}).text
    assert waived.splitlines()[-1].startswith(
        "     ~ calls_answered waived: the agent stops at max_steps (it found: toolu_"
    )


def test_report_allow_waives_a_check_in_every_session(run: ServerProcess) -> None:
    assert run.log_file is not None
    done = report(run.log_file, "--allow", "calls_answered=the agent stops at max_steps")
    assert cli_labels(done.stdout)["unwaived"] == f"{PASS} (1 waived)"
    bad = report(run.log_file, "--allow", "calls_answerd=typo")
    assert bad.returncode == 2
    assert "no verdict check named 'calls_answerd'; did you mean 'calls_answered'?" in bad.stderr


@pytest.mark.skipif(missing() is not None, reason=str(missing()))
def test_the_browser_shows_the_labels_the_cli_prints(run: ServerProcess, tmp_path: Path) -> None:
    assert run.log_file is not None
    page = tmp_path / "report.html"
    done = report(run.log_file, "--html", str(page))
    cli = cli_labels(done.stdout)
    with chromium() as driver:
        for url in (page.as_uri(), f"{run.url}/_mockllm/ui"):
            viewer = Viewer(driver).open(url)
            viewer.wait(lambda d, v=viewer: len(v.sessions()) == len(EXPECTED))
            shown = {
                str(b.get_attribute("data-session")): b.find_element(
                    By.CSS_SELECTOR, ".badge.verdict"
                ).text
                for b in viewer.sessions()
            }
            assert shown == cli == EXPECTED, url
            # Failing sessions first: a user scanning the list is sent to them.
            names = viewer.names()
            assert {names.index(n) for n in ("refused", "exhausted", "unwaived")} == {0, 1, 2}
            detail = viewer.pick("waived")
            waived = detail.find_element(By.CSS_SELECTOR, "li.check.waived")
            assert waived.text.startswith("~ calls_answered waived the agent stops at max_steps")
            head = detail.find_element(By.CSS_SELECTOR, "section.verdict p").text
            assert head.startswith(f"{PASS} (1 waived) ")


@pytest.mark.skipif(missing() is not None, reason=str(missing()))
def test_the_test_and_the_verdict_are_told_apart_in_the_pytest_report(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_suite="""
import httpx
import pytest

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]

def ask(url, *messages):
    body = {"model": "m", "messages": [{"role": "user", "content": "Weather?"}, *messages], "tools": TOOLS}
    return httpx.post(url + "/chat/completions", json=body).json()["choices"][0]["message"]

@pytest.mark.mockllm(strict=False)  # else the failed verdict fails it at teardown
def test_passes_with_a_failed_verdict(mockllm):
    ask(mockllm.url("weather-single"))  # the call is never answered; the test does not check

def test_fails_with_a_clean_verdict(mockllm):
    assert ask(mockllm.url("hello"))["content"] == "something else"
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mockllm-html=r.html")
    result.assert_outcomes(passed=1, failed=1)
    with chromium() as driver:
        viewer = Viewer(driver).open((pytester.path / "r.html").as_uri())
        badges = {
            str(b.get_attribute("data-session")).split("-")[0]: [
                (e.text, e.get_attribute("class"))
                for e in b.find_elements(By.CSS_SELECTOR, ".badge")
            ]
            for b in viewer.sessions()
        }
    assert badges == {
        "test_passes_with_a_failed_verdict": [
            ("✓ test passed", "badge test test-pass"),
            (FAIL, "badge verdict fail"),
        ],
        "test_fails_with_a_clean_verdict": [
            ("✗ test FAILED", "badge test test-fail"),
            (PASS, "badge verdict pass"),
        ],
    }


# --- allowances, in-process -----------------------------------------------------------------


def entry(seq: int, turn: int, calls: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    response = {
        "status": 200,
        "tool_calls": [{"id": c, "name": "f", "arguments": "{}"} for c in calls],
    }
    return {
        "seq": seq,
        "session": "s",
        "turn": turn,
        "conversation": [],
        "response": response,
        **extra,
    }


def status(result: dict[str, Any], name: str) -> tuple[str, str | None]:
    check = next(c for c in result["checks"] if c["name"] == name)
    return check["status"], check.get("waived")


def test_a_turn_waives_only_what_its_own_requests_caused() -> None:
    allow = {"calls_answered": "the agent stops at max_steps"}
    last_turn_waived = [entry(1, 0, ("a",)), entry(2, 1, ("b",), allow=allow)]
    # call a (turn 0) is unanswered too: the turn-1 allowance does not cover it
    assert status(verdict("s", last_turn_waived), "calls_answered") == ("failed", None)
    history = [
        {"role": "assistant", "tool_calls": [{"id": "a", "name": "f", "arguments": "{}"}]},
        {"role": "tool", "tool_results": [{"call_id": "a", "content": "x"}]},
    ]
    answered = dict(last_turn_waived[1], conversation=history)
    result = verdict("s", [last_turn_waived[0], answered])
    assert status(result, "calls_answered") == ("waived", "the agent stops at max_steps")
    assert result["ok"] and result["label"] == f"{PASS} (1 waived)"


def test_a_test_allowance_waives_a_check_even_when_it_passes() -> None:
    clean = [entry(1, 0)]
    result = verdict("s", clean, allow={"no_tool_loop": "a stress test"})
    assert status(result, "no_tool_loop") == ("waived", "a stress test")
    assert status(result, "calls_answered") == ("passed", None)


def test_a_scenario_allowance_with_an_unknown_check_names_file_line_and_key() -> None:
    text = "name: x\nallow:\n  calls_answerd: typo\nturns:\n  - reply: {text: hi}\n"
    with pytest.raises(ScenarioError) as e:
        load_text(text, "x.yaml")
    problem = str(e.value.problems[0])
    assert problem.startswith("x.yaml:3:") and "allow" in problem and "calls_answerd" in problem


def test_the_schema_names_every_check_of_the_verdict() -> None:
    schema = json.loads((ROOT / "mockllm" / "loading" / "scenario.schema.json").read_text())
    assert tuple(schema["$defs"]["allow"]["propertyNames"]["enum"]) == CHECK_NAMES


def test_the_allow_route_refuses_what_is_not_an_allowance(run: ServerProcess) -> None:
    put = run.http.put
    bad = put("/_mockllm/allow", params={"session": "x"}, json={"nope": "r"})
    assert (
        bad.status_code == 400 and "no verdict check named 'nope'" in bad.json()["error"]["message"]
    )
    assert put("/_mockllm/allow", params={"session": "x"}, json=["a"]).status_code == 400
    assert (
        put("/_mockllm/allow", params={"session": "x"}, json={"calls_answered": ""}).status_code
        == 400
    )
    text = put(
        "/_mockllm/allow",
        params={"session": "x"},
        content=b"{",
        headers={"content-type": "application/json"},
    )
    assert text.status_code == 400
    plain = put(
        "/_mockllm/allow",
        params={"session": "x"},
        content=b"{}",
        headers={"content-type": "text/plain"},
    )
    assert plain.status_code == 415 or plain.status_code == 403  # the admin guard's refusal


@settings(
    max_examples=examples(60),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    body=st.one_of(
        st.binary(max_size=200),
        st.dictionaries(
            st.text(max_size=20),
            st.one_of(st.text(max_size=30), st.integers(), st.none()),
            max_size=4,
        ).map(lambda d: json.dumps(d).encode()),
    ),
    route=st.sampled_from(["/_mockllm/allow", "/_mockllm/check"]),
)
def test_hostile_bodies_to_the_new_routes_never_get_a_5xx(
    run: ServerProcess, body: bytes, route: str
) -> None:
    method = "PUT" if route.endswith("allow") else "POST"
    answer = run.http.request(
        method,
        route,
        params={"session": "hostile"},
        content=body,
        headers={"content-type": "application/json"},
    )
    assert answer.status_code in (200, 400, 413), answer.text
    assert "error" in answer.json() or answer.status_code == 200


@settings(
    max_examples=examples(40),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(name=st.text(max_size=30), args=st.text(max_size=30))
def test_hostile_queries_of_the_calls_route_never_get_a_5xx(
    run: ServerProcess, name: str, args: str
) -> None:
    answer = run.http.get(
        "/_mockllm/calls", params={"session": "clean", "name": name, "args": args}
    )
    assert answer.status_code in (200, 400), answer.text


def test_a_verdict_route_without_httpx_client_is_plain_json(run: ServerProcess) -> None:
    judged = httpx.get(f"{run.url}/_mockllm/verdict", params={"session": "waived"}).json()
    (waived,) = [c for c in judged["checks"] if c["status"] == "waived"]
    assert waived == {
        "name": "calls_answered",
        "ok": True,
        "status": "waived",
        "message": waived["message"],
        "waived": "the agent stops at max_steps",
    }
    assert waived["message"].endswith("was never answered")
