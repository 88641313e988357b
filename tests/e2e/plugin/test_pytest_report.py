"""A failing test that used the `mockllm` fixture shows its session in a "mockllm" report
section, however it failed; plugin errors are said once, located in the user's files.
Each test runs a real pytest (pytester) whose tests drive the real OpenAI SDK."""

from __future__ import annotations

import re

import pytest

from tests.support import ServerProcess

pytest_plugins = ["pytester"]

AGENT = """
import json
import pytest
from openai import OpenAI

TOOLS = [{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


def ask(mockllm, scenario, question, result="sunny", rounds=3):
    with OpenAI(base_url=mockllm.url(scenario), api_key="test", max_retries=0) as client:
        messages = [{"role": "user", "content": question}]
        for _ in range(rounds):
            message = client.chat.completions.create(
                model="m", messages=messages, tools=TOOLS).choices[0].message
            messages.append(message)
            if not message.tool_calls:
                return message.content
            for call in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
"""


def section(output: str) -> str:
    """The text of the first "mockllm" report section."""
    found = re.search(r"^-+ mockllm -+\n(.*?)(?=^[=_-]{5,}|\Z)", output, re.M | re.S)
    assert found, output
    return found[1]


def test_an_sdk_exception_shows_the_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        AGENT
        + """
def test_agent(mockllm):
    ask(mockllm, "weather-single", "Weather in Paris?")  # "sunny" breaks turn 1's expectation
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "openai.BadRequestError" in out
    text = section(out)
    assert "mockllm session 'test_agent-" in text and "2 model requests" in text
    assert 'calls get_weather({"city":"Paris"})' in text
    assert "tool result for call_" in text and ": sunny" in text
    assert "! expect.tool_results: turn 1: result of call 0" in text
    assert "← error 400 expectation_failed (the ! above)" in text


def test_the_tests_own_assert_shows_the_session_and_a_pass_shows_none(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        AGENT
        + """
def test_wrong_answer(mockllm):
    assert ask(mockllm, "weather-single", "Weather in Paris?", result="18") == "Rain"

def test_right_answer(mockllm):
    assert ask(mockllm, "weather-single", "Weather in Paris?", result="18").startswith("It")
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    out = result.stdout.str()
    assert out.count("- mockllm -") == 1
    assert "← assistant (200, stop): It is 18 °C and sunny in Paris." in section(out)


def test_short_by_default_full_with_vv_or_the_flag_off_with_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        AGENT
        + """
LOOP = {"name": "loop", "turns": [
    {"reply": {"tool_calls": [{"name": "get_weather", "arguments": {}}]}, "repeat": True}]}

@pytest.mark.mockllm(scenarios=[LOOP])
def test_loop(mockllm):
    ask(mockllm, "loop", "Find it", rounds=14)
    assert False, "looped"
"""
    )
    short = section(pytester.runpytest("-p", "no:cacheprovider").stdout.str())
    assert "14 model requests" in short and "... 2 earlier requests left out" in short
    assert "request 3 (log seq" in short and "request 2 (log seq" not in short
    assert "-vv or --mockllm-transcript=full" in short
    for flags in (["-vv"], ["--mockllm-transcript=full"]):
        full = section(pytester.runpytest("-p", "no:cacheprovider", *flags).stdout.str())
        assert "left out" not in full and "request 1 (log seq" in full
    off = pytester.runpytest("-p", "no:cacheprovider", "--mockllm-transcript=off")
    off.assert_outcomes(failed=1)
    assert "- mockllm -" not in off.stdout.str()


def test_a_mockllm_assertion_shows_the_transcript_once_short_by_default(
    pytester: pytest.Pytester,
) -> None:
    """The assertion's message carries the transcript; no section repeats it under it, and
    the message follows the section's flags (it was printed in full, then again short)."""
    pytester.makepyfile(
        AGENT
        + """
LOOP = {"name": "loop", "turns": [
    {"reply": {"tool_calls": [{"name": "get_weather", "arguments": {}}]}, "repeat": True}]}

@pytest.mark.mockllm(scenarios=[LOOP])
def test_loop(mockllm):
    ask(mockllm, "loop", "Find it", rounds=14)
    mockllm.assert_all_tool_calls_answered()
"""
    )
    out = pytester.runpytest_subprocess("-p", "no:cacheprovider").stdout.str()
    # The short summary repeats the whole message when pytest runs on CI (the `CI`
    # variable): "once" is counted in the failure's own section.
    assert out.split("short test summary info")[0].count("', 14 model requests:") == 1, out
    assert "- mockllm -" not in out  # the message has it
    assert "... 2 earlier requests left out" in out and "request 2 (log seq" not in out
    assert "-vv or --mockllm-transcript=full" in out
    full = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-vv").stdout.str()
    full = full.split("short test summary info")[0]  # -vv repeats the whole message there
    assert full.count("', 14 model requests:") == 1, full
    assert "left out" not in full and "request 1 (log seq" in full


def errors_section(out: str) -> str:
    """The report's ERRORS section: the short summary repeats the whole message
    when pytest runs on CI (the `CI` variable), so "said once" is counted here."""
    return out.split("short test summary info")[0]


def test_a_marker_scenario_error_points_at_the_test_file_line_once(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_marker='''
import pytest

BROKEN = """
name: broken
turns:
  - reply: {txt: hi}
"""


@pytest.mark.mockllm(scenarios=[BROKEN])
def test_it(mockllm):
    pass
'''
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    problem = "test_marker.py:6:13: turns[0].reply.txt: unknown key 'txt'"
    assert errors_section(out).count(problem) == 1, out
    assert "During handling" not in out and "<add_scenario>" not in out


def test_a_startup_scenario_error_is_said_once_with_a_relative_path(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "x.yaml").write_text("turns:\n  - reply:\n    text: hi\n")
    pytester.makepyfile("def test_it(mockllm):\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--mockllm-scenarios", "scenarios")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    line = "scenarios/x.yaml:3:5: turns[0].text: unknown key 'text'"
    assert errors_section(out).count(line) == 1 and "indent it under `reply:`" in out, out
    assert "During handling" not in out and f"{pytester.path}/scenarios" not in out


def test_a_wrong_scenarios_path_with_a_server_url_is_said_not_a_traceback(
    pytester: pytest.Pytester, server: ServerProcess
) -> None:
    """As the in-process server says it ("cannot start the server"), not a ScenarioError
    traceback out of the client fixture."""
    pytester.makepyfile("def test_it(mockllm):\n    pass\n")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--mockllm-url", server.url, "--mockllm-scenarios", "nope"
    )
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    said = f"mockllm: cannot add the scenarios to the server at {server.url}:\nnope: no such"
    assert said in errors_section(out), out
    assert "Traceback" not in out and "raise ScenarioError" not in out, out


def test_a_mistyped_scenario_fails_at_url_with_did_you_mean(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_it(mockllm):\n    mockllm.url('wether-single')\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*ClientError: no scenario named 'wether-single' on *; did you mean 'weather-single'?*"]
    )
