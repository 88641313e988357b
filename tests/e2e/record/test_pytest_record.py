"""Record if missing, inside pytest (docs/record.md, "Record inside pytest"): a first run
with --mockllm-record=once proxies each test's requests to the upstream (a second mockllm
playing the real API, as tests/e2e/record/test_record.py does), through the official SDK of each
wire, and writes the scenario file beside the test; the next run replays it with the
upstream stopped. Without the option nothing reaches the network, and a missing file
fails with how to record it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mockllm.loading.loader import load_paths
from tests.support import ROOT, running_server

pytest_plugins = ["pytester"]

SECRET = "sk-proj-Rec0rdedKEYneverWritten42"
UPSTREAM_SCENARIO = """
name: {name}
turns:
  - reply: {{tool_calls: [{{name: get_weather, arguments: {{city: Paris}}}}]}}
  - expect: {{tool_results: [{{contains: "18"}}]}}
    reply: {{text: "It is 18 °C in Paris ({name})."}}
"""
WIRES = ("chat", "responses", "anthropic", "gemini")
SUITE = """
import json, os
import pytest

SECRET = {secret!r}
PARAMS = {{"type": "object", "properties": {{"city": {{"type": "string"}}}}}}


def weather(city):
    return f"18 °C in {{city}}"


@pytest.mark.mockllm("recorded/rec-chat.yaml")
def test_chat(mockllm):
    from openai import OpenAI
    client = OpenAI(base_url=mockllm.url("rec-chat"), api_key=SECRET, max_retries=0)
    tools = [{{"type": "function", "function": {{"name": "get_weather", "parameters": PARAMS}}}}]
    messages = [{{"role": "user", "content": "Weather in Paris?"}}]
    first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    messages += [first.choices[0].message, {{"role": "tool", "tool_call_id": call.id,
                 "content": weather(**json.loads(call.function.arguments))}}]
    final = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
    assert final.choices[0].message.content == "It is 18 °C in Paris (rec-chat)."
    mockllm.assert_tool_requested("get_weather", args={{"city": "Paris"}}, times=1)


@pytest.mark.mockllm("recorded/rec-responses.yaml")
def test_responses(mockllm):
    from openai import OpenAI
    client = OpenAI(base_url=mockllm.url("rec-responses"), api_key=SECRET, max_retries=0)
    tools = [{{"type": "function", "name": "get_weather", "parameters": PARAMS}}]
    items = [{{"role": "user", "content": "Weather in Paris?"}}]
    first = client.responses.create(model="gpt-4o-mini", input=items, tools=tools, store=False)
    call = next(o for o in first.output if o.type == "function_call")
    items += [o.model_dump(exclude_none=True) for o in first.output]
    items.append({{"type": "function_call_output", "call_id": call.call_id,
                  "output": weather(**json.loads(call.arguments))}})
    final = client.responses.create(model="gpt-4o-mini", input=items, tools=tools, store=False)
    assert final.output_text == "It is 18 °C in Paris (rec-responses)."
    mockllm.assert_tool_requested("get_weather", times=1)


@pytest.mark.mockllm("recorded/rec-anthropic.yaml")
def test_anthropic(mockllm):
    from anthropic import Anthropic
    client = Anthropic(base_url=mockllm.url("rec-anthropic", api="anthropic"), api_key=SECRET,
                       max_retries=0)
    tools = [{{"name": "get_weather", "input_schema": PARAMS}}]
    messages = [{{"role": "user", "content": "Weather in Paris?"}}]
    first = client.messages.create(model="claude-sonnet-4-5", max_tokens=200, messages=messages, tools=tools)
    use = next(b for b in first.content if b.type == "tool_use")
    messages += [{{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]}},
                 {{"role": "user", "content": [{{"type": "tool_result", "tool_use_id": use.id,
                                               "content": weather(**use.input)}}]}}]
    final = client.messages.create(model="claude-sonnet-4-5", max_tokens=200, messages=messages, tools=tools)
    assert final.content[0].text == "It is 18 °C in Paris (rec-anthropic)."
    mockllm.assert_tool_requested("get_weather", times=1)


@pytest.mark.mockllm("recorded/rec-gemini.yaml")
def test_gemini(mockllm):
    from google import genai
    client = genai.Client(api_key=SECRET, http_options={{"base_url": mockllm.url("rec-gemini", api="gemini")}})
    config = {{"automatic_function_calling": {{"disable": True}},
              "tools": [{{"function_declarations": [{{"name": "get_weather", "parameters_json_schema": PARAMS}}]}}]}}
    contents = [{{"role": "user", "parts": [{{"text": "Weather in Paris?"}}]}}]
    first = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
    call = first.candidates[0].content.parts[0].function_call
    contents += [first.candidates[0].content,
                 {{"role": "user", "parts": [{{"function_response": {{"name": call.name,
                   "response": {{"result": weather(**call.args)}}}}}}]}}]
    final = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
    assert final.text == "It is 18 °C in Paris (rec-gemini)."
    mockllm.assert_tool_requested("get_weather", times=1)
"""


def pytest_run(
    pytester: pytest.Pytester, *args: str, upstream: str | None = None
) -> pytest.RunResult:
    env = {k: v for k, v in os.environ.items() if k != "MOCKLLM_RECORD_UPSTREAM"}
    if upstream is not None:
        env["MOCKLLM_RECORD_UPSTREAM"] = upstream
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-rs",
        *args,
    ]
    done = subprocess.run(
        command, cwd=pytester.path, env=env, capture_output=True, text=True, timeout=300
    )
    return pytest.RunResult(
        done.returncode, done.stdout.splitlines(), done.stderr.splitlines(), 0.0
    )


def test_record_once_then_replay_with_the_upstream_stopped(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(test_agent=SUITE.format(secret=SECRET))
    folder = tmp_path / "upstream"
    folder.mkdir()
    for wire in WIRES:
        (folder / f"rec-{wire}.yaml").write_text(UPSTREAM_SCENARIO.format(name=f"rec-{wire}"))
    recorded = pytester.path / "recorded"

    # CI's default: nothing recorded, nothing reached; each missing file says how to record it.
    first = pytest_run(pytester)
    first.assert_outcomes(errors=4)
    first.stdout.fnmatch_lines(
        [
            "*mockllm: the scenario recorded/rec-chat.yaml of test_chat does not exist. Record it "
            "from the real API: MOCKLLM_RECORD_UPSTREAM=https://api.openai.com pytest "
            "--mockllm-record=once test_agent.py::test_chat*",
        ]
    )
    assert not recorded.exists()

    with running_server("--no-bundled", scenarios=(folder,)) as upstream:
        url = f"{upstream.url}/s/{{scenario}}/{{session}}"
        record = pytest_run(pytester, "--mockllm-record=once", upstream=url)
        # The agents ran against the upstream; their log assertions wait for the replay.
        record.assert_outcomes(skipped=4)
        record.stdout.fnmatch_lines(
            [
                "mockllm: recorded recorded/rec-chat.yaml (2 turns)",
                "mockllm: recorded recorded/rec-responses.yaml (2 turns)",
                "mockllm: recorded recorded/rec-anthropic.yaml (2 turns)",
                "mockllm: recorded recorded/rec-gemini.yaml (2 turns)",
                "*mockllm: recorded rec-chat.yaml from the real API; this run has no log to assert "
                "on: run the test again to replay it and check*",
            ]
        )
        apis = {e["api"] for e in upstream.requests()}
        assert apis == {"openai-chat", "openai-responses", "anthropic", "gemini"}
        assert len(upstream.requests()) == 8
        # once: a file that exists is replayed, never recorded again
        again = pytest_run(pytester, "--mockllm-record=once", upstream=url)
        again.assert_outcomes(passed=4)
        assert len(upstream.requests()) == 8

    # The upstream is gone: the replay is offline, through validation and divergence.
    replay = pytest_run(pytester)
    replay.assert_outcomes(passed=4)
    files = sorted(recorded.glob("*.yaml"))
    assert [f.name for f in files] == [f"rec-{w}.yaml" for w in sorted(WIRES)]
    scenarios = load_paths([recorded])  # the editable YAML `mockllm record` writes
    assert sorted(s.name for s in scenarios) == sorted(f"rec-{w}" for w in WIRES)
    for f in files:
        text = f.read_text()
        assert SECRET not in text and text.startswith(
            "# Recorded by `mockllm record` from http://127.0.0.1:"
        )
        assert f"# Replay: mockllm serve --scenarios {f.name} (from its folder;" in text
        assert str(pytester.path) not in text  # no path of the recording machine
    # The replay is the file: an edit to it is what the next run answers.
    chat = recorded / "rec-chat.yaml"
    assert chat.read_text().count("(rec-chat).") == 1
    chat.write_text(chat.read_text().replace("(rec-chat).", "(edited)."))
    edited = pytest_run(pytester, "-k", "chat")
    edited.assert_outcomes(failed=1)
    edited.stdout.fnmatch_lines(["*It is 18 °C in Paris (edited).*"])


def test_record_all_records_again_and_a_wrong_scenario_name_is_refused(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    folder = tmp_path / "upstream"
    folder.mkdir()
    (folder / "rec-chat.yaml").write_text(UPSTREAM_SCENARIO.format(name="rec-chat"))
    pytester.makepyfile(
        test_agent=SUITE.format(secret=SECRET).split(
            '\n\n@pytest.mark.mockllm("recorded/rec-responses'
        )[0]
        + "\n\n@pytest.mark.mockllm('recorded/other.yaml')\ndef test_misnamed(mockllm):\n    mockllm.url('rec-chat')\n"
    )
    (pytester.path / "recorded").mkdir()
    (pytester.path / "recorded" / "rec-chat.yaml").write_text(
        UPSTREAM_SCENARIO.format(name="rec-chat").replace("18 °C", "old")
    )
    with running_server("--no-bundled", scenarios=(folder,)) as upstream:
        url = f"{upstream.url}/s/{{scenario}}/{{session}}"
        done = pytest_run(pytester, "--mockllm-record=all", upstream=url)
        done.assert_outcomes(skipped=1, failed=1)
        done.stdout.fnmatch_lines(
            [
                "*ValueError: mockllm: this test records into other.yaml, so its scenario is 'other': "
                "call url('other'), or name the file rec-chat.yaml"
            ]
        )
    assert "(rec-chat)." in (pytester.path / "recorded" / "rec-chat.yaml").read_text()
    no_upstream = pytest_run(pytester, "--mockllm-record=all", "-k", "chat")
    no_upstream.stdout.fnmatch_lines(["*--mockllm-record needs MOCKLLM_RECORD_UPSTREAM*"])


def test_the_documented_recording_records_then_replays(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    doc = (ROOT / "docs" / "record.md").read_text()
    [(name, code)] = re.findall(r"```python pytest-record=(\S+)\n(.*?)```", doc, re.S)
    pytester.makepyfile(**{name.removesuffix(".py"): code})
    folder = tmp_path / "upstream"
    folder.mkdir()
    (folder / "weather-live.yaml").write_text(
        "turns:\n  - reply: {tool_calls: [{name: get_weather, arguments: {city: Paris}}]}\n"
        "  - reply: {text: It is 18 °C and sunny in Paris.}\n"
    )
    os.environ.setdefault("OPENAI_API_KEY", "sk-test")
    with running_server("--no-bundled", scenarios=(folder,)) as upstream:
        url = f"{upstream.url}/s/{{scenario}}/{{session}}"
        done = pytest_run(pytester, "--mockllm-record=once", upstream=url)
        done.assert_outcomes(skipped=1)
        done.stdout.fnmatch_lines(["mockllm: recorded recordings/weather-live.yaml (2 turns)"])
    pytest_run(pytester).assert_outcomes(passed=1)
