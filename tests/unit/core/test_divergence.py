"""`mockllm.core.divergence.diverged`: each way a history can depart from what was served,
with its exact one-line message (tests/e2e/wires/test_divergence_e2e.py drives the same through an SDK)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm.core.conversation import Conversation, Message, Tool, ToolCall
from mockllm.core.divergence import diverged, echoed_as_scripted, same_json, served_calls
from mockllm.core.engine import _ServedReplies
from mockllm.core.scenario import Reply, Scenario, ScriptedCall
from mockllm.errors import Finding
from mockllm.loading.loader import load_mapping

SCENARIO = load_mapping(
    {
        "name": "two-turns",
        "turns": [
            {
                "reply": {
                    "tool_calls": [
                        {"name": "get_weather", "arguments": {"city": "Paris"}},
                        {"name": "get_time", "arguments": {"city": "Paris"}},
                    ]
                }
            },
            {"reply": {"tool_calls": [{"name": "get_weather", "arguments": "not json"}]}},
            {"reply": {"text": "done"}},
        ],
    }
)
WEATHER = ToolCall("call_0_0", "get_weather", '{"city":"Paris"}')
TIME = ToolCall("call_0_1", "get_time", '{"city":"Paris"}')
SECOND = ToolCall("call_1_0", "get_weather", "not json")


def call_id(scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
    return f"call_{turn}_{index}" + (f"_{attempt}" if attempt > 1 else "")


def served(turn: int) -> Reply | None:
    found = SCENARIO.turn(turn)
    return found.reply if found else None


def check(*replies: tuple[ToolCall, ...], at: str = "messages[1]") -> Finding | None:
    """A history with one assistant message per element of `replies`, then a user message."""
    messages = [Message("user", "go", at="messages[0]")]
    for calls in replies:
        messages.append(Message("assistant", tool_calls=calls, at=at))
        messages.append(Message("user", "next"))
    return diverged(Conversation("m", tuple(messages)), SCENARIO, call_id, served)


def message(text: str, where: str = "messages[1]", turn: int = 0) -> Finding:
    return Finding(
        "history_diverged",
        f"mockllm history diverged at {where} (the reply of turn {turn}): {text}",
    )


def test_no_assistant_message_has_nothing_to_compare() -> None:
    assert check() is None


def test_the_served_history_is_not_diverged() -> None:
    assert check((WEATHER, TIME), (SECOND,)) is None


def test_arguments_are_compared_as_json() -> None:
    """Clients re-encode: spacing and key order may change."""
    respaced = ToolCall("call_0_0", "get_weather", '{ "city" : "Paris" }')
    assert check((respaced, TIME)) is None


def test_arguments_scripted_as_text_are_not_compared() -> None:
    """An SDK may have parsed them; nothing sound to compare."""
    assert check((WEATHER, TIME), (ToolCall("call_1_0", "get_weather", "{}"),)) is None


def test_past_the_script_stops_comparing() -> None:
    """scenario_exhausted reports that request; divergence says nothing more."""
    anything = (ToolCall("x", "y", "z"),)
    assert check((WEATHER, TIME), (SECOND,), (), anything) is None


@pytest.mark.parametrize(
    ("calls", "problem"),
    [
        (
            (WEATHER,),
            "tool_calls: expected 2 call(s) (get_weather call_0_0, get_time call_0_1), "
            "got 1 (get_weather call_0_0)",
        ),
        (
            (),
            "tool_calls: expected 2 call(s) (get_weather call_0_0, get_time call_0_1), got 0 (none)",
        ),
        (
            (TIME, WEATHER),
            "tool_calls order: expected ['call_0_0', 'call_0_1'], got ['call_0_1', 'call_0_0']",
        ),
        (
            (ToolCall("call_mine", "get_weather", WEATHER.arguments), TIME),
            "tool_calls[0].id: expected 'call_0_0', got 'call_mine'",
        ),
        (
            (WEATHER, ToolCall("call_0_1", "get_clock", TIME.arguments)),
            "tool_calls[1].name: expected 'get_time', got 'get_clock'",
        ),
        (
            (ToolCall("call_0_0", "get_weather", '{"city":"Lyon"}'), TIME),
            """tool_calls[0].arguments: expected '{"city":"Paris"}', got '{"city":"Lyon"}'""",
        ),
        (
            (ToolCall("call_0_0", "get_weather", '{"city":"Par'), TIME),
            """tool_calls[0].arguments: expected '{"city":"Paris"}', got '{"city":"Par'""",
        ),
    ],
    ids=["dropped", "all dropped", "reordered", "id", "name", "arguments", "cut arguments"],
)
def test_each_difference_in_one_line(calls: tuple[ToolCall, ...], problem: str) -> None:
    assert check(calls) == message(problem)


def test_a_reply_without_calls_given_calls_back() -> None:
    text_only = load_mapping(
        {"name": "t", "turns": [{"reply": {"text": "hi"}}, {"reply": {"text": "x"}}]}
    )
    conv = Conversation("m", (Message("assistant", tool_calls=(WEATHER,), at="input[1]"),))
    found = diverged(conv, text_only, call_id, lambda turn: text_only.turns[turn].reply)
    assert found == message(
        "tool_calls: expected 0 call(s) (none), got 1 (get_weather call_0_0)", where="input[1]"
    )


def test_a_later_turn_is_named_and_an_unnamed_message_described() -> None:
    assert check((WEATHER, TIME), (ToolCall("call_mine", "get_weather", "not json"),), at="") == (
        message("tool_calls[0].id: expected 'call_1_0', got 'call_mine'", "an assistant message", 1)
    )


def test_a_reply_that_cannot_be_made_concrete_is_skipped() -> None:
    """`served` answers None for a turn it cannot resolve now: nothing to compare against."""
    conv = Conversation("m", (Message("assistant", tool_calls=(), at="messages[1]"),))
    assert diverged(conv, SCENARIO, call_id, lambda turn: None) is None


def test_a_boolean_rewritten_as_a_number_is_a_difference() -> None:
    flag = Reply(tool_calls=(ScriptedCall("set", '{"on":true}'),))
    conv = Conversation(
        "m", (Message("assistant", tool_calls=(ToolCall("call_0_0", "set", '{"on":1}'),)),)
    )
    assert diverged(conv, SCENARIO, call_id, lambda turn: flag) is not None


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ({"n": 1}, {"n": 1.0}, True),  # JavaScript writes 1.0 as 1
        ({"x": [1, {"y": None}]}, {"x": [1, {"y": None}]}, True),
        ({"on": True}, {"on": 1}, False),
        ({"on": False}, {"on": 0}, False),
        ([0], [False], False),
        ({"s": "1"}, {"s": 1}, False),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, 2], [1], False),
    ],
)
def test_same_json_tells_booleans_from_numbers_but_not_ints_from_floats(
    a: object, b: object, same: bool
) -> None:
    assert same_json(a, b) is same


def test_a_call_scripted_with_text_arguments_may_come_back_renamed() -> None:
    """opencode renames a call it cannot parse to its own `invalid` tool, same id."""
    assert (
        check((WEATHER, TIME), (ToolCall("call_1_0", "invalid", '{"tool":"get_weather"}'),)) is None
    )


def test_a_call_with_json_arguments_renamed_is_still_a_difference() -> None:
    found = check((ToolCall("call_0_0", "invalid", '{"city":"Paris"}'), TIME))
    assert found is not None
    assert "tool_calls[0].name: expected 'get_weather', got 'invalid'" in found.message


def as_text(text: str) -> Finding | None:
    """Turn 0's reply carried back as assistant text, its results as a user message."""
    messages = (
        Message("user", "go", at="messages[0]"),
        Message("assistant", text, at="messages[1]"),
        Message("user", "Observation:\n18", at="messages[2]"),
    )
    return diverged(Conversation("m", messages), SCENARIO, call_id, served)


def test_calls_carried_as_text_are_the_reply_served() -> None:
    """smolagents sends `Calling tools:\\n[{'id': …}]`: plain text, valid to every API."""
    assert as_text("Calling tools:\n[{'id': 'call_0_0'}, {'id': 'call_0_1'}]") is None
    assert as_text("Calling tools: call_0_0_2, call_0_1_2") is None  # a retry's own ids


@pytest.mark.parametrize("text", ["", "Calling tools: call_0_0", "Calling tools: call_mine"])
def test_text_that_does_not_name_every_served_call_diverges(text: str) -> None:
    found = as_text(text)
    assert found is not None and found.rule == "history_diverged"


def test_an_echoed_call_is_parsed_as_the_served_object() -> None:
    """A Chat parse hands back the very call divergence served (compared by identity);
    a call the client changed is its own object and still diverges, with the message."""
    from mockllm.providers.openai_chat import ChatCompletions

    served_weather = served_calls(SCENARIO, 0, SCENARIO.turns[0].reply, call_id)[0]

    def history(city: str) -> Conversation:
        calls = [
            {"id": f"call_0_{i}", "function": {"name": name, "arguments": f'{{"city":"{city}"}}'}}
            for i, name in enumerate(["get_weather", "get_time"])
        ]
        body = {"model": "m", "messages": [{"role": "assistant", "tool_calls": calls}]}
        return ChatCompletions().parse(body).conversation

    echoed = history("Paris")
    assert echoed.messages[0].tool_calls[0] is served_weather
    assert diverged(echoed, SCENARIO, call_id, served) is None
    changed = history("Lyon")
    assert changed.messages[0].tool_calls[0] is not served_weather
    finding = diverged(changed, SCENARIO, call_id, served)
    assert finding is not None and "tool_calls[0].arguments" in finding.message


def history(*replies: tuple[ToolCall, ...], strict: bool = False) -> Conversation:
    """`check`'s history, with a strict tool offered or not."""
    messages = [Message("user", "go", at="messages[0]")]
    for calls in replies:
        messages += [Message("assistant", tool_calls=calls, at="messages[1]"), Message("user", "n")]
    tools = (Tool("get_weather", {"type": "object"}, strict=True),) if strict else ()
    return Conversation("m", tuple(messages), tools)


def test_a_history_echoed_as_scripted_is_decided_without_the_loop() -> None:
    """The fast test (engine._check_history asks it first) says yes only where `diverged`
    finds nothing, and hands every other history to it."""
    echoed = history((WEATHER, TIME), (SECOND,))
    assert echoed_as_scripted(echoed, SCENARIO, call_id)
    assert not echoed_as_scripted(history((TIME, WEATHER)), SCENARIO, call_id)  # diverged
    respaced = ToolCall("call_0_0", "get_weather", '{ "city" : "Paris" }')
    assert not echoed_as_scripted(history((respaced, TIME)), SCENARIO, call_id)  # JSON-equal
    assert not echoed_as_scripted(history((WEATHER, TIME), (SECOND,), (), ()), SCENARIO, call_id)
    strict = history((WEATHER, TIME), strict=True)  # concrete() may fill required properties
    assert not echoed_as_scripted(strict, SCENARIO, call_id)


def test_a_reply_a_request_makes_concrete_is_left_to_the_loop() -> None:
    generated = load_mapping(
        {
            "name": "generated",
            "turns": [
                {"reply": {"tool_calls": [{"name": "get_weather", "arguments": {}}]}},
                {"reply": {"tool_calls": [{"name": "get_weather", "generate": "valid"}]}},
                {"reply": {"text": "done"}},
            ],
        }
    )
    first = served_calls(generated, 0, generated.turns[0].reply, call_id)
    assert echoed_as_scripted(history(first), generated, call_id)
    # the scripted calls, not the ones `generate:` made for the request: only the loop knows
    second = served_calls(generated, 1, generated.turns[1].reply, call_id)
    assert not echoed_as_scripted(history(first, second), generated, call_id)


CHOICES = st.sampled_from(["echo", "equal", "changed", "none", "retry"])


@given(st.lists(CHOICES, max_size=5), st.booleans())
def test_the_fast_test_never_hides_a_divergence(choices: list[str], strict: bool) -> None:
    """Whatever the history, a yes from `echoed_as_scripted` means `diverged` (with the
    engine's own `served`) finds nothing; a history of echoes within the script is a yes."""
    replies = []
    for turn, choice in enumerate(choices):
        reply = SCENARIO.turn(turn)
        calls = served_calls(SCENARIO, turn, reply.reply, call_id) if reply else (WEATHER,)
        replies.append(
            {
                "echo": calls,
                "equal": tuple(ToolCall(c.id, c.name, c.arguments) for c in calls),
                "changed": tuple(ToolCall(c.id, c.name, c.arguments + " ") for c in calls),
                "none": (),
                "retry": tuple(ToolCall(c.id + "_2", c.name, c.arguments) for c in calls),
            }[choice]
        )
    conv = history(*replies, strict=strict)
    fast = echoed_as_scripted(conv, SCENARIO, call_id)
    if fast:
        assert diverged(conv, SCENARIO, call_id, _ServedReplies(SCENARIO, conv)) is None
    within = len(choices) <= len(SCENARIO.turns)
    if not strict and within and set(choices) <= {"echo", "equal"}:
        assert fast


def test_the_answer_kept_on_the_conversation_is_its_scenarios() -> None:
    """A cached request's conversation outlives a reload: kept per scenario object."""
    conv = history((WEATHER, TIME), (SECOND,))
    assert echoed_as_scripted(conv, SCENARIO, call_id)
    other = load_mapping({"name": "two-turns", "turns": [{"reply": {"text": "hi"}}]})
    assert not echoed_as_scripted(conv, other, call_id)
    assert echoed_as_scripted(conv, SCENARIO, call_id)
