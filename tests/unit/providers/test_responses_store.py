"""The Responses store keeps a conversation as JSON bytes: it reads back as it went in,
a reply's lone surrogate included (orjson refuses it; the json module escapes it); and the
output items an `item_reference` names are found in the stored bodies."""

from __future__ import annotations

import json
from dataclasses import replace

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm.core.conversation import Message, ToolCall, ToolResult
from mockllm.errors import RequestError
from mockllm.providers.openai_responses import Responses
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
    stored = Stored.made(messages, b"{}")
    assert isinstance(stored.messages, bytes)
    assert stored.conversation() == messages


def stored_output(*items: dict[str, object]) -> Stored:
    body = json.dumps({"id": "resp_1", "output": list(items)}, separators=(",", ":"))
    return Stored.made((), body.encode())


CALL = {"id": "fc_1a", "type": "function_call", "call_id": "call_9", "name": "f", "arguments": "{}"}


def test_an_item_is_found_by_its_id_in_the_stored_bodies() -> None:
    store = ResponseStore()
    store.keep("resp_1", stored_output({"id": "msg_1", "type": "message"}, CALL))
    store.keep("resp_2", Stored.made((), None))  # an upstream's answer: no body to look in
    assert store.item("fc_1a") == CALL
    assert store.item("fc_1") is None  # a prefix of an id is not that id
    assert store.item('fc_1a"') is None and store.item("") is None


def test_an_item_reference_parses_to_the_item_it_names() -> None:
    adapter = Responses()
    adapter._store.keep("resp_1", stored_output(CALL))
    body = {
        "model": "m",
        "input": [
            {"role": "user", "content": "go"},
            {"type": "item_reference", "id": "fc_1a"},
            {"type": "function_call_output", "call_id": "call_9", "output": "ok"},
        ],
    }
    parsed = adapter.parse(body)
    assert [m.role for m in parsed.conversation.messages] == ["user", "assistant", "tool"]
    assert parsed.conversation.messages[1].tool_calls == (ToolCall("call_9", "f", "{}"),)
    assert body["input"][1] == CALL  # the history rules read the item, as the API does
    assert not parsed.cacheable  # what it reads depends on the store


def test_an_unknown_item_reference_is_the_apis_404() -> None:
    with pytest.raises(RequestError) as caught:
        Responses().parse({"model": "m", "input": [{"type": "item_reference", "id": "rs_2"}]})
    assert caught.value.status == 404 and caught.value.param == "input"
    assert caught.value.message.startswith("Item with id 'rs_2' not found.")


@given(
    st.one_of(
        st.text(max_size=60), st.none(), st.integers(), st.lists(st.text(max_size=3), max_size=2)
    )
)
def test_any_item_reference_id_is_found_or_refused_in_the_apis_shape(item_id: object) -> None:
    adapter = Responses()
    adapter._store.keep("resp_1", stored_output(CALL))
    try:
        adapter.parse({"model": "m", "input": [{"type": "item_reference", "id": item_id}]})
    except RequestError as error:
        assert error.status in (400, 404) and error.param is not None
    else:
        assert item_id == "fc_1a"


@pytest.mark.parametrize("messages", CONVERSATIONS)
def test_a_continued_response_is_its_conversation_marked_whether_kept_decoded_or_not(
    messages: tuple[Message, ...],
) -> None:
    """A live loop continues the response it was just served: its conversation comes from
    the few kept decoded, the same messages the stored bytes decode to, each marked as
    coming from that response."""
    store = ResponseStore()
    stored = Stored.made(messages, b"{}")
    store.keep("resp_1", stored, messages)  # served just now: decoded at hand
    store.keep("resp_2", Stored.made(messages, b"{}"))  # adopted from another server: bytes
    expected = tuple(replace(m, at="previous response resp_1") for m in stored.conversation())
    first = store.continued("resp_1", stored)
    assert first == expected
    assert store.continued("resp_1", stored) is first  # the next turn: not rebuilt
    other = store.get("resp_2")
    assert other is not None
    assert store.continued("resp_2", other) == tuple(
        replace(m, at="previous response resp_2") for m in messages
    )
    replaced = Stored.made(messages[:1], b"{}")  # the same id kept anew: never the old one
    store.keep("resp_1", replaced)
    assert len(store.continued("resp_1", replaced)) == 1


_text = st.text(max_size=8).filter(lambda t: not any(0xD800 <= ord(c) <= 0xDFFF for c in t))
_calls = st.builds(ToolCall, _text, _text, _text)
_results = st.builds(
    ToolResult, _text, _text, st.none() | st.booleans(), st.none() | st.sampled_from(["by id"])
)
_messages = st.builds(
    Message,
    st.sampled_from(["system", "user", "assistant", "tool"]),
    _text,
    st.tuples() | st.lists(_calls, max_size=2).map(tuple),
    st.tuples() | st.lists(_results, max_size=2).map(tuple),
    st.none() | _text,
    _text,
)


@given(st.lists(_messages, max_size=3).map(tuple))
def test_a_conversation_is_stored_as_orjson_writes_its_dataclasses(
    messages: tuple[Message, ...],
) -> None:
    """The stored bytes are what `orjson.dumps` of the messages themselves wrote before
    they were written as dicts (the shared store and older servers read the same bytes)."""
    assert Stored.made(messages, None).messages == orjson.dumps(messages)
    assert Stored.made(messages, None).conversation() == messages
