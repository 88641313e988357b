"""A session's log entries as a readable transcript, turn by turn, for failure messages.

Each request shows only what is new in it (the messages after the last assistant
reply it carries back: the user's text, tool results), then what mockllm answered,
so the transcript reads like the conversation rather than repeating its history.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mockllm.core.conversation import Message, ToolCall
from mockllm.judge.uses import clash
from mockllm.judge.verdict import CUTTING_FAULTS, verdict
from mockllm.log.allowances import ALLOWANCE
from mockllm.log.records import LogEntry, LogResponse

_WIDTH = 160  # characters of any one text shown; the log keeps everything
_FULL_WIDTH = 4000
SHORT_REQUESTS = 12  # a short transcript shows the last ones: where a failure usually is


def transcript(
    entries: Sequence[LogEntry],
    session: str | None = None,
    full: bool = True,
    allow: Mapping[str, str] | None = None,
) -> str:
    """Every request (`full`), or the last few with shorter texts, then the session's
    verdict (`allow`: the checks its test waives)."""
    name = session or next((e.session for e in entries if e.session), None) or "?"
    logged, entries = entries, [e for e in entries if e.api != ALLOWANCE]  # records: no requests
    if not entries:
        return "\n".join(
            [
                f"mockllm session {name!r}: no model requests were logged "
                "(is the client's base URL the fixture's url(...)?)",
                *verdict_lines(logged, name, allow, _WIDTH),
            ]
        )
    mcp = sum(1 for e in entries if e.api == "mcp")
    counted = plural(len(entries) - mcp, "model request")
    counted += f", {plural(mcp, 'MCP message')} (docs/mcp.md)" if mcp else ""
    lines = [f"mockllm session {name!r}, {counted}:"]
    shared = clash(e.raw for e in entries)
    if shared:
        lines.append(f"  ⚠ {shared}")
    shown = list(zip(_numbers(entries), entries, strict=True))
    if not full and len(shown) > SHORT_REQUESTS:
        left_out = len(shown) - SHORT_REQUESTS
        lines.append(f"  ... {plural(left_out, 'earlier request')} left out")
        shown = shown[left_out:]
    width = _FULL_WIDTH if full else _WIDTH
    for number, entry in shown:
        lines += _entry(number, entry, width)
    return "\n".join(lines + verdict_lines(logged, name, allow, width))


def verdict_lines(
    entries: Sequence[LogEntry],
    session: str,
    allow: Mapping[str, str] | None = None,
    width: int = _WIDTH,
) -> list[str]:
    """The verdict under the transcript: its label, then each check failed or waived."""
    if not all(e.raw for e in entries):  # entries built by hand: nothing to judge by
        return []
    judged = verdict(session, [dict(e.raw) for e in entries], allow=allow)
    checks = judged["checks"]
    failed = [c for c in checks if c["status"] == "failed"]
    counted = (
        f"{len(failed)} of {plural(len(checks), 'check')} failed"
        if failed
        else (f"{plural(len(checks), 'check')}")
    )
    lines = [f"  {judged['label']} ({counted})"]
    lines += [f"     ✗ {c['name']}: {short(c['message'], width)}" for c in failed]
    for c in checks:
        if c["status"] == "waived":
            found = f" (it found: {short(c['message'], width)})" if c["message"] else ""
            by = f" [by {c['waived_by']}]" if c.get("waived_by") else ""
            lines.append(f"     ~ {c['name']} waived: {c['waived']}{by}{found}")
    return lines


def _numbers(entries: Sequence[LogEntry]) -> list[int]:
    """Each entry's place among the model requests (what "request N" says); an MCP
    message carries the number of the model request before it."""
    numbers, count = [], 0
    for e in entries:
        count += e.api != "mcp"
        numbers.append(count)
    return numbers


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def short(text: str, width: int = _WIDTH) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"


def call_text(call: ToolCall) -> str:
    return f"{call.name}({short(call.arguments, 80)}) id={call.id}"


def _entry(number: int, entry: LogEntry, width: int = _WIDTH) -> list[str]:
    if entry.api == "mcp":  # the tool side of the loop (log/mcp.py)
        status = entry.response.status if entry.response else None
        return transcript_lines(entry.raw.get("mcp"), entry.seq, status, width)
    if entry.api is not None and entry.api.endswith("-embeddings"):
        return _embeddings(number, entry, width)
    if entry.api is None:  # no model route matched: the path is what went wrong
        lines = [f"  request {number} (log seq {entry.seq}) · {entry.method} {entry.path}"]
    else:
        turn = "?" if entry.turn is None else entry.turn
        # attempt 1 is said only by a 503 that may have consumed it (a store lost while
        # counting it: the entry's note says how)
        consumed = entry.response is not None and _store_lost(entry.response)
        shown = entry.attempt is not None and (entry.attempt > 1 or consumed)
        attempt = f" (attempt {entry.attempt})" if shown else ""
        offered = ", ".join(entry.tools) or "none"
        what = f"turn {turn}{attempt}"
        if entry.side:  # not a turn: said so, with the rule set it came from
            rules = f" ({entry.side['rules']})" if entry.side.get("rules") else ""
            what = f"side request {entry.side.get('name')}{rules}"
        head = (
            f"  request {number} (log seq {entry.seq}) · {what} · {entry.api} · "
            f"scenario {entry.scenario} · tools offered: {offered}"
        )
        news = _new_messages(entry)
        lines = [head, *(f"       {line}" for m in news for line in _message(m, width))]
    lines += _cut_request(entry.raw.get("request_truncated"))
    found = [*entry.expectation_failures, *entry.violations]
    lines += [f"     ! {f.rule}: {short(f.message, width)}" for f in found]
    said = frozenset(f.message for f in found)
    return lines + _response(entry.response, entry.server_error is not None, width, said)


def _embeddings(number: int, entry: LogEntry, width: int) -> list[str]:
    """An embeddings request (docs/embeddings.md): never a turn; its vectors, not a reply."""
    head = (
        f"  request {number} (log seq {entry.seq}) · side request embeddings · {entry.api} · "
        f"scenario {entry.scenario}"
    )
    response = entry.response
    if response is None or response.error is not None:
        return [head, *_response(response, entry.server_error is not None, width)]
    fault = response.fault
    faulted = [f"     ~ fault {fault.get('kind')}: {fault.get('detail')}"] if fault else []
    notes = [f"     note: {short(n, width)}" for n in response.notes]
    return [head, f"     ← vectors ({response.status})", *faulted, *notes]


def _cut_request(cut: Any) -> list[str]:
    """A body the in-memory log kept cut (--log-request-cap): its messages are not shown."""
    if not isinstance(cut, Mapping):
        return []
    kept, size, sha = cut.get("kept"), cut.get("bytes"), str(cut.get("sha256", ""))[:16]
    return [f"       (request cut to {kept} of {size} bytes in the log, sha256 {sha}…)"]


def _store_lost(response: LogResponse) -> bool:
    return response.error is not None and response.error.get("kind") == "store_unavailable"


def _new_messages(entry: LogEntry) -> Sequence[Message]:
    last = max((i for i, m in enumerate(entry.conversation) if m.role == "assistant"), default=-1)
    return entry.conversation[last + 1 :]


def _message(message: Message, width: int = _WIDTH) -> list[str]:
    if message.tool_results:
        lines = [
            f"tool result for {r.call_id}{' (is_error)' if r.is_error else ''}: "
            f"{short(r.content, width)}"
            for r in message.tool_results
        ]
        return lines + ([f"{message.role}: {short(message.text, width)}"] if message.text else [])
    return [f"{message.role}: {short(message.text, width)}"]


def _response(
    response: LogResponse | None,
    crashed: bool,
    width: int = _WIDTH,
    said: frozenset[str] = frozenset(),
) -> list[str]:
    if response is None:
        return ["     ← (no response yet)"]
    fault = response.fault
    cut = fault is not None and fault.get("kind") in CUTTING_FAULTS and response.status == 200
    faulted = [f"     ~ fault {fault.get('kind')}: {fault.get('detail')}"] if fault else []
    notes = [f"     note: {short(n, width)}" for n in response.notes]
    if response.error is not None:
        where = " (traceback in the entry's server_error)" if crashed else ""
        message = response.error.get("message", "")
        if response.notes:  # they say what to do; the rest of the message only lists routes
            message = message.split(";")[0]
        repeated = any(m and m in message for m in said)  # the "!" line above already says it
        error = f"{response.error.get('kind')}" + (
            " (the ! above)" if repeated else f": {short(message, width)}"
        )
        return [f"     ← error {response.status} {error}{where}", *faulted, *notes]
    text = f": {short(response.text, width)}" if response.text else ""
    lines = [f"     ← assistant ({response.status}, {response.finish}){text}", *faulted]
    got = response.delivered
    if got is None or not isinstance(got.get("cut"), Mapping):  # whole, or an older log
        cut_note = " — cut by fault: the client never had it whole" if cut else ""
        return (
            lines + [f"       calls {call_text(c)}{cut_note}" for c in response.tool_calls] + notes
        )
    by, where = got["cut"].get("by"), got["cut"].get("in")
    lines.append(f"     ✂ {by} cut the reply in {where}{_text_got(response, got)}")
    calls = [
        f"       calls {call_text(c)}{_call_got(i, c, got, by, where)}"
        for i, c in enumerate(response.tool_calls)
    ]
    return lines + calls + notes


def _text_got(response: LogResponse, got: Mapping[str, object]) -> str:
    if not response.text:
        return ""
    had = len(str(got.get("text") or ""))
    return f": the client got {had} of {len(response.text)} characters of the text"


def _call_got(
    index: int, call: ToolCall, got: Mapping[str, object], by: object, where: object
) -> str:
    """What the client had of call `index` (log/delivered.py): the cut falls in one part."""
    received = got.get("tool_calls")
    calls = received if isinstance(received, list) else []
    if index < len(calls) and where != f"call:{index}":
        return ""  # arrived whole
    if index >= len(calls):
        return f" — cut by {by}: never arrived"
    had = len(str(calls[index].get("arguments") or "").encode())
    return f" — cut by {by}: the client got {had} of {len(call.arguments.encode())} bytes"


def transcript_lines(mcp: Any, seq: int, status: int | None, width: int) -> list[str]:
    """An MCP entry in a transcript: `harness → MCP orders/lookup_order({...}) → 'R'`.
    A notification is one short line; the transport's own requests (the GET stream,
    DELETE) are left out unless refused (they stay in the log)."""
    if not isinstance(mcp, dict):
        return [f"  mcp (log seq {seq}) · {status}"]
    server, method = mcp.get("server", "?"), mcp.get("method")
    head = f"  mcp (log seq {seq}) · server {server} · "
    error = mcp.get("error")
    if method == "tools/call":
        arguments = json.dumps(mcp.get("arguments") or {}, ensure_ascii=False)
        lines = [head + f"harness called {mcp.get('tool')}({_cut(arguments, 80)})"]
        if mcp.get("fault"):
            lines.append(f"     ~ mcp fault: {mcp['fault']}")
        if error:
            lines.append(
                f"     → JSON-RPC error {error.get('code')}: "
                + _cut(str(error.get("message")), width)
            )
        elif isinstance(mcp.get("result"), dict):
            result = mcp["result"]
            flag = " (isError)" if result.get("is_error") else ""
            lines.append(f"     → returned{flag}: {_cut(str(result.get('text', '')), width)}")
        elif mcp.get("unfinished"):
            lines.append(f"     → (no result: {_cut(str(mcp['unfinished']), width)})")
        else:
            lines.append("     → (no result: the call did not finish)")
        return lines
    if method is None:  # the GET stream, DELETE: shown only when refused
        return [head + f"refused: HTTP {status}"] if status and status >= 400 else []
    said = (
        f" → error {error.get('code')}: {_cut(str(error.get('message')), width)}" if error else ""
    )
    listed = f" → {', '.join(map(str, mcp['tools']))}" if mcp.get("tools") is not None else ""
    return [head + f"{method}{listed}{said}"]


def _cut(text: str, width: int) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"
