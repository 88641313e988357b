"""One recorded request: the turn and attempt it was, and what the upstream did with it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from mockllm.core.heard import Heard, HeardError
from mockllm.providers import Adapter, Answers, Parsed, answers_of

# complete: the body ended normally; close: it ended cleanly but early; reset: the
# upstream aborted it; hung_up: the client left first (its timeout).
Ending = Literal["complete", "close", "reset", "hung_up"]
Outcome = Literal["served", "http", "stream_error", "truncate", "stall"]


@dataclass(slots=True)
class Attempt:
    adapter: Adapter
    parsed: Parsed
    turn: int
    number: int
    status: int = 0  # 0: no response from the upstream at all
    heard: Heard = field(default_factory=Heard)  # a 2xx answer, as far as it arrived
    error: HeardError | None = None  # an error status: the provider's words
    headers: tuple[tuple[str, str], ...] = ()  # an error status: its retry headers
    ending: Ending = "complete"
    received: int = 0  # body bytes
    partial: bool = False  # a stream that ended inside an event
    seconds: float = 0.0
    done: bool = False  # finished: it goes into the file

    def reader(self) -> Answers:
        """A fresh reader of this wire's answers (attempts exist only for wires that have one)."""
        reader = answers_of(self.adapter)
        assert reader is not None
        return reader()

    @property
    def stream(self) -> bool:
        return self.parsed.conversation.stream

    @property
    def outcome(self) -> Outcome:
        if self.status >= 400:
            return "http"
        if self.heard.error is not None:
            return "stream_error"
        if self.heard.complete:
            return "served"
        if self.ending == "hung_up" and self.received == 0:
            return "stall"
        return "truncate"

    def describe(self) -> str:
        """What happened, in a few words (console lines and YAML comments)."""
        outcome = self.outcome
        if outcome == "http":
            error = self.error or HeardError()
            return f"HTTP {self.status}" + (f" {error.type}" if error.type else "")
        if outcome == "stream_error":
            return f"error event {self.heard.error.type or ''}".rstrip()  # type: ignore[union-attr]
        if outcome == "stall":
            return "headers, then nothing until the client gave up"
        if outcome == "truncate":
            how = {"hung_up": "the client gave up", "close": "ended early", "reset": "reset"}
            return f"cut after {self.received} bytes ({how.get(self.ending, self.ending)})"
        calls = len(self.heard.calls)
        finish = self.heard.reply().finish
        return f"{finish}" + (f", {calls} call(s)" if calls else "")
