"""Keep-alive comments in an SSE stream (`stream: {keep_alive: …}`, docs/scenarios.md):
what OpenRouter (`: OPENROUTER PROCESSING`) and others send while the model works.

An SSE line starting with ":" is a comment, which a reader must ignore; a blank line after
one ends a block with no data, which dispatches no event (the WHATWG SSE spec,
"dispatch the event": an empty data buffer returns). Readers that re-emit a comment as
data, or dispatch the empty block, break on it (openai-python #2722, openai-go #556).

The comments ride on the frames they precede or follow, so a stream keeps its number of
events and faults that count events (`after_events`) cut where they did without them.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockllm.core.events import Event


@dataclass(frozen=True, slots=True)
class KeepAlive:
    """A stream's SSE keep-alive comments (`stream: {keep_alive}`)."""

    comment: str = "ping"  # the comment's text, after ": "
    before: int = 1  # comments before the first event
    between: int = 0  # comments after every event but the last
    blank_line: bool = False  # a blank line after each comment (an empty block)


def comments(keep_alive: KeepAlive, count: int) -> bytes:
    line = b": " + keep_alive.comment.encode() + b"\n"
    if keep_alive.blank_line:
        line += b"\n"
    return line * count


def with_comments(events: list[Event], keep_alive: KeepAlive) -> list[Event]:
    """The frames with the comments in: before the first, and after each but the last."""
    if not events:
        return events
    before, between = (
        comments(keep_alive, keep_alive.before),
        comments(keep_alive, keep_alive.between),
    )
    out = []
    last = len(events) - 1
    for i, event in enumerate(events):
        data = (before if i == 0 else b"") + event.data + (between if i < last else b"")
        shift = len(before) if i == 0 else 0
        inside = event.inside + shift if event.inside is not None else None
        out.append(event._replace(data=data, inside=inside))
    return out
