"""The smaller items of issue 29, each with the output that shows it: the debugging doc's
claim about re-serialised arguments, errors_fed_back's advice for Anthropic, the serve
banner's viewer URL, -vv with -q, and session names that keep pytest's [param] ids."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest

import mockllm
from mockllm.loading.loader import load_text
from tests.support import ROOT, running_server

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


def test_re_serialised_arguments_are_not_a_cause_of_history_diverged() -> None:
    doc = (ROOT / "docs" / "debugging.md").read_text()
    section = doc.split('## "history diverged"', 1)[1].split("\n## ", 1)[0]
    assert "Re-serialised\narguments are not one" in section
    # ... as the server does: strict validation, the call sent back with other spacing.
    with mockllm.serve() as server:
        base = server.client.session("spaced").url("weather-single")
        client = openai.OpenAI(base_url=base, api_key="t", max_retries=0)
        messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        first = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        assistant = first.choices[0].message.model_dump(exclude_none=True)
        call = assistant["tool_calls"][0]
        call["function"]["arguments"] = json.dumps(
            json.loads(call["function"]["arguments"]), indent=2
        )
        messages += [assistant, {"role": "tool", "tool_call_id": call["id"], "content": "18 °C"}]
        final = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        assert final.choices[0].message.content == "It is 18 °C and sunny in Paris."
        assert server.client.verdict("spaced").ok


UNOFFERED = load_text(
    "name: calls-unoffered\nturns:\n"
    "  - reply: {tool_calls: [{name: delete_repository, arguments: {}}]}\n"
    "  - reply: {text: Done.}\n",
    "<test>",
)


def test_errors_fed_back_says_anthropic_wants_is_error_true() -> None:
    with mockllm.serve([UNOFFERED]) as server:
        session = server.client.session("unflagged")
        client = anthropic.Anthropic(
            base_url=session.url("calls-unoffered", api="anthropic"), api_key="t"
        )
        tools: list[Any] = [{"name": "get_weather", "input_schema": {"type": "object"}}]
        messages: list[Any] = [{"role": "user", "content": "Tidy up"}]
        first = client.messages.create(model="m", max_tokens=50, messages=messages, tools=tools)
        use = next(b for b in first.content if b.type == "tool_use")
        messages += [
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in first.content],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "deleted"}],
            },
        ]
        client.messages.create(model="m", max_tokens=50, messages=messages, tools=tools)
        [check] = session.verdict().failed
    assert check.name == "errors_fed_back"
    assert check.message.endswith(
        "was answered 'deleted' without an error (Anthropic wants the tool_result block with "
        "is_error: true)"
    )


def test_serve_prints_the_viewers_url() -> None:
    with running_server(scenarios=()) as server:
        banner = server.printed()
    assert (
        f"  viewer:        {server.url}/_mockllm/ui    (the log live, each session's verdict)"
        in banner
    )


FAILING = """
import httpx, pytest

def test_{name}(mockllm):
    url = mockllm.url("hello")
    for i in range(14):
        httpx.post(url + "/chat/completions", json={{"model": "m", "messages": [{{"role": "user", "content": f"hi {{i}}"}}]}})
    assert False
"""


def test_vv_gives_the_full_transcript_even_with_q(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_many=FAILING.format(name="many"))
    short = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    short.stdout.fnmatch_lines(
        ["  ... 2 earlier requests left out", "(short: -vv or --mockllm-transcript=full*"]
    )
    full = pytester.runpytest_subprocess("-vv", "-q", "-p", "no:cacheprovider")
    out = full.stdout.str()
    assert "earlier requests left out" not in out and "(short:" not in out
    assert "request 1 (log seq" in out and "request 14 (log seq" in out


def test_session_names_keep_the_param_id_of_a_long_test_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_names="""
import pytest

pytestmark = pytest.mark.mockllm(strict=False)  # no requests: only the names are tested

@pytest.mark.parametrize("city", ["Paris", "Rio de Janeiro"])
def test_a_support_agent_with_a_rather_long_descriptive_name(mockllm, city):
    prefix = "test_a_support_agent_with_a_rather_long_descriptive_name-"
    assert mockllm.name.startswith(prefix + city.replace(" ", "-") + "-"), mockllm.name
    assert len(mockllm.name) == len(prefix) + len(city) + 9 + 7  # "~" and the run id

def test_a_very_long_name_is_bounded(mockllm):
    pass

test_a_very_long_name_is_bounded.__name__ = "x" * 300
"""
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=3)
