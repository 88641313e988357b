"""The Chat history rules (C1-C3) find each breach in one pass over the messages: on any
history they answer exactly what the plain rules below answer (one loop per rule, as
docs/validation.md states them), the same texts and places, for both flavours."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.core.conversation import Conversation, ToolCall
from mockllm.core.scenario import Reply, Scenario, Turn
from mockllm.core.validation import RuleContext
from mockllm.errors import RequestError
from mockllm.providers.openai_chat import ChatCompletions
from mockllm.providers.openai_chat_rules import RULES, WALK, _scan
from tests.support.hypothesis_profiles import examples

HISTORY_RULES = ("C1", "C2", "C3")
SCENARIO = Scenario("s", (Turn(Reply(text="ok")),))

# Few ids, so that results often answer, miss, or repeat calls.
ids = st.sampled_from(["a", "b", "c"])
call: st.SearchStrategy[Any] = st.one_of(
    st.fixed_dictionaries({"id": ids, "type": st.just("function")}),
    st.fixed_dictionaries({}),
    st.just("not a call"),
)
message = st.one_of(
    st.fixed_dictionaries({"role": st.just("assistant"), "tool_calls": st.lists(call, max_size=3)}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.just("hi")}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": ids}),
    st.fixed_dictionaries({"role": st.just("tool")}),
    st.fixed_dictionaries({"role": st.sampled_from(["user", "system", "function"])}),
    st.just("not a message"),
)


def plain(body: dict[str, Any], flavor: str) -> list[tuple[str, str | None, str | None]]:
    """(message, param, code) of C2, C3, C1 in the rule set's order, each rule by itself."""
    messages = body["messages"]
    groups: list[tuple[int, list[str], list[tuple[int, str]]]] = []
    orphans: list[int] = []
    answering = False
    group: tuple[int, list[str], list[tuple[int, str]]] | None = None
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            group = None
            continue
        if m.get("role") == "tool":
            if not answering:
                orphans.append(i)
            if group is not None:
                group[2].append((i, str(m.get("tool_call_id"))))
            continue
        answering = m.get("role") == "assistant" and bool(m.get("tool_calls"))
        group = None
        if answering:
            calls = [str(c.get("id")) for c in m["tool_calls"] if isinstance(c, dict)]
            group = (i, calls, [])
            groups.append(group)
    found: list[tuple[str, str | None, str | None]] = []
    deepseek = flavor == "deepseek"
    if orphans:
        found.append(
            (
                "Messages with role 'tool' must be a response to a preceding message with "
                "'tool_calls'",
                None,
                "invalid_request_error",
            )
            if deepseek
            else (
                "Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'.",
                f"messages.[{orphans[0]}].role",
                None,
            )
        )
    unknown = [(j, c) for _, calls, answered in groups for j, c in answered if c not in calls]
    if unknown:
        j, c = unknown[0]
        found.append(
            (
                f"Invalid parameter: 'tool_call_id' of '{c}' not found in 'tool_calls' of "
                "previous message.",
                f"messages.[{j}].tool_call_id",
                None,
            )
        )
    for i, calls, answered in groups:
        missing = [c for c in calls if c not in {a for _, a in answered}]
        if missing:
            head = (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. "
            )
            found.append(
                (
                    head + "(insufficient tool messages following tool_calls message)",
                    None,
                    "invalid_request_error",
                )
                if deepseek
                else (
                    head
                    + "The following tool_call_ids did not have response messages: "
                    + ", ".join(missing),
                    f"messages.[{i + 1 + len(answered)}].role",
                    None,
                )
            )
            break
    return found


@settings(max_examples=examples(500))
@given(st.lists(message, max_size=12), st.sampled_from(["openai", "deepseek"]))
def test_one_pass_agrees_with_each_rule_alone(messages: list[Any], flavor: str) -> None:
    body = {"model": "gpt-4o", "messages": messages}
    ctx = RuleContext(Conversation("gpt-4o", ()), SCENARIO, flavor)
    found = [
        (v.message, v.param, v.code)
        for v in RULES.run(body, ctx)
        if any(r.name == v.rule and r.code in HISTORY_RULES for r in RULES.rules)
    ]
    assert found == plain(body, flavor)


# Histories the Chat parse accepts: its own loop finds what the rules find (Parsed.views).
parsed_call = st.fixed_dictionaries(
    {"id": ids, "type": st.just("function"), "function": st.just({"name": "f", "arguments": ""})}
)
parsed_message = st.one_of(
    st.fixed_dictionaries(
        {"role": st.just("assistant"), "tool_calls": st.lists(parsed_call, max_size=3)}
    ),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.just("hi")}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": ids, "content": st.just("r")}),
    st.fixed_dictionaries({"role": st.just("function"), "name": ids, "content": st.just("r")}),
    st.fixed_dictionaries({"role": st.sampled_from(["user", "system", "developer"])}),
)


@settings(max_examples=examples(500))
@given(st.lists(parsed_message, min_size=1, max_size=12), st.sampled_from(["openai", "deepseek"]))
def test_the_parse_finds_what_the_rules_find(messages: list[Any], flavor: str) -> None:
    """The walk the parse hands the rules equals the rules' own pass over the raw body,
    and the rules answer the same from it (a legacy `function` message is no tool message
    to C2, though parsed as one)."""
    body = {"model": "gpt-4o", "messages": messages}
    parsed = ChatCompletions().parse(body)
    assert parsed.views[WALK] == _scan(body)
    ctx = RuleContext(parsed.conversation, SCENARIO, flavor, dict(parsed.views))
    alone = RuleContext(parsed.conversation, SCENARIO, flavor)
    assert RULES.run(body, ctx) == RULES.run(body, alone)


CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
MISSING_ID = (
    "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'."
)


@pytest.mark.parametrize(
    ("message", "error", "param"),
    [
        ({"role": "tool", "content": "x"}, MISSING_ID, "messages[1].tool_call_id"),
        ({"role": "tool", "tool_call_id": ["c"], "content": "x"}, MISSING_ID, None),
        ({"role": "tool", "tool_call_id": 1, "content": "x"}, MISSING_ID, None),
        (
            {"role": "assistant", "tool_calls": ["c"]},
            "Invalid type for 'messages[1].tool_calls[0]': expected an object, but got a string "
            "instead.",
            "messages[1].tool_calls[0]",
        ),
        ({"role": "assistant", "tool_calls": [{**CALL, "id": ["c1"]}]}, None, ".id"),
        ({"role": "assistant", "tool_calls": [{"function": CALL["function"]}]}, None, ".id"),
        ({"role": "assistant", "tool_calls": [{**CALL, "function": ["f"]}]}, None, ".function"),
        (
            {"role": "assistant", "tool_calls": [{**CALL, "function": {"arguments": "{}"}}]},
            None,
            ".function.name",
        ),
    ],
    ids=[
        "no id",
        "id a list",
        "id a number",
        "call a string",
        "call id a list",
        "no call id",
        "function a list",
        "no name",
    ],
)
def test_the_quick_paths_of_the_parse_refuse_as_the_checks_do(
    message: dict[str, Any], error: str | None, param: str | None
) -> None:
    """The usual tool result and an echoed call are read without their checks (the parse
    runs per message): anything else still gets the check's own error, as the API words it."""
    body = {"model": "m", "messages": [{"role": "user", "content": "u"}, message]}
    with pytest.raises(RequestError) as caught:
        ChatCompletions().parse(body)
    if param is None or param.startswith("."):
        param = "messages[1].tool_call_id" if param is None else f"messages[1].tool_calls[0]{param}"
    if error is None:
        error = f"Missing required parameter: '{param}'."
    assert (caught.value.message, caught.value.param) == (error, param)


def test_a_tool_result_of_parts_and_an_echoed_call_parse_as_before() -> None:
    parts = [{"type": "text", "text": "18 °C"}]
    body = {
        "model": "m",
        "messages": [
            {"role": "assistant", "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "c1", "content": parts},
            {"role": "tool", "tool_call_id": "c1", "content": "18 °C"},
        ],
    }
    messages = ChatCompletions().parse(body).conversation.messages
    assert [m.tool_results[0].content for m in messages[1:]] == ["18 °C", "18 °C"]
    assert [m.at for m in messages] == ["messages[0]", "messages[1]", "messages[2]"]
    assert messages[0].tool_calls[0] == ToolCall("c1", "f", "{}")
