"""The checks over one session's log that the clients' assertions raise, worded once.

Each returns None when it holds, else a `calls.Failure` (headline, expected, happened;
the client adds the transcript). The Python `Session` and `mockllm.testing.assertions`
run them over the entries they read; `POST /_mockllm/check` runs them for the Node
client (`run_check`), so a failure reads the same words in both languages. The checks
of what the agent did with each call live in `judge/calls.py`; this module adds the checks
over the whole log and the verdict, and is the one door for the route.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mockllm.core import bounded
from mockllm.core.conversation import ToolCall, ToolResult
from mockllm.judge import calls
from mockllm.judge.calls import Failure
from mockllm.judge.transcript import call_text, plural, short
from mockllm.judge.verdict import unconsumed_mcp_answers, unserved_turns
from mockllm.log.records import LogEntry, Verdict

Refusal = str | re.Pattern[str] | None


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


def unoffered_executions(entries: Sequence[LogEntry], refusal: Refusal = None) -> list[Unoffered]:
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


def all_tool_calls_answered(entries: Sequence[LogEntry]) -> Failure | None:
    missing = unanswered_calls(entries)
    if not missing:
        return None
    return Failure(
        f"{plural(len(missing), 'tool call')} never got a result",
        "every tool call mockllm sent gets a result with its id in a later request",
        [
            f"{call_text(call)}, sent in reply to request {_number(entries, entry)} "
            f"(turn {entry.turn}), was never answered"
            for entry, call in missing
        ],
    )


def no_unoffered_tool_executed(
    entries: Sequence[LogEntry], refusal: Refusal = None
) -> Failure | None:
    found = unoffered_executions(entries, refusal)
    if not found:
        return None
    return Failure(
        f"{plural(len(found), 'call')} to a tool that was not offered got a result",
        "no result for a call to a tool the request did not offer "
        "(answer such calls with an error result instead)",
        [
            f"request {_number(entries, u.entry)} sent a result for {u.name} "
            f"({u.result.call_id}): "
            f"{short(u.result.content, 80)!r}; offered were: {', '.join(u.offered) or 'none'}"
            for u in found
        ],
    )


def model_calls(
    entries: Sequence[LogEntry],
    *,
    at_most: int | None = None,
    exactly: int | None = None,
    at_least: int | None = None,
) -> Failure | None:
    """The number of model requests (MCP messages are not model calls) is within bounds."""
    bounds = {"exactly": exactly, "at most": at_most, "at least": at_least}
    wanted = " and ".join(f"{k} {v}" for k, v in bounds.items() if v is not None)
    if not wanted:
        raise TypeError("model_calls needs at_most, exactly or at_least")
    count = sum(1 for e in entries if e.api != "mcp")
    if (
        (exactly is None or count == exactly)
        and (at_most is None or count <= at_most)
        and (at_least is None or count >= at_least)
    ):
        return None
    return Failure(
        f"{plural(count, 'model request')}, expected {wanted}",
        f"{wanted} model request(s)",
        [f"{plural(count, 'model request')} made"],
    )


def tool_executed(
    entries: Sequence[LogEntry],
    tool: str,
    *,
    server: str | None = None,
    arguments: Mapping[str, Any] | None = None,
    times: int | None = None,
) -> Failure | None:
    """The scripted MCP tool ran (with these arguments; this many times)."""
    ran = mcp_executions(entries, tool, server)
    matching = [e for e in ran if arguments is None or e.raw["mcp"].get("arguments") == arguments]
    if (times is None and matching) or (times is not None and len(matching) == times):
        return None
    name = f"{server}/{tool}" if server else tool
    wanted = f" with arguments {json.dumps(arguments, ensure_ascii=False)}" if arguments else ""
    count = "" if times is None else f" {plural(times, 'time')}"
    return Failure(
        f"MCP tool {name} was not executed{wanted}{count}",
        f"the harness calls MCP tool {name}{wanted}{count or ' at least once'}",
        [
            f"MCP entry (log seq {e.seq}) ran it with "
            f"{json.dumps(e.raw['mcp'].get('arguments'), ensure_ascii=False)}"
            for e in ran
        ]
        or [f"{name} was never called on the MCP server"],
    )


def mcp_loop_closed(verdict: Verdict) -> Failure | None:
    """The verdict's MCP loop checks passed: every model call to a scripted MCP tool ran
    with its arguments before it was answered, with what the tool returned, and the
    harness ran no tool the model did not ask for (docs/mcp.md)."""
    loop = [c for c in verdict.checks if c.name.startswith("mcp_")]
    if not loop:
        return Failure(
            "no MCP tool was involved in this session",
            "a model call to a scripted MCP tool, run on the MCP server",
            ["no model call named a scripted MCP tool and no MCP tool ran"],
        )
    failed = [c for c in loop if not c.ok]
    if not failed:
        return None
    return Failure(
        f"the MCP loop failed {plural(len(failed), 'check')}",
        "every model call to an MCP tool ran on the fake, and its result went back",
        [f"{c.name}: {c.message}" for c in failed],
    )


def all_turns_served(entries: Sequence[LogEntry]) -> Failure | None:
    """Every turn each scenario of the session scripts was served (respx's
    assert_all_called): an agent that stopped early, or a scenario that scripts more than
    the test runs, fails it."""
    unserved = unserved_turns(dict(e.raw) for e in entries)
    if not unserved:
        return None
    return Failure(
        f"{plural(len(unserved), 'scenario')} with scripted turns never served",
        "every scripted turn of the session's scenarios served",
        [*unserved, "the agent stopped early, or the scenario scripts more than the test runs"],
    )


def all_mcp_answers_served(entries: Sequence[LogEntry]) -> Failure | None:
    """Every result a scripted MCP server scripts for its tools answered a `tools/call`
    (aimock's MCP fakes fail on unconsumed entries): a tool the agent listed and never
    called, or called fewer times than scripted, fails it."""
    unconsumed = unconsumed_mcp_answers(dict(e.raw) for e in entries)
    if not unconsumed:
        return None
    return Failure(
        f"{plural(len(unconsumed), 'MCP tool')} with scripted results never used",
        "every scripted result of the session's MCP tools answered a call",
        [*unconsumed, "the agent called the tool fewer times than scripted, or not at all"],
    )


def clean_verdict(verdict: Verdict) -> Failure | None:
    if verdict.ok:
        return None
    failed = verdict.failed
    return Failure(
        f"the protocol verdict failed {plural(len(failed), 'check')}",
        "every verdict check passes",
        [f"{c.name}: {c.message}" for c in failed] or ["the verdict is not ok"],
    )


# --- the route's door ----------------------------------------------------------------------

LOG_CHECKS = (
    "all_tool_calls_answered",
    "no_unoffered_tool_executed",
    "model_calls",
    "tool_executed",
    "all_turns_served",
    "all_mcp_answers_served",
)
VERDICT_CHECKS = ("mcp_loop_closed", "clean_verdict")
CHECKS = (*calls.CHECKS, *LOG_CHECKS, *VERDICT_CHECKS)


def run_check(
    entries: Sequence[Mapping[str, Any]],
    spec: Mapping[str, Any],
    judge: Callable[[], Mapping[str, Any]],
) -> Failure | None:
    """One check as `POST /_mockllm/check` takes it: `{check, ...its arguments}` over the
    session's entries as JSON; `judge()` gives the session's verdict as JSON, asked for
    only by the verdict's checks. Raises ValueError naming what is wrong with `spec`."""
    check = spec.get("check")
    if check in calls.CHECKS:
        return calls.run_check(entries, spec)
    if check in VERDICT_CHECKS:
        verdict = Verdict.from_json(judge())
        return mcp_loop_closed(verdict) if check == "mcp_loop_closed" else clean_verdict(verdict)
    if check not in LOG_CHECKS:
        raise ValueError(f"check must be one of {', '.join(CHECKS)}, not {check!r}")
    logged = [LogEntry.from_json(e) for e in sorted(entries, key=lambda e: int(e["seq"]))]
    if check == "all_tool_calls_answered":
        return all_tool_calls_answered(logged)
    if check == "all_turns_served":
        return all_turns_served(logged)
    if check == "all_mcp_answers_served":
        return all_mcp_answers_served(logged)
    if check == "no_unoffered_tool_executed":
        try:
            return no_unoffered_tool_executed(logged, _refusal(spec.get("refusal")))
        except bounded.RegexTimeout as slow:
            raise ValueError(f"refusal: {slow}") from None
    if check == "model_calls":
        bounds = {k: _count(spec, k) for k in ("at_most", "exactly", "at_least")}
        if all(v is None for v in bounds.values()):
            raise ValueError("model_calls needs at_most, exactly or at_least")
        return model_calls(logged, **bounds)
    server, arguments = spec.get("server"), spec.get("arguments")
    if server is not None and not isinstance(server, str):
        raise ValueError("server must be a string")
    if arguments is not None and not isinstance(arguments, Mapping):
        raise ValueError("arguments must be an object")
    tool = spec.get("tool")
    if not isinstance(tool, str) or not tool:
        raise ValueError("tool must be a non-empty string")
    return tool_executed(
        logged, tool, server=server, arguments=arguments, times=_count(spec, "times")
    )


def _refusal(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("refusal must be a string (a regular expression)")
    if (problem := bounded.check(value)) is not None:
        raise ValueError(f"refusal is not a regular expression: {problem}")
    return value


def _count(spec: Mapping[str, Any], key: str) -> int | None:
    value = spec.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise ValueError(f"{key} must be a whole number >= 0")
    return value


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


def _refused(result: ToolResult, refusal: Refusal) -> bool:
    """Flagged, or matching `refusal`: a compiled pattern is the caller's own (in-process);
    a string runs on the bounded engine, as it may come from a request to the server."""
    if result.is_error:
        return True
    if isinstance(refusal, re.Pattern):
        return refusal.search(result.content) is not None
    return refusal is not None and bounded.search(refusal, result.content)
