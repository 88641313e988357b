"""The Responses API's stored responses: what `previous_response_id` continues and
`GET /v1/responses/{id}` returns, per server, as bytes; and their form on a shared store."""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from mockllm.core.conversation import Message, ToolCall, ToolResult
from mockllm.core.wirejson import dumps_line

STORE_LIMIT = 10_000  # stored responses kept per server (oldest dropped first)


@dataclass(frozen=True, slots=True)
class Stored:
    """A stored response, as bytes only: a server keeps up to STORE_LIMIT of them, and
    bytes are invisible to the garbage collector, where the parsed request and its
    messages (tens of objects each) made every full collection walk the whole store (on
    the bench, about a quarter of a Responses request's CPU)."""

    messages: bytes  # JSON: the conversation, its own reply included (`Message.to_json`)
    body: bytes | None  # the response as rendered, for GET /v1/responses/{id}
    # (None: an upstream's answer, kept by `mockllm record`, which never serves a GET)
    # JSON: the tools the conversation's own input items offered (`additional_tools`, a
    # `tool_search_output`), each [flat name, namespace, name, kind]: part of the
    # conversation, so offered to a request that continues it (a `tools` field is not:
    # each request sends its own).
    tools: bytes = b"[]"

    @classmethod
    def made(
        cls, messages: tuple[Message, ...], body: bytes | None, tools: list[list[Any]] | None = None
    ) -> Stored:
        """A response kept as bytes: its conversation, the tools it carried and, when a
        server rendered it, its body."""
        return cls(_dumps_messages(messages), body, orjson.dumps(tools or []))

    def carried(self) -> list[list[Any]]:
        found: list[list[Any]] = json.loads(self.tools)
        return found

    def conversation(self) -> tuple[Message, ...]:
        return tuple(_stored_message(m) for m in json.loads(self.messages))

    def shared(self) -> bytes:
        """This response as the shared store holds it (JSON: `adopted` reads it back). The
        messages are JSON already: spliced in, not parsed and written again."""
        assert self.body is not None  # only what a server rendered is shared
        body = json.dumps(self.body.decode(), ensure_ascii=False).encode()
        return b'{"messages":%s,"body":%s,"tools":%s}' % (self.messages, body, self.tools)

    @classmethod
    def adopted(cls, data: bytes) -> Stored:
        """A response another server `shared`."""
        found = json.loads(data)
        tools = orjson.dumps(found.get("tools") or [])
        return cls(_dumps_messages_json(found["messages"]), found["body"].encode(), tools)


RECENT = 64  # the conversations of the latest responses, kept decoded (see `continued`)


class ResponseStore:
    """One server's stored responses by id, the oldest dropped past STORE_LIMIT."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, Stored] = OrderedDict()
        # response id → (its Stored, its conversation as `continued` gives it, or as kept)
        self._recent: OrderedDict[str, tuple[Stored, tuple[Message, ...], bool]] = OrderedDict()

    def get(self, response_id: str) -> Stored | None:
        return self._kept.get(response_id)

    def keep(
        self, response_id: str, stored: Stored, messages: tuple[Message, ...] | None = None
    ) -> None:
        """Keep `stored`; `messages`, its conversation when the caller has it at hand (a
        response just served), saves decoding it when the next request continues it."""
        self._kept[response_id] = stored
        while len(self._kept) > STORE_LIMIT:
            self._kept.popitem(last=False)
        if messages is not None:
            self._remember(response_id, (stored, messages, False))

    def continued(self, response_id: str, stored: Stored) -> tuple[Message, ...]:
        """The conversation a request continuing `response_id` (previous_response_id)
        resends, each message marked as coming from that response. An agent loop continues
        the response it was just given: a live loop (a WebSocket connection, an HTTP chain)
        gets it from the few kept decoded, not rebuilt from the stored bytes every turn."""
        found = self._recent.get(response_id)
        if found is not None and found[0] is stored and found[2]:
            return found[1]
        messages = found[1] if found is not None and found[0] is stored else None
        at = f"previous response {response_id}"
        marked = tuple(  # the constructor: dataclasses.replace reads the fields per call
            Message(m.role, m.text, m.tool_calls, m.tool_results, m.reasoning, at)
            for m in messages or stored.conversation()
        )
        self._remember(response_id, (stored, marked, True))
        return marked

    def _remember(self, response_id: str, entry: tuple[Stored, tuple[Message, ...], bool]) -> None:
        self._recent[response_id] = entry
        self._recent.move_to_end(response_id)
        while len(self._recent) > RECENT:
            self._recent.popitem(last=False)

    def item(self, item_id: str) -> dict[str, Any] | None:
        """The output item with this id among the stored responses (an `item_reference`
        names one), newest first; None when none holds it. Looked for only when a request
        names an item: the bytes are searched, nothing is indexed on the way in."""
        if not item_id.isascii() or not item_id.replace("_", "").isalnum():
            return None  # every id mockllm gives is a prefix and hex: no escape to match
        needle = b'{"id":"%s"' % item_id.encode()
        for stored in reversed(self._kept.values()):
            if stored.body is not None and needle in stored.body:
                for found in json.loads(stored.body).get("output") or ():
                    if isinstance(found, dict) and found.get("id") == item_id:
                        return dict(found)
        return None

    def drop(self, response_id: str) -> None:
        self._kept.pop(response_id, None)
        self._recent.pop(response_id, None)

    def clear(self) -> None:
        self._kept.clear()
        self._recent.clear()

    def __len__(self) -> int:
        return len(self._kept)


def _dumps_messages(messages: tuple[Message, ...]) -> bytes:
    try:  # every field, as orjson writes the dataclasses (`_stored_message` reads it)
        return orjson.dumps([_row(m) for m in messages])
    except orjson.JSONEncodeError:  # a reply's lone surrogate: escaped instead
        return _dumps_messages_json([m.to_json() for m in messages])


def _row(m: Message) -> dict[str, Any]:
    """`m` as `orjson.dumps(m)` writes it, as a dict: orjson writes a slotted dataclass
    by asking for its `__dict__` first (an AttributeError made and dropped per object)
    and then reading its fields' declarations, about 3 µs an object, where a dict is
    written directly (held equal by tests/unit/providers/test_responses_store.py)."""
    return {
        "role": m.role,
        "text": m.text,
        "tool_calls": _calls(m.tool_calls) if m.tool_calls else (),
        "tool_results": _results(m.tool_results) if m.tool_results else (),
        "reasoning": m.reasoning,
        "at": m.at,
    }


def _calls(calls: tuple[ToolCall, ...]) -> list[dict[str, str]]:
    return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]


def _results(results: tuple[ToolResult, ...]) -> list[dict[str, Any]]:
    return [
        {"call_id": r.call_id, "content": r.content, "is_error": r.is_error, "paired": r.paired}
        for r in results
    ]


def _dumps_messages_json(messages: list[dict[str, Any]]) -> bytes:
    return dumps_line(messages).encode()  # a reply's surrogate comes out escaped


def _stored_message(data: dict[str, Any]) -> Message:
    """A message as `Message.to_json` wrote it to the shared store."""
    return Message(
        data["role"],
        data.get("text", ""),
        tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in data.get("tool_calls", ())),
        tuple(
            ToolResult(r["call_id"], r["content"], r.get("is_error"), r.get("paired"))
            for r in data.get("tool_results", ())
        ),
        data.get("reasoning"),
        data.get("at", ""),
    )
