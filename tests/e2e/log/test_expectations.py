"""`expect:` checks (docs/scenarios.md): every kind fails with field, expected, got and the turn."""

from __future__ import annotations

import re
from typing import Any

import openai
import pytest

from tests.support import TOOL_PARAMETERS, ServerProcess
from tests.support.clients import ChatFactory


def tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": TOOL_PARAMETERS}}


GOOD: dict[str, Any] = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "system", "content": "You are a very helpful assistant."},
        {"role": "user", "content": "What's the weather and time in Rome?"},
    ],
    "tools": [tool("get_weather"), tool("get_time")],
    "tool_choice": "required",
}


def test_all_expectations_met(chat: ChatFactory) -> None:
    completion = chat("expectations").chat.completions.create(**GOOD)
    assert [c.function.name for c in completion.choices[0].message.tool_calls] == [
        "get_weather",
        "get_time",
    ]


CASES = [
    (
        "user",
        {"messages": [GOOD["messages"][0], {"role": "user", "content": "hello"}]},
        "turn 0: expected the latest user message containing 'weather', got 'hello'",
    ),
    (
        "system",
        {"messages": [{"role": "system", "content": "Be terse."}, GOOD["messages"][1]]},
        "turn 0: expected the system prompt matching /^You are .*helpful/, got 'Be terse.'",
    ),
    (
        "model",
        {"model": "gpt-4.1"},
        "turn 0: expected the model equal to 'gpt-4o-mini', got 'gpt-4.1'",
    ),
    (
        "tools",
        {"tools": [tool("get_weather")]},
        "turn 0: expected tools get_time to be offered, got get_weather",
    ),
    ("tool_choice", {"tool_choice": "auto"}, "turn 0: expected tool_choice required, got auto"),
    ("stream", {"stream": True}, "turn 0: expected a non-streaming request, got stream=True"),
]


@pytest.mark.parametrize(("key", "change", "message"), CASES, ids=[c[0] for c in CASES])
def test_each_expectation_fails_clearly(
    chat: ChatFactory,
    server: ServerProcess,
    session: str,
    key: str,
    change: dict[str, Any],
    message: str,
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        chat("expectations").chat.completions.create(**{**GOOD, **change})
    error = caught.value
    assert error.status_code == 400
    assert error.body["message"] == f"mockllm expectation failed: {message}"
    assert error.code == "expectation_failed"
    entry = server.last(session)
    assert entry["expectation_failures"] == [{"rule": f"expect.{key}", "message": message}]
    assert entry["response"]["error"]["kind"] == "expectation_failed"


def test_tool_choice_defaults_are_effective_values(chat: ChatFactory) -> None:
    """Without tool_choice the provider applies auto; a forced tool is {tool: NAME}."""
    client = chat("forced")
    forced = {"type": "function", "function": {"name": "get_weather"}}
    ok = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "x"}],
        tools=[tool("get_weather")],
        tool_choice=forced,
    )
    assert ok.choices[0].message.tool_calls[0].function.name == "get_weather"
    with pytest.raises(
        openai.BadRequestError, match=r"expected tool_choice \{tool: get_weather\}, got auto"
    ):
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], tools=[tool("get_weather")]
        )


def _turn_one(chat: ChatFactory, results: list[str]) -> Any:
    client = chat("expectations")
    first = client.chat.completions.create(**GOOD).choices[0].message
    history = [*GOOD["messages"], first.model_dump(exclude_none=True)]
    history += [
        {"role": "tool", "tool_call_id": c.id, "content": r}
        for c, r in zip(first.tool_calls, results, strict=False)
    ]
    return client.chat.completions.create(**{**GOOD, "messages": history, "tool_choice": "auto"})


def test_tool_results_matched_per_call(chat: ChatFactory) -> None:
    assert _turn_one(chat, ["21 °C", "14:05"]).choices[0].message.content == "done"


def test_tool_results_mismatch_names_call_and_content(chat: ChatFactory) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        _turn_one(chat, ["21 °C", "five past two"])
    message = caught.value.body["message"]
    assert message.startswith(
        "mockllm expectation failed: turn 1: result of call 1 (get_time call_"
    )
    assert message.endswith("expected a result matching /^\\d\\d:\\d\\d$/, got 'five past two'")


def test_missing_tool_result_is_refused_as_the_provider_would(
    chat: ChatFactory, server: ServerProcess, session: str
) -> None:
    """The provider rule answers first (C1); the expectation failure is still logged."""
    with pytest.raises(openai.BadRequestError, match="did not have response messages: call_"):
        _turn_one(chat, ["21 °C"])
    entry = server.last(session)
    assert [v["rule"] for v in entry["violations"]] == ["chat.tool_call_unanswered"]
    (failure,) = entry["expectation_failures"]
    assert re.search(
        r"result of call 1 \(get_time call_\w+\): expected a tool result, got none",
        failure["message"],
    )
