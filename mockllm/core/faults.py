"""Faults act on the rendered reply, never inside adapters (docs/scenarios.md, faults).

A `Delivery` says what goes out and how: the chunks (SSE frames, or one JSON body), the
pauses, and how the response ends — `complete`, `close` (a clean end of body that lacks
the tail), `reset` (aborted mid-body), or `stall` (headers, then nothing). The app carries
it out; these functions only decide it, so they are pure and tested in-process.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Literal

from mockllm.core.encoding import compact_json
from mockllm.core.events import Event
from mockllm.core.scenario import (
    Fault,
    HttpFault,
    Misbehave,
    Reply,
    Stall,
    StreamError,
    Truncate,
)
from mockllm.core.values import assert_never, value

Ending = Literal["complete", "close", "reset", "stall"]


@value  # one per request: see values.py
class Delivery:
    """How a rendered body goes out: its chunks, pauses and any cut."""

    chunks: list[bytes]
    ending: Ending = "complete"
    first_byte_ms: int = 0
    between_ms: int = 0
    # What the plan lets the client have: how many of the reply's events go out whole (a
    # body counts as one), and the fault that cuts the rest; None: all of them, uncut.
    whole: int | None = None
    cut: str | None = None

    @property
    def paced(self) -> bool:
        """Whether chunks must go out one by one (else one coalesced send is enough)."""
        return self.between_ms > 0 or self.ending == "stall"


Answer = Literal["http_error", "stream_error", "stream", "body"]


def answer_kind(fault: Fault | None, stream: bool) -> Answer:
    """How a fault has a reply answered: as an HTTP error (an `http` fault, or a
    `stream_error` asked for without a stream, which no SSE frame can carry), or as the
    reply's stream or body, delivered by `stream_delivery` / `body_delivery`."""
    part = fault.part if fault is not None else None
    if isinstance(part, HttpFault):
        return "http_error"
    if isinstance(part, StreamError) and not stream:
        return "stream_error"
    return "stream" if stream else "body"


def first_byte_ms(fault: Fault | None) -> int:
    return fault.delay.first_byte_ms if fault is not None and fault.delay else 0


def counts_events(fault: Fault | None) -> bool:
    """Whether a non-streamed body is cut where the stream would be (`after_events`), so
    its delivery needs the number of events the reply streams as."""
    part = fault.part if fault is not None else None
    return isinstance(part, Truncate) and part.after_events is not None


def stream_delivery(
    fault: Fault | None, events: list[Event], error_events: Callable[[int], list[bytes]] | None
) -> Delivery:
    """The SSE frames of a streamed reply, as the fault lets them through."""
    frames = [e.data for e in events]
    if fault is None:
        return Delivery(frames)
    match fault.part:
        case Stall():
            return _paced(fault, [], "stall", 0, "stall")
        case StreamError(after_events=after) if error_events is not None:
            at = len(frames) // 2 if after is None else min(after, len(frames))
            return _paced(fault, frames[:at] + error_events(at), "complete", at, "stream_error")
        case Truncate() as truncate:
            chunks = _cut_events(truncate, events)
            whole = whole_events(events, sum(map(len, chunks)))
            if whole == len(events):
                return _paced(fault, chunks, truncate.disconnect)
            return _paced(fault, chunks, truncate.disconnect, whole, "truncate")
        case (
            HttpFault() | StreamError() | Misbehave() | None
        ):  # answered as HTTP errors by the app; a delay
            return _paced(fault, frames, "complete")
        case unreachable:
            assert_never(unreachable)


def whole_events(events: Sequence[Event], sent: int) -> int:
    """How many of `events` the first `sent` bytes of the stream hold whole: a frame cut
    short hands the client nothing (an SSE event counts once its blank line arrives)."""
    count = 0
    for event in events:
        sent -= len(event.data)
        if sent < 0:
            break
        count += 1
    return count


def body_delivery(fault: Fault | None, body: bytes, reply: Reply, events: int = 0) -> Delivery:
    """A non-streamed JSON body, as the fault lets it through (stream_error and http are
    answered as HTTP errors by the app before this). `events`: how many events the same
    reply streams as, so `after_events` cuts the body at the same fraction."""
    if fault is None:
        return Delivery([body])
    match fault.part:
        case Stall():
            return _paced(fault, [], "stall", 0, "stall")
        case Truncate() as truncate:
            cut = _body_cut(truncate, body, reply, events)
            if cut >= len(body):
                return _paced(fault, [body], truncate.disconnect)
            return _paced(fault, [body[:cut]], truncate.disconnect, 0, "truncate")
        case HttpFault() | StreamError() | Misbehave() | None:
            return _paced(fault, [body], "complete")
        case unreachable:
            assert_never(unreachable)


def _paced(
    fault: Fault,
    chunks: list[bytes],
    ending: Ending,
    whole: int | None = None,
    cut: str | None = None,
) -> Delivery:
    delay = fault.delay
    first, between = (delay.first_byte_ms, delay.between_chunks_ms) if delay else (0, 0)
    return Delivery(chunks, ending, first, between, whole, cut)


def _cut_events(truncate: Truncate, events: list[Event]) -> list[bytes]:
    frames = [e.data for e in events]
    if truncate.after_bytes is not None:
        return [b"".join(frames)[: truncate.after_bytes]]
    if truncate.after_events is not None:
        return frames[: truncate.after_events]
    call = truncate.inside or 0
    whole = next((e for e in events if e.part == f"call:{call}" and e.inside is not None), None)
    if whole is not None and whole.inside is not None:  # a call sent whole: cut inside its frame
        at = events.index(whole)
        return [*frames[:at], whole.data[: whole.inside]]
    return frames[: _inside_arguments(call, events)]


def _inside_arguments(call: int, events: list[Event]) -> int:
    """How many events to send to stop mid-way through call `call`'s argument fragments:
    its start, then the first half of its fragments (none when it has only one)."""
    starts = [i for i, e in enumerate(events) if e.part == f"call:{call}"]
    fragments = [i for i, e in enumerate(events) if e.part == f"args:{call}"]
    if len(fragments) >= 2:
        return fragments[len(fragments) // 2 - 1] + 1
    return starts[-1] + 1 if starts else len(events) // 2


def _body_cut(truncate: Truncate, body: bytes, reply: Reply, events: int) -> int:
    """The byte a non-streamed body is cut at: the same byte count, the middle of call I's
    arguments as they appear in the body, or the same fraction of the events."""
    if truncate.after_bytes is not None:
        return truncate.after_bytes
    if truncate.after_events is not None:
        return (
            len(body) * min(truncate.after_events, events) // events if events else len(body) // 2
        )
    call = truncate.inside
    if call is not None and call < len(reply.tool_calls):
        span = _arguments_span(body, reply, call)
        if span is not None:
            return (span[0] + span[1]) // 2
    return len(body) // 2


def _arguments_span(body: bytes, reply: Reply, call: int) -> tuple[int, int] | None:
    """Where call `call`'s arguments sit in the body: as an escaped JSON string (OpenAI)
    or as an object (Anthropic `input`). Calls appear in order, so each is looked for after
    the one before it: two calls with equal arguments are told apart."""
    after = 0
    for earlier in range(call):
        span = _span_after(body, reply, earlier, after)
        after = span[1] if span is not None else after
    return _span_after(body, reply, call, after)


def _span_after(body: bytes, reply: Reply, call: int, after: int) -> tuple[int, int] | None:
    arguments = reply.tool_calls[call].arguments
    candidates = [json.dumps(arguments, ensure_ascii=False)]
    parsed = reply.tool_calls[call].arguments_object()
    if parsed is not None:
        candidates.append(compact_json(parsed))
    for text in candidates:
        start = body.find(text.encode(), after)
        if start >= 0:
            return start, start + len(text.encode())
    return None
