"""A session's log entries as a readable transcript, turn by turn, for failure messages.

Each request shows only what is new in it (the messages after the last assistant
reply it carries back: the user's text, tool results), then what mockllm answered,
so the transcript reads like the conversation rather than repeating its history.
"""

from __future__ import annotations

from collections.abc import Sequence

from mockllm.core.conversation import Message, ToolCall
from mockllm.log.records import LogEntry, LogResponse

_WIDTH = 160  # characters of any one text shown; the log keeps everything


def transcript(entries: Sequence[LogEntry], session: str | None = None) -> str:
    name = session or next((e.session for e in entries if e.session), None) or "?"
    if not entries:
        return (
            f"mockllm session {name!r}: no model requests were logged "
            "(is the client's base URL the fixture's url(...)?)"
        )
    lines = [f"mockllm session {name!r}, {plural(len(entries), 'model request')}:"]
    for number, entry in enumerate(entries, 1):
        lines += _entry(number, entry)
    return "\n".join(lines)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def short(text: str, width: int = _WIDTH) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"


def call_text(call: ToolCall) -> str:
    return f"{call.name}({short(call.arguments, 80)}) id={call.id}"


def _entry(number: int, entry: LogEntry) -> list[str]:
    turn = "?" if entry.turn is None else entry.turn
    offered = ", ".join(entry.tools) or "none"
    head = (
        f"  request {number} (log seq {entry.seq}) · turn {turn} · {entry.api} · "
        f"scenario {entry.scenario} · tools offered: {offered}"
    )
    lines = [head, *(f"       {line}" for m in _new_messages(entry) for line in _message(m))]
    lines += [f"     ! {f.rule}: {short(f.message)}" for f in entry.expectation_failures]
    lines += [f"     ! {f.rule}: {short(f.message)}" for f in entry.violations]
    return lines + _response(entry.response, entry.server_error is not None)


def _new_messages(entry: LogEntry) -> Sequence[Message]:
    last = max((i for i, m in enumerate(entry.conversation) if m.role == "assistant"), default=-1)
    return entry.conversation[last + 1 :]


def _message(message: Message) -> list[str]:
    if message.tool_results:
        lines = [f"tool result for {r.call_id}: {short(r.content)}" for r in message.tool_results]
        return lines + ([f"{message.role}: {short(message.text)}"] if message.text else [])
    return [f"{message.role}: {short(message.text)}"]


def _response(response: LogResponse | None, crashed: bool) -> list[str]:
    if response is None:
        return ["     ← (no response yet)"]
    if response.error is not None:
        where = " (traceback in the entry's server_error)" if crashed else ""
        error = f"{response.error.get('kind')}: {short(response.error.get('message', ''))}"
        return [f"     ← error {response.status} {error}{where}"]
    said = f": {short(response.text)}" if response.text else ""
    lines = [f"     ← assistant ({response.status}, {response.finish}){said}"]
    return lines + [f"       calls {call_text(c)}" for c in response.tool_calls]
