"""`resent_dropped`: with `previous_response_id`, input items that repeat the end of the
stored conversation (strands, CrewAI: sent again without their `id`) are read once."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mockllm.core.conversation import Message, ToolCall, ToolResult
from mockllm.providers.openai_responses import resent_dropped

ASK = Message("user", "Weather?")
CALL = Message("assistant", "", (ToolCall("call_1", "get_weather", '{"city":"Paris"}'),))
RESULT = Message("tool", tool_results=(ToolResult("call_1", "18"),))
STORED = (ASK, CALL)


def test_the_turn_sent_again_is_dropped_up_to_what_is_new() -> None:
    respaced = Message("assistant", "", (ToolCall("call_1", "get_weather", '{"city": "Paris"}'),))
    assert resent_dropped(STORED, (ASK, respaced, RESULT)) == (RESULT,)
    assert resent_dropped(STORED, (CALL, RESULT)) == (RESULT,)


def test_only_new_items_are_kept_whole() -> None:
    assert resent_dropped(STORED, (RESULT,)) == (RESULT,)
    assert resent_dropped(STORED, ()) == ()
    assert resent_dropped((), (ASK,)) == (ASK,)


def test_a_repeat_that_does_not_reach_the_stored_reply_is_new() -> None:
    """The user asking the same again is a new message: it does not end on the reply."""
    assert resent_dropped(STORED, (ASK,)) == (ASK,)
    other = Message("assistant", "", (ToolCall("call_2", "get_weather", "{}"),))
    assert resent_dropped(STORED, (ASK, other, RESULT)) == (ASK, other, RESULT)


MESSAGES = st.sampled_from(
    [ASK, CALL, RESULT, Message("user", "again"), Message("assistant", "ok")]
)


@given(st.lists(MESSAGES, max_size=6), st.lists(MESSAGES, max_size=6))
def test_what_is_kept_is_the_end_of_what_was_sent(
    history: list[Message], rest: list[Message]
) -> None:
    kept = resent_dropped(tuple(history), tuple(rest))
    assert tuple(rest[len(rest) - len(kept) :]) == kept  # a suffix: never reordered, never new
    assert resent_dropped(tuple(history), (*history, *rest)) == tuple(rest)  # all resent
