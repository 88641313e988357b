"""`mockllm.core.rejoin.unmerged`: an assistant message carrying the calls of consecutive
served replies (Mastra, AI SDK 5) is read as those replies, each followed by its results;
anything else is left for the divergence check to report."""

from __future__ import annotations

from mockllm.core.conversation import Conversation, Message, ToolCall, ToolResult
from mockllm.core.rejoin import unmerged
from mockllm.core.scenario import Scenario
from mockllm.loading.loader import load_mapping

SCENARIO = load_mapping(
    {
        "name": "two-steps",
        "turns": [
            {"reply": {"tool_calls": [{"name": "search", "arguments": {}}]}},
            {"reply": {"tool_calls": [{"name": "read", "arguments": {}}]}},
            {"reply": {"text": "done"}},
        ],
    }
)
ASK = Message("user", "go", at="messages[0]")
SEARCH, READ = ToolCall("call_0_0", "search", "{}"), ToolCall("call_1_0", "read", "{}")


def call_id(scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
    return f"call_{turn}_{index}" + (f"_{attempt}" if attempt > 1 else "")


def result(call: ToolCall) -> Message:
    return Message("tool", tool_results=(ToolResult(call.id, call.name),), at="messages[2]")


def merged(*calls: ToolCall) -> Conversation:
    merged = Message("assistant", "Looking.", calls, at="messages[1]")
    return Conversation("m", (ASK, merged, *map(result, calls)))


def test_two_replies_merged_into_one_message_are_read_apart() -> None:
    out = unmerged(merged(SEARCH, READ), SCENARIO, call_id)
    assert [(m.role, m.text, m.tool_calls) for m in out.messages] == [
        ("user", "go", ()),
        ("assistant", "Looking.", (SEARCH,)),
        ("tool", "", ()),
        ("assistant", "", (READ,)),
        ("tool", "", ()),
    ]
    assert [r.call_id for m in out.messages for r in m.tool_results] == [SEARCH.id, READ.id]
    assert out.turn == 2


def test_a_retry_attempt_merged_reads_with_its_own_ids() -> None:
    retried = ToolCall("call_1_0_2", "read", "{}")
    assert unmerged(merged(SEARCH, retried), SCENARIO, call_id).turn == 2


def test_what_is_not_consecutive_served_calls_is_left_as_sent() -> None:
    for calls in [(READ, SEARCH), (SEARCH, ToolCall("call_mine", "read", "{}")), (SEARCH,)]:
        conv = merged(*calls)
        assert unmerged(conv, SCENARIO, call_id) is conv
