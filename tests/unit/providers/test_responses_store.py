"""The Responses store keeps a conversation as JSON bytes: it reads back as it went in,
a reply's lone surrogate included (orjson refuses it; the json module escapes it)."""

from __future__ import annotations

import pytest

from mockllm.core.conversation import Message, ToolCall, ToolResult
from mockllm.providers.responses_store import Stored

CONVERSATIONS = [
    (Message("user", "北京和上海? 18 °C", at="input[0]"),),
    (
        Message("user", "weather?"),
        Message(
            "assistant", "", (ToolCall("call_1", "get_weather", '{"city":"Paris"}'),), reasoning="r"
        ),
        Message("tool", "", (), (ToolResult("call_1", "18", True, "by id"),), at="input[2]"),
    ),
    (Message("assistant", "lone \ud800 surrogate"),),  # a scenario may say anything
]


@pytest.mark.parametrize("messages", CONVERSATIONS)
def test_a_stored_conversation_reads_back_as_it_went_in(messages: tuple[Message, ...]) -> None:
    stored = Stored.of(messages, b"{}")
    assert isinstance(stored.messages, bytes)
    assert stored.conversation() == messages
