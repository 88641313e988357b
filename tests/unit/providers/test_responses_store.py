"""The Responses store keeps a conversation as JSON bytes: it reads back as it went in,
a reply's lone surrogate included (orjson refuses it; the json module escapes it)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mockllm.core.conversation import Message, ToolCall, ToolResult
from mockllm.providers.responses_store import ResponseStore, Stored

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


@pytest.mark.parametrize("messages", CONVERSATIONS)
def test_a_continued_response_is_its_conversation_marked_whether_kept_decoded_or_not(
    messages: tuple[Message, ...],
) -> None:
    """A live loop continues the response it was just served: its conversation comes from
    the few kept decoded, the same messages the stored bytes decode to, each marked as
    coming from that response."""
    store = ResponseStore()
    stored = Stored.of(messages, b"{}")
    store.keep("resp_1", stored, messages)  # served just now: decoded at hand
    store.keep("resp_2", Stored.of(messages, b"{}"))  # adopted from another server: bytes
    expected = tuple(replace(m, at="previous response resp_1") for m in stored.conversation())
    first = store.continued("resp_1", stored)
    assert first == expected
    assert store.continued("resp_1", stored) is first  # the next turn: not rebuilt
    other = store.get("resp_2")
    assert other is not None
    assert store.continued("resp_2", other) == tuple(
        replace(m, at="previous response resp_2") for m in messages
    )
    replaced = Stored.of(messages[:1], b"{}")  # the same id kept anew: never the old one
    store.keep("resp_1", replaced)
    assert len(store.continued("resp_1", replaced)) == 1
