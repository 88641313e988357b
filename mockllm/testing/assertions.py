"""Checks over one session's log entries, failing with the conversation in the message.

Pure functions of the entries (no HTTP), so the pytest fixture, the client's sessions
and a script reading a `--log` file all share them. A failure reads: a one-line
headline (what pytest's summary shows), the transcript, then expected and happened.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mockllm.core.conversation import ToolCall, ToolResult
from mockllm.log import calls
from mockllm.log.records import LogEntry, Verdict
from mockllm.log.transcript import call_text, plural, short, transcript


@dataclass(frozen=True)
class Unoffered:
    """A tool result sent for a call to a tool that request did not offer."""

    entry: LogEntry  # the request carrying the result
    result: ToolResult
    name: str
    offered: tuple[str, ...]


def unanswered_calls(entries: Sequence[LogEntry]) -> list[tuple[LogEntry, ToolCall]]:
    """Calls mockllm sent that no later request answered with a result carrying their id."""
    missing: dict[str, tuple[LogEntry, ToolCall]] = {}
    for i, entry in enumerate(entries):
        answered = _result_ids(entries[i + 1 :])
        for call in entry.tool_calls:
            if call.id not in answered:
                missing.setdefault(call.id, (entry, call))  # a retried turn repeats its ids
    return list(missing.values())


def unoffered_executions(
    entries: Sequence[LogEntry], refusal: str | re.Pattern[str] | None = None
) -> list[Unoffered]:
    """Results sent for calls whose tool was not offered in the request the model answered.

    A result flagged `is_error` (Anthropic), or whose text matches `refusal` (OpenAI
    wires carry no flag), is the harness saying "no such tool" — not an execution.
    """
    called: dict[str, tuple[str, tuple[str, ...]]] = {}  # id → (name, tools offered)
    found: dict[str, Unoffered] = {}
    for entry in entries:
        for result in entry.tool_results:
            name, offered = called.get(result.call_id) or _echoed(entry, result.call_id)
            if name and name not in offered and not _refused(result, refusal):
                found.setdefault(result.call_id, Unoffered(entry, result, name, offered))
        for call in entry.tool_calls:
            called.setdefault(call.id, (call.name, entry.tools))
    return list(found.values())


def assert_all_tool_calls_answered(entries: Sequence[LogEntry], session: str | None = None) -> None:
    __tracebackhide__ = True
    missing = unanswered_calls(entries)
    if missing:
        _fail(
            f"{plural(len(missing), 'tool call')} never got a result",
            entries,
            session,
            expected="every tool call mockllm sent gets a result with its id in a later request",
            happened=[
                f"{call_text(call)}, sent in reply to request {_number(entries, entry)} "
                f"(turn {entry.turn}), was never answered"
                for entry, call in missing
            ],
        )


def assert_no_unoffered_tool_executed(
    entries: Sequence[LogEntry],
    session: str | None = None,
    refusal: str | re.Pattern[str] | None = None,
) -> None:
    __tracebackhide__ = True
    found = unoffered_executions(entries, refusal)
    if found:
        _fail(
            f"{plural(len(found), 'call')} to a tool that was not offered got a result",
            entries,
            session,
            expected="no result for a call to a tool the request did not offer "
            "(answer such calls with an error result instead)",
            happened=[
                f"request {_number(entries, u.entry)} sent a result for {u.name} "
                f"({u.result.call_id}): "
                f"{short(u.result.content, 80)!r}; offered were: {', '.join(u.offered) or 'none'}"
                for u in found
            ],
        )


def assert_model_calls(
    entries: Sequence[LogEntry],
    session: str | None = None,
    *,
    at_most: int | None = None,
    exactly: int | None = None,
    at_least: int | None = None,
) -> None:
    __tracebackhide__ = True
    bounds = {"exactly": exactly, "at most": at_most, "at least": at_least}
    wanted = " and ".join(f"{k} {v}" for k, v in bounds.items() if v is not None)
    if not wanted:
        raise TypeError("assert_model_calls needs at_most=, exactly= or at_least=")
    count = sum(1 for e in entries if e.api != "mcp")  # MCP messages are not model calls
    if (
        (exactly is not None and count != exactly)
        or (at_most is not None and count > at_most)
        or (at_least is not None and count < at_least)
    ):
        _fail(
            f"{plural(count, 'model request')}, expected {wanted}",
            entries,
            session,
            expected=f"{wanted} model request(s)",
            happened=[f"{plural(count, 'model request')} made"],
        )


def mcp_executions(
    entries: Sequence[LogEntry], tool: str, server: str | None = None
) -> list[LogEntry]:
    """The MCP `tools/call` entries that ran `tool` (of `server`, if given), in order."""
    found = []
    for entry in entries:
        info = entry.raw.get("mcp") if entry.api == "mcp" else None
        if not isinstance(info, dict) or info.get("method") != "tools/call":
            continue
        if info.get("tool") == tool and server in (None, info.get("server")):
            found.append(entry)
    return found


def assert_tool_executed(
    entries: Sequence[LogEntry],
    tool: str,
    session: str | None = None,
    *,
    server: str | None = None,
    arguments: Mapping[str, Any] | None = None,
    times: int | None = None,
) -> None:
    """The scripted MCP tool ran (with these arguments; this many times)."""
    __tracebackhide__ = True
    ran = mcp_executions(entries, tool, server)
    matching = [e for e in ran if arguments is None or e.raw["mcp"].get("arguments") == arguments]
    name = f"{server}/{tool}" if server else tool
    wanted = f" with arguments {json.dumps(arguments, ensure_ascii=False)}" if arguments else ""
    if (times is None and not matching) or (times is not None and len(matching) != times):
        count = "" if times is None else f" {plural(times, 'time')}"
        _fail(
            f"MCP tool {name} was not executed{wanted}{count}",
            entries,
            session,
            expected=f"the harness calls MCP tool {name}{wanted}{count or ' at least once'}",
            happened=[
                f"MCP entry #{e.seq} ran it with "
                f"{json.dumps(e.raw['mcp'].get('arguments'), ensure_ascii=False)}"
                for e in ran
            ]
            or [f"{name} was never called on the MCP server"],
        )


def assert_mcp_loop_closed(
    verdict: Verdict, entries: Sequence[LogEntry], session: str | None = None
) -> None:
    """The verdict's MCP loop checks passed: every model call to a scripted MCP tool ran
    with its arguments before it was answered, with what the tool returned, and the
    harness ran no tool the model did not ask for (docs/mcp.md)."""
    __tracebackhide__ = True
    loop = [c for c in verdict.checks if c.name.startswith("mcp_")]
    if not loop:
        _fail(
            "no MCP tool was involved in this session",
            entries,
            session or verdict.session,
            expected="a model call to a scripted MCP tool, run on the MCP server",
            happened=["no model call named a scripted MCP tool and no MCP tool ran"],
        )
    failed = [c for c in loop if not c.ok]
    if failed:
        _fail(
            f"the MCP loop failed {plural(len(failed), 'check')}",
            entries,
            session or verdict.session,
            expected="every model call to an MCP tool ran on the fake, and its result went back",
            happened=[f"{c.name}: {c.message}" for c in failed],
        )


def assert_clean_verdict(
    verdict: Verdict, entries: Sequence[LogEntry], session: str | None = None
) -> None:
    __tracebackhide__ = True
    if not verdict.ok:
        failed = verdict.failed
        _fail(
            f"the protocol verdict failed {plural(len(failed), 'check')}",
            entries,
            session or verdict.session,
            expected="every verdict check passes",
            happened=[f"{c.name}: {c.message}" for c in failed] or ["the verdict is not ok"],
        )


def assert_tool_called(
    entries: Sequence[LogEntry],
    name: str,
    args: Mapping[str, Any] | None = None,
    times: int | None = None,
    session: str | None = None,
) -> None:
    __tracebackhide__ = True
    _raise(calls.tool_called(_uses(entries), name, args, times), entries, session)


def assert_called_before(
    entries: Sequence[LogEntry], first: str, then: str, session: str | None = None
) -> None:
    __tracebackhide__ = True
    _raise(calls.called_before(_uses(entries), first, then), entries, session)


def assert_result_reached_model(
    entries: Sequence[LogEntry],
    call_id: str,
    content: str | None = None,
    is_error: bool | None = None,
    session: str | None = None,
) -> None:
    __tracebackhide__ = True
    raw = [e.raw for e in entries]
    failure = calls.result_reached_model(calls.tool_uses(raw), raw, call_id, content, is_error)
    _raise(failure, entries, session)


def _uses(entries: Sequence[LogEntry]) -> list[Mapping[str, Any]]:
    return list(calls.tool_uses(e.raw for e in entries))


def _raise(failure: calls.Failure | None, entries: Sequence[LogEntry], session: str | None) -> None:
    __tracebackhide__ = True
    if failure is not None:
        _fail(failure.headline, entries, session, failure.expected, failure.happened)


def _fail(
    headline: str,
    entries: Sequence[LogEntry],
    session: str | None,
    expected: str,
    happened: list[str],
) -> None:
    __tracebackhide__ = True  # pytest: point at the test's line, not at this helper
    lines = [f"mockllm: {headline}", "", transcript(entries, session), ""]
    lines += [f"expected: {expected}", "happened:", *(f"  - {h}" for h in happened)]
    raise AssertionError("\n".join(lines))


def _number(entries: Sequence[LogEntry], entry: LogEntry) -> int:
    """The entry's place in the transcript (1-based), which is what the reader sees."""
    model = (e for e in entries if e.api != "mcp")  # as the transcript numbers them
    return next(i for i, e in enumerate(model, 1) if e is entry)


def _result_ids(entries: Iterable[LogEntry]) -> set[str]:
    ids: set[str] = set()
    for entry in entries:
        ids.update(r.call_id for r in entry.tool_results)
        ids.update(r.call_id for m in entry.conversation for r in m.tool_results)
    return ids


def _echoed(entry: LogEntry, call_id: str) -> tuple[str, tuple[str, ...]]:
    """A call mockllm did not log (history written by the client): judge it by this request."""
    for message in entry.conversation:
        for call in message.tool_calls:
            if call.id == call_id:
                return call.name, entry.tools
    return "", entry.tools


def _refused(result: ToolResult, refusal: str | re.Pattern[str] | None) -> bool:
    return bool(result.is_error) or (
        refusal is not None and re.search(refusal, result.content) is not None
    )
