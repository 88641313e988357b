"""A session's attempts → one scenario file: turns with their reply, the fault that spoiled
the attempts before it, and `expect:` entries derived from the requests.

One turn holds one reply and at most one fault. What the format cannot hold (a second kind
of failure on one turn, a second answer to a turn, built-in tool output, timing…) is named
in a comment above the turn, so nothing is dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from mockllm.core.conversation import Conversation, Message
from mockllm.core.engine import FIXED_CREATED, Resolved
from mockllm.core.scenario import Reply, Scenario, ScriptedCall, Turn
from mockllm.core.scenario_build import dump_arguments
from mockllm.errors import RequestError
from mockllm.recording.attempt import Attempt
from mockllm.recording.sse import frames_for
from mockllm.recording.yamltext import block, comment

Redact = Callable[[str], str]
RETRY_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry")
SNIPPET = 60  # characters of the user's message an expectation keeps


@dataclass(frozen=True)
class Meta:
    name: str
    upstream: str  # without credentials or query
    date: str  # UTC, YYYY-MM-DD
    path: str = "THIS_FILE"  # where it is written


@dataclass
class _Turn:
    mapping: dict[str, Any]
    notes: list[str]
    calls: int  # calls its reply makes: how many results the next turn can expect


def scenario_text(meta: Meta, attempts: list[Attempt], redact: Redact, clean: Redact) -> str:
    """The YAML file of one recorded session. `clean` cuts a text before anything `redact`
    would mask (expectations must still match the real request)."""
    by_turn: dict[int, list[Attempt]] = {}
    for attempt in attempts:
        by_turn.setdefault(attempt.turn, []).append(attempt)
    turns: list[_Turn] = []
    for index in range(max(by_turn) + 1):
        found = by_turn.get(index)
        previous = turns[-1].calls if turns else 0
        if found is None:
            turns.append(_from_history(index, by_turn, redact))
        else:
            turns.append(_turn(meta.name, index, found, previous, redact, clean))
    apis = sorted({a.adapter.api for a in attempts})
    models = sorted({a.heard.model or a.parsed.conversation.model for a in attempts})
    head = comment(
        f"Recorded by `mockllm record` from {meta.upstream} on {meta.date} (UTC).\n"
        f"API: {', '.join(apis)}; model: {', '.join(models)}.\n"
        # The file's name, not its path: a committed recording must not carry the
        # recording machine's folders (a home directory, a user name).
        f"Replay: mockllm serve --scenarios {PurePath(meta.path).name} (from its folder; ids "
        "and timestamps are mockllm's).\n"
        "The expect: entries were derived from the requests: loosen or delete them freely."
    )
    top: dict[str, Any] = {
        "name": meta.name,
        "description": f"Recorded from {meta.upstream} on {meta.date}: {len(turns)} turn(s) "
        f"on {', '.join(apis)}.",
    }
    if any(m.startswith("deepseek") for m in models):
        top["flavor"] = "deepseek"  # DeepSeek's rules (reasoning_content passed back)
    body = "".join(comment("\n".join(t.notes), 2) + block([t.mapping], 2) for t in turns)
    return head + block(top) + "turns:\n" + body


def _turn(
    name: str, index: int, attempts: list[Attempt], previous: int, redact: Redact, clean: Redact
) -> _Turn:
    served = next((a for a in attempts if a.outcome == "served"), None)
    failed = attempts[: attempts.index(served)] if served else attempts
    first = attempts[0]
    conv = (served or first).parsed.conversation
    notes = [
        f"turn {index}: {first.adapter.api}, model {conv.model}"
        + (", streamed" if conv.stream else "")
    ]
    notes += [f"  attempt {a.number}: {a.describe()} ({a.seconds:.2f} s)" for a in attempts]
    mapping: dict[str, Any] = {}
    expect = _shared(_expect(a.parsed.conversation, previous, clean) for a in attempts)
    if expect:
        mapping["expect"] = expect
    source = served or first
    reply = source.heard.reply() if source.status < 400 else None
    if reply is not None:
        mapping["reply"] = _reply(reply, redact)
    if failed:
        fault, fault_notes = _fault(name, index, failed, reply, redact)
        if served is not None:
            fault["times"] = len(failed)
        mapping["fault"] = fault
        notes += fault_notes
    if served is not None and served is not attempts[-1]:
        later = len(attempts) - attempts.index(served) - 1
        notes.append(f"  not kept: {later} later attempt(s) at this turn (one reply per turn)")
    for attempt in attempts:
        notes += [f"  not representable, dropped: {what}" for what in attempt.heard.dropped]
    return _Turn(mapping, notes, len(reply.tool_calls) if reply else 0)


def _from_history(index: int, by_turn: dict[int, list[Attempt]], redact: Redact) -> _Turn:
    """A turn never seen live: the assistant message a later request carries in its history."""
    later = min(t for t in by_turn if t > index)
    conv = by_turn[later][0].parsed.conversation
    message = [m for m in conv.messages if m.role == "assistant"][index]
    reply = _reply_of(message)
    notes = [f"turn {index}: not seen live; taken from the history of turn {later}'s request"]
    return _Turn({"reply": _reply(reply, redact)}, notes, len(reply.tool_calls))


def _reply_of(message: Message) -> Reply:
    calls = tuple(ScriptedCall(c.name, c.arguments) for c in message.tool_calls)
    return Reply(message.text, message.reasoning, calls, "tool_calls" if calls else "stop")


def _expect(conv: Conversation, previous: int, clean: Redact) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if conv.tool_names:
        out["tools"] = list(dict.fromkeys(conv.tool_names))
    user = _new_user_text(conv)
    lines = [line.strip() for line in (user or "").splitlines() if line.strip()]
    snippet = clean(lines[0][:SNIPPET]).strip() if lines else ""
    if snippet.strip():
        out["user"] = {"contains": snippet}
    last = conv.last_assistant
    by_id = {r.call_id: r for r in conv.latest_tool_results}
    results = []
    for call in (last.tool_calls if last else ())[:previous]:
        result = by_id.get(call.id)
        if result is None:
            break
        results.append({"is_error": True} if result.is_error else {})
    if results:
        out["tool_results"] = results
    return out


def _shared(expects: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """What every attempt at the turn met: a replay sends them all to that turn, and a client
    may change its request between attempts (a retry that adds "go on")."""
    found = list(expects)
    return {k: v for k, v in found[0].items() if all(e.get(k) == v for e in found[1:])}


def _new_user_text(conv: Conversation) -> str | None:
    """The user's words at this turn: after the last assistant reply, if any came."""
    for m in reversed(conv.messages):
        if m.role == "assistant":
            return None
        if m.role == "user":
            return m.text
    return None


def _reply(reply: Reply, redact: Redact) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if reply.text or not (reply.tool_calls or reply.reasoning is not None):
        out["text"] = redact(reply.text)
    if reply.reasoning is not None:
        out["reasoning"] = redact(reply.reasoning)
    if reply.tool_calls:
        out["tool_calls"] = [_call(c, redact) for c in reply.tool_calls]
    if reply.finish != ("tool_calls" if reply.tool_calls else "stop"):
        out["finish"] = reply.finish
    usage = {k: v for k, v in (("input", reply.usage.input), ("output", reply.usage.output))}
    usage = {k: v for k, v in usage.items() if isinstance(v, int) and v >= 0}
    if usage:
        out["usage"] = usage
    return out


def _call(call: ScriptedCall, redact: Redact) -> dict[str, Any]:
    arguments = redact(call.arguments)
    out: dict[str, Any] = {"name": call.name, "arguments": _arguments(arguments)}
    if call.id is not None:
        out["id"] = call.id
    return out


def _arguments(text: str) -> Any:
    """A mapping when it dumps back to exactly these bytes (readable), else the verbatim text."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) and dump_arguments(value) == text else text


# --- faults ----------------------------------------------------------------------------------


def _fault(
    name: str, index: int, failed: list[Attempt], reply: Reply | None, redact: Redact
) -> tuple[dict[str, Any], list[str]]:
    """The fault of the first failed attempt; a different failure after it is only noted."""
    first = failed[0]
    kinds = {a.outcome for a in failed}
    notes = []
    if len(kinds) > 1:
        notes.append(
            "  not representable: different failures on one turn; the fault is the first's"
        )
    outcome = first.outcome
    if outcome == "http":
        error = first.error
        http: dict[str, Any] = {"status": first.status}
        if error is not None:
            for key in ("type", "message", "code"):
                value = getattr(error, key)
                if value:
                    http[key] = redact(value)
        headers = {k: v for k, v in first.headers if k in RETRY_HEADERS}
        if headers:
            http["headers"] = headers
        return {"http": http}, notes
    if outcome == "stall":
        return {"stall": True}, notes
    assert reply is not None
    if outcome == "stream_error":
        error = first.heard.error
        stream_error: dict[str, Any] = {"after_events": _events_before(first, reply, name, index)}
        if error is not None:
            if error.type:
                stream_error["type"] = redact(error.type)
            if error.message:
                stream_error["message"] = redact(error.message)
        return {"stream_error": stream_error}, notes
    if first.stream:
        truncate = _stream_cut(first, reply, name, index)
    else:
        truncate = {"after_bytes": _bytes_before(first, reply, name, index)}
    fault: dict[str, Any] = {"truncate": truncate}
    if first.ending == "close":
        fault["disconnect"] = "close"
    if first.ending == "hung_up":
        notes.append("  the client gave up mid-answer; replayed as a reset")
    return fault, notes


def _resolved(name: str, index: int, reply: Reply) -> Resolved:
    scenario = Scenario(name, tuple(Turn(reply) for _ in range(index + 1)))
    return Resolved(scenario, index, reply, 1, 1, 0, FIXED_CREATED)


def _stream_cut(attempt: Attempt, reply: Reply, name: str, index: int) -> dict[str, int]:
    """Whole events, or, where the stream ended inside an event that carries a call whole
    (Gemini's functionCall), inside that call, as the client saw it: a frame cut short."""
    count = _events_before(attempt, reply, name, index)
    if attempt.partial:
        events = attempt.adapter.render_stream(_resolved(name, index, reply), attempt.parsed).events
        following = events[count] if count < len(events) else None
        if following is not None and following.inside is not None:  # only calls have `inside`
            return {"call": int(following.part.removeprefix("call:"))}
    return {"after_events": count}


def _events_before(attempt: Attempt, reply: Reply, name: str, index: int) -> int:
    """How many events of mockllm's own rendering of `reply` carry what the broken attempt
    carried: the fewest that reach the most content not beyond it, never the finish."""
    events = attempt.adapter.render_stream(_resolved(name, index, reply), attempt.parsed).events
    answers = attempt.reader()
    frames = frames_for(attempt.adapter.stream_content_type.decode())
    assert frames is not None  # every wire streams in one of the framings read
    target, best, count = attempt.heard.size(), -1, 0
    for n, event in enumerate(events, 1):
        if event.part in ("tail", "done"):
            break
        for event_name, data in frames.feed(event.data):
            answers.event(event_name, data)
        size = answers.heard.size()
        if size > target:
            break
        if size > best:
            best, count = size, n
    return count


def _bytes_before(attempt: Attempt, reply: Reply, name: str, index: int) -> int:
    """A cut JSON body cannot be read by any client: only the cut itself is reproduced, at
    the byte count seen, inside mockllm's own body."""
    try:
        length = len(attempt.adapter.render(_resolved(name, index, reply), attempt.parsed).data)
    except RequestError:
        return attempt.received
    return min(attempt.received, max(length - 1, 0))
