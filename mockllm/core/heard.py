"""What an upstream API answered, in neutral terms: the recorder's counterpart of `Reply`.

Each wire's `Answers` reader (providers/<api>_answers.py) fills one `Heard` from a JSON
body or, event by event, from a stream; `reply()` turns it into the scenario's `Reply`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockllm.core.scenario import Finish, Reply, ScriptedCall, Usage


@dataclass(slots=True)
class HeardCall:
    """A tool call in an upstream API's answer (mockllm record)."""

    name: str = ""
    arguments: str = ""  # verbatim, as the wire carried it (malformed JSON included)
    id: str = ""


@dataclass(frozen=True, slots=True)
class HeardError:
    """An error as the provider worded it: an HTTP error body, or an in-band stream error."""

    type: str | None = None
    message: str | None = None
    code: str | None = None


@dataclass(slots=True)
class Heard:
    """What an upstream API answered, as `mockllm record` reads it."""

    text: str = ""
    reasoning: str | None = None
    calls: list[HeardCall] = field(default_factory=list)
    finish: Finish | None = None  # None: the answer never said (a cut stream)
    input_tokens: int | None = None
    output_tokens: int | None = None
    model: str | None = None
    response_id: str | None = None  # the upstream's own id, for APIs that refer back to it
    complete: bool = False  # the answer's terminator arrived
    error: HeardError | None = None  # an in-band error ended the stream
    dropped: list[str] = field(default_factory=list)  # what a scenario cannot hold

    def drop(self, what: str) -> None:
        if what not in self.dropped:
            self.dropped.append(what)

    def read_usage(
        self,
        usage: Any,
        input_key: str | None = "input_tokens",
        output_key: str | None = "output_tokens",
    ) -> None:
        """Token counts from a wire's usage object, where it gives them (a key of None: this
        object's count of that kind is not the final one)."""
        if not isinstance(usage, dict):
            return
        if input_key is not None and isinstance(usage.get(input_key), int):
            self.input_tokens = usage[input_key]
        if output_key is not None and isinstance(usage.get(output_key), int):
            self.output_tokens = usage[output_key]

    def size(self) -> int:
        """How much content arrived: what a cut is measured by."""
        return (
            len(self.text)
            + len(self.reasoning or "")
            + sum(len(c.name) + len(c.arguments) + 1 for c in self.calls)
        )

    def reply(self) -> Reply:
        """The scenario reply. Call ids are left to mockllm's own scheme, except where the
        answer repeated one (a failure mode worth keeping)."""
        ids = [c.id for c in self.calls]
        repeated = {i for i in ids if i and ids.count(i) > 1}  # Gemini may send none
        calls = tuple(
            ScriptedCall(c.name, c.arguments, c.id if c.id in repeated else None)
            for c in self.calls
        )
        default: Finish = "tool_calls" if calls else "stop"
        return Reply(
            text=self.text,
            reasoning=self.reasoning,
            tool_calls=calls,
            finish=self.finish or default,
            usage=Usage(self.input_tokens, self.output_tokens),
        )
