"""Pairing tool results with calls on the wires whose results may carry no call id: Gemini's
`functionResponse` (an optional `id`, a required `name`) and Ollama's `tool` message (an
optional `tool_call_id`, a `tool_name`, or neither). A result keeps its wire identity in its
`call_id` until the history is read whole; then each call gets mockllm's name for it and each
result the call it answers."""

from __future__ import annotations

from dataclasses import replace

from mockllm.core.conversation import Message, ToolCall


def call_key(turn: int, index: int) -> str:
    """How mockllm names call `index` of the reply of `turn` on a wire whose calls may carry
    no id."""
    return f"turn{turn}.call{index}"


class WireKey:
    """A result's wire identity (its id if any, its name) until it is paired with a call."""

    SEP = "\x1f"

    def __init__(self, wire_id: str, name: str) -> None:
        self.id, self.name = wire_id, name

    def encode(self) -> str:
        return f"{self.id}{self.SEP}{self.name}"

    @classmethod
    def decode(cls, key: str) -> WireKey:
        wire_id, _, name = key.partition(cls.SEP)
        return cls(wire_id, name)


def name_calls(messages: list[Message], by_position: bool = False) -> list[Message]:
    """Give each call mockllm's name for it (`turnT.callI`), and pair each result with a
    call of the reply before it: by id, else by name and position, else (`by_position`: a
    result with neither, as strands sends to Ollama) the first call still open."""
    out: list[Message] = []
    turn = 0
    open_calls: list[tuple[str, ToolCall]] = []  # (mockllm's id, the call as sent) not yet answered
    for m in messages:
        if m.role == "assistant":
            named = [(call_key(turn, i), c) for i, c in enumerate(m.tool_calls)]
            out.append(replace(m, tool_calls=tuple(replace(c, id=k) for k, c in named)))
            open_calls = named
            turn += 1
        elif m.role == "tool":
            results = []
            for r in m.tool_results:
                key, how = _pair(WireKey.decode(r.call_id), open_calls, by_position)
                results.append(replace(r, call_id=key, paired=how))
            out.append(replace(m, tool_results=tuple(results)))
        else:
            out.append(m)
    return out


def _pair(
    wire: WireKey, open_calls: list[tuple[str, ToolCall]], by_position: bool
) -> tuple[str, str]:
    """The call a result answers (taken off `open_calls`), and how it was found."""
    found, how = None, "by id"
    if wire.id:
        found = next((i for i, (_, c) in enumerate(open_calls) if c.id == wire.id), None)
    if found is None:
        how = "by name and position"
        found = next((i for i, (_, c) in enumerate(open_calls) if c.name == wire.name), None)
    if found is None and by_position and not wire.id and not wire.name and open_calls:
        found, how = 0, "by position"
    if found is None:
        return wire.id or wire.name, "unpaired"
    key, _ = open_calls.pop(found)
    return key, how
