"""What the client received of a reply, in no wire's words: a log entry's
`response.delivered` (docs/http-api.md, "A log entry").

The server knows it without reading its own bytes back: each event a reply streams as is
tagged with the part it carries and the piece of it (core/events.py), and the delivery
plan says how many events went out whole and which fault cut the rest (core/faults.py).
Adding up the pieces of the events sent is the same few lines for every wire, present or
future; the viewer, the transcript, `report` and the verdict read the result, so none of
them knows a wire's format.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mockllm.core.faults import whole_events

if TYPE_CHECKING:
    from mockllm.core.events import Event
    from mockllm.core.scenario import Reply


def streams_reasoning(events: Sequence[Event]) -> bool:
    """Whether a stream hands the client its reasoning readable. A wire may leave it out
    or send it encrypted (Responses without a summary asked for; Chat Completions but for
    DeepSeek), and then no event carries it."""
    return any(e.carries for e in events if e.part == "reasoning")


def body_holds(body: bytes, reasoning: str) -> bool:
    """The same for a JSON body: the reasoning looked for as JSON writes a string, as
    `core/faults.py` finds a call's arguments in a body."""
    return json.dumps(reasoning, ensure_ascii=False)[1:-1].encode() in body


def delivered(
    reply: Reply,
    events: Sequence[Event] | None,
    planned: int | None,
    cut_by: str | None,
    sent: int,
    hung_up: bool,
) -> dict[str, Any] | None:
    """What the client got of a reply that did not arrive whole; None when it did (then
    the entry's text, reasoning and tool_calls are what it got).

    `events`: the stream's, or None for a JSON body (one event: a body cut anywhere hands
    the client nothing usable); `planned`/`cut_by`: the plan's whole events and its cutting
    fault (core/faults.py, Delivery); `sent`: the body bytes that went out; `hung_up`: the
    client hung up while the response was being sent."""
    if events is None:
        if planned is None and not hung_up:
            return None
        return _shown(_nothing(), cut_by or "disconnect", "body")
    plan = len(events) if planned is None else planned
    whole = min(plan, whole_events(events, sent))  # the client may hang up mid-plan
    if whole == len(events):
        return None
    record = _nothing()
    for event in events[:whole]:
        _add(record, event, reply)
    by = "disconnect" if hung_up and whole < plan else cut_by or "disconnect"
    return _shown(record, by, _part(events[whole].part))


def _nothing() -> dict[str, Any]:
    return {"text": "", "reasoning": "", "tool_calls": []}


def _add(record: dict[str, Any], event: Event, reply: Reply) -> None:
    piece, part = event.carries, event.part
    if piece is None:
        return
    if part in ("text", "reasoning"):
        record[part] += piece
        return
    kind, _, number = part.partition(":")
    calls: list[dict[str, Any]] = record["tool_calls"]
    index = int(number) if number.isdigit() else -1
    if kind == "call" and index == len(calls) and index < len(reply.tool_calls):
        calls.append({"name": reply.tool_calls[index].name, "arguments": piece})
    elif kind == "args" and 0 <= index < len(calls):
        calls[index]["arguments"] += piece


def _part(tag: str) -> str:
    """Where the cut fell, as the log says it: reasoning, text, call:I (its start, a
    fragment or its close), head (before any content) or tail (after all of it)."""
    kind, _, number = tag.partition(":")
    if kind in ("call", "args") or (kind == "done" and number):
        return f"call:{number}"
    return tag if tag in ("head", "reasoning", "text") else "tail"


def _shown(record: dict[str, Any], by: str, at: str) -> dict[str, Any]:
    record["cut"] = {"by": by, "in": at}
    return record
