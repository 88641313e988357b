"""The protocol verdict: did a harness handle the tool protocol well, judged from a
session's log entries (docs/http-api.md)? It reads entries in their JSON form, so the server
(`GET /_mockllm/verdict`), `mockllm report LOGFILE`, the viewer, the transcript and the
clients all judge exactly alike: this module is the one definition of a failed session.

Each check has a stable name (`CHECKS`) and says, when it fails, which request and which
call. A check can be waived with a reason (an allowance: docs/verdict.md): by the test
(`allow=`), by the scenario, or by a turn (the entry's `allow`, which waives only what that
turn's entries caused). A waived check shows as waived, never as passed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any, NamedTuple

from mockllm.judge import DEFAULT_MAX_CALLS as DEFAULT_MAX_CALLS
from mockllm.judge.mcp_checks import MCP_CHECK_NAMES, Declared, mcp_checks, split
from mockllm.log.allowances import ALLOWANCE

EntryJson = dict[str, Any]  # a log entry as JSON: what `/_mockllm/requests` and a --log line hold
# How a result says "error" on a wire without an error flag (OpenAI): documented heuristic.
ERROR_TEXT = re.compile(r"error|invalid|unknown|not (found|offered|available|allowed)|fail", re.I)
# The labels every view shows (report, viewer, transcript, pytest): one wording, two subjects.
PASS, FAIL = "✓ verdict: pass", "✗ verdict: FAIL"
# Answers that refuse nothing: a scripted or chaos fault, and the 426 that tells a client
# asking for WebSocket to use HTTP (a transport negotiation it is built to follow: Codex
# falls back at once, docs/agents.md).
NOT_REFUSALS = frozenset({"fault", "upgrade_required"})
# Error kinds with a check of their own; any other refusal is `requests_accepted`'s.
_OWN_KIND = {
    "expectation_failed": "expectations_met",
    "scenario_exhausted": "scenario_not_exhausted",
    "server_error": "no_server_errors",
}


class Problem(NamedTuple):
    """What a check found, and the entry that caused it (whose turn may waive it)."""

    entry: EntryJson | None
    message: str


class Context(NamedTuple):
    max_calls: int


class VerdictCheck(NamedTuple):
    name: str
    find: Callable[[list[EntryJson], Context], Iterable[Problem]]


def verdict(
    session: str,
    entries: list[EntryJson],
    max_calls: int = DEFAULT_MAX_CALLS,
    mcp_tools: Declared | None = None,
    *,
    allow: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Every check of `CHECKS` over the session's entries, and the MCP loop's checks when
    the session touched a scripted MCP tool. `mcp_tools`: each scenario's scripted MCP
    tools, when the judge knows the scenarios. `allow`: checks the test waives for the
    whole session, each with its reason."""
    # Side requests (a title, a router) are not turns of the agent loop: no check judges
    # them (docs/scenarios.md, "Side requests").
    side = sum(1 for e in entries if e.get("side"))
    logged = logged_allowance(entries)
    entries, mcp = split(
        sorted(
            (e for e in entries if not e.get("side") and e.get("api") != ALLOWANCE),
            key=lambda e: int(e["seq"]),
        )
    )
    given = dict(allow or {})  # the judge's own (`mockllm report --allow`) win over the log's
    context, allow = Context(max_calls), {**logged.allow, **given}
    # A refusal is one on either side: an MCP message the transport refused counts too.
    everything = sorted(entries + mcp, key=lambda e: int(e["seq"]))
    checks = [
        _judge(c, everything if c.name in _WHOLE_LOG else entries, context, allow) for c in CHECKS
    ]
    loop = mcp_checks(entries, mcp, _says_error, mcp_tools)  # judge/mcp_checks.py
    checks += [_judged(c, allow) for c in loop]
    for c in checks:  # where a session's waiver came from: the test's marker, a client
        if c["status"] == "waived" and c["name"] in logged.allow and c["name"] not in given:
            c["waived_by"] = logged.origin
    waived = sum(c["status"] == "waived" for c in checks)
    ok = all(c["status"] != "failed" for c in checks)
    requests = len(entries) + len(mcp)
    return {
        "session": session,
        "ok": ok,
        "label": label(ok, waived, requests),
        "requests": requests,
        **({"side_requests": side} if side else {}),
        **({"allowance": logged._asdict()} if logged.allow else {}),
        "checks": checks,
    }


def label(ok: bool, waived: int = 0, requests: int | None = None) -> str:
    """The verdict's words in every view: `✓ verdict: pass`, `✗ verdict: FAIL`; an empty
    session says `(no requests)`: it passed nothing."""
    notes = ["no requests"] if requests == 0 else []
    notes += [f"{waived} waived"] if waived else []
    return (PASS if ok else FAIL) + (f" ({', '.join(notes)})" if notes else "")


class LoggedAllowance(NamedTuple):
    """The checks a test waived for its session, as its log records them: the last
    allowance record wins (a later one replaces it, an empty one clears it)."""

    allow: dict[str, str]
    origin: str


def logged_allowance(entries: Iterable[EntryJson]) -> LoggedAllowance:
    last: EntryJson | None = None
    for e in entries:
        if e.get("api") == ALLOWANCE and (last is None or int(e["seq"]) > int(last["seq"])):
            last = e
    record = (last or {}).get("allowance") or {}
    allow = record.get("allow") if isinstance(record, dict) else None
    if not isinstance(allow, dict):
        return LoggedAllowance({}, "")
    return LoggedAllowance(
        {str(k): str(v) for k, v in allow.items()}, str(record.get("origin") or "")
    )


def allowances(entries: Iterable[EntryJson]) -> dict[str, str]:
    """The allowances the entries carry (from their scenario or turn), by check."""
    found: dict[str, str] = {}
    for e in entries:
        for name, reason in (e.get("allow") or {}).items():
            found.setdefault(str(name), str(reason))
    return found


def _judge(
    check: VerdictCheck, entries: list[EntryJson], context: Context, allow: Mapping[str, str]
) -> dict[str, Any]:
    """A failed check says what failed; a waived one, why, and what it would have said."""
    problems = list(check.find(entries, context))
    reason = allow.get(check.name)
    kept = [p for p in problems if reason is None and _allowed(p, check.name) is None]
    if not kept and reason is None:
        reason = next((r for p in problems if (r := _allowed(p, check.name))), None)
    if kept:
        status = "failed"
    elif reason is not None:
        status = "waived"
    else:
        status = "passed"
    notes = [p.message for p in (kept or problems)]
    result = {
        "name": check.name,
        "ok": status != "failed",
        "status": status,
        "message": "; ".join(notes or _notes(check.name, entries)),
    }
    if status == "waived":
        result["waived"] = reason
    return result


def _judged(check: dict[str, Any], allow: Mapping[str, str]) -> dict[str, Any]:
    """A check judged elsewhere (the MCP loop's), with the session's allowance applied."""
    reason = allow.get(check["name"])
    status = "waived" if reason is not None else "passed" if check["ok"] else "failed"
    judged = {**check, "ok": status != "failed", "status": status}
    if reason is not None:
        judged["waived"] = reason
    return judged


def _allowed(problem: Problem, name: str) -> str | None:
    allow = (problem.entry or {}).get("allow") or {}
    reason = allow.get(name)
    return None if reason is None else str(reason)


def _notes(name: str, entries: list[EntryJson]) -> list[str]:
    """What a passed check left out."""
    if name != "calls_answered":
        return []
    cut = [
        f"{_label(e, c)} was cut by fault ({_cut_by(e)}{_cut_in(e)}): not counted"
        for e, c in _cut(entries)
    ]
    replaced = _replaced(entries)
    answered = {r["call_id"] for x in entries for r in _results(x)}
    set_aside = [
        f"{_label(e, c)} was set aside: the harness went on from request (log seq "
        f"{replaced[e['seq']]['seq']}), turn {e.get('turn')} asked again: not counted"
        for e, c in _served(entries)
        if e["seq"] in replaced and c["id"] not in answered
    ]
    return cut + set_aside


def _cut_in(entry: EntryJson) -> str:
    """Where the cut fell, as the server recorded it (response.delivered, log/delivered.py)."""
    got = (entry.get("response") or {}).get("delivered")
    cut = got.get("cut") if isinstance(got, dict) else None
    return f" in {cut.get('in')}" if isinstance(cut, dict) else ""


# Faults that end a 200 response before its body is whole: the client never had its calls.
CUTTING_FAULTS = frozenset({"truncate", "stream_error", "stall"})


def _cut_by(entry: EntryJson) -> str | None:
    fault = (entry.get("response") or {}).get("fault") or {}
    kind = fault.get("kind") if isinstance(fault, dict) else None
    return kind if kind in CUTTING_FAULTS else None


def _sent(entries: list[EntryJson]) -> Iterator[tuple[EntryJson, dict[str, Any]]]:
    for e in entries:
        response = e.get("response") or {}
        if response.get("status") == 200:
            for call in response.get("tool_calls") or ():
                yield e, call


def _served(entries: list[EntryJson]) -> Iterator[tuple[EntryJson, dict[str, Any]]]:
    """(entry, call) for every tool call the server sent whole: the harness had it."""
    return ((e, c) for e, c in _sent(entries) if _cut_by(e) is None)


def _cut(entries: list[EntryJson]) -> Iterator[tuple[EntryJson, dict[str, Any]]]:
    """Calls a fault cut off, unless the harness answered them anyway."""
    for e, call in _sent(entries):
        later = {r["call_id"] for x in entries if x["seq"] > e["seq"] for r in _results(x)}
        if _cut_by(e) is not None and call["id"] not in later:
            yield e, call


def _results(entry: EntryJson) -> Iterator[dict[str, Any]]:
    for m in entry.get("conversation") or ():
        yield from m.get("tool_results", ())


def _label(entry: EntryJson, call: dict[str, Any]) -> str:
    return (
        f"{call['id']} ({call['name']}, turn {entry.get('turn')}, request (log seq {entry['seq']}))"
    )


def _unanswered(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    replaced = _replaced(entries)
    for e, call in _served(entries):
        later = (r["call_id"] for x in entries if x["seq"] > e["seq"] for r in _results(x))
        if (
            call["id"] not in set(later)
            and e["seq"] not in replaced
            and _as_text(entries, e, call) is None
        ):
            yield Problem(e, f"{_label(e, call)} was never answered")


def _as_text(entries: list[EntryJson], e: EntryJson, call: dict[str, Any]) -> EntryJson | None:
    """The result of a call a harness carried as text, as a result: a later request holds
    an assistant message without calls whose text names the call's id, followed by a
    message of the user (smolagents: `Calling tools:\n[{'id': …}]`, then `Observation:`).
    Its content is that message's text; None when no request carries the call so."""
    for x in entries:
        if x["seq"] <= e["seq"]:
            continue
        messages = x.get("conversation") or ()
        for k, m in enumerate(messages[:-1]):
            text = m.get("text") or ""
            if m["role"] == "assistant" and not m.get("tool_calls") and call["id"] in text:
                answer = messages[k + 1]
                if answer["role"] in ("user", "tool"):
                    return {"call_id": call["id"], "content": answer.get("text") or ""}
    return None


def _replaced(entries: list[EntryJson]) -> dict[int, EntryJson]:
    """Each request whose reply the harness set aside, by seq → the other attempt at the
    same turn it went on from (a later request's history carries that one's calls): a
    harness that asks a turn again (after a cut, a 5xx, its own timeout) owes no result to
    a reply it replaced, as the real API holds no one to it. One that answers the replaced
    reply's ids after taking the new one fails `results_known` (they are not in its
    history) and `calls_answered` (the new reply's calls are owed)."""
    carried = {
        c.get("id")
        for x in entries
        for m in x.get("conversation") or ()
        for c in m.get("tool_calls") or ()
    }
    taken: dict[tuple[Any, Any], EntryJson] = {}  # (scenario, turn) → the attempt taken
    for e, call in _served(entries):
        if call["id"] in carried and e.get("turn") is not None:
            taken.setdefault((e.get("scenario"), e["turn"]), e)
    return {
        e["seq"]: t
        for e, _ in _served(entries)
        if (t := taken.get((e.get("scenario"), e.get("turn")))) is not None and t is not e
    }


def _answered_twice(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    for e in entries:
        ids = [r["call_id"] for r in _results(e)]
        for call_id in sorted({i for i in ids if ids.count(i) > 1}):
            yield Problem(
                e, f"request (log seq {e['seq']}) answers {call_id} {ids.count(call_id)} times"
            )


def _unknown_results(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    for e in entries:
        known: set[str] = set()
        for m in e.get("conversation") or ():
            known |= {c["id"] for c in m.get("tool_calls", ())}
            for r in m.get("tool_results", ()):
                if r["call_id"] not in known:
                    yield Problem(
                        e,
                        f"request (log seq {e['seq']}) sends a result for {r['call_id']}, which no "
                        "call in its history made",
                    )


def _partial_parallel(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    seen: set[tuple[str, ...]] = set()
    for e in entries:
        answered = {r["call_id"] for r in _results(e)}
        for m in e.get("conversation") or ():
            ids = tuple(c["id"] for c in m.get("tool_calls", ()))
            missing = [i for i in ids if i not in answered]
            if len(ids) > 1 and missing and len(missing) < len(ids) and ids not in seen:
                seen.add(ids)
                yield Problem(
                    e,
                    f"request (log seq {e['seq']}) answers {len(ids) - len(missing)} of {len(ids)} "
                    f"parallel calls (missing {', '.join(missing)})",
                )


def _errors_not_fed_back(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    for e, call in _served(entries):
        problem = call.get("problem")
        if not problem:
            continue
        result = next(
            (
                r
                for x in entries
                if x["seq"] > e["seq"]
                for r in _results(x)
                if r["call_id"] == call["id"]
            ),
            None,
        )
        result = result or _as_text(entries, e, call)
        if result is None:
            yield Problem(e, f"{_label(e, call)} ({problem}) was never answered with an error")
        elif not _says_error(result, e.get("api")):
            how = _HOW_TO_SAY_ERROR.get(str(e.get("api")), _HOW_TO_SAY_ERROR[""])
            yield Problem(
                e,
                f"{_label(e, call)} ({problem}) was answered {result['content'][:60]!r} without "
                f"an error ({how})",
            )


def _says_error(result: dict[str, Any], api: Any = None) -> bool:
    """Whether a result the harness sent says the call failed: by its wire's flag where the
    wire has one (Anthropic's `is_error`), else by its text. Gemini has no flag: its
    `is_error` is only whether the functionResponse has an `"error"` key, so a result
    without one is read by its text, as on the OpenAI wires (docs/verdict.md)."""
    if result.get("is_error"):
        return True
    if "is_error" in result and api not in ("gemini", "vertex-gemini"):
        return False
    return ERROR_TEXT.search(str(result.get("content", ""))) is not None


def _tool_loop(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    served = [e for e in entries if (e.get("response") or {}).get("status") == 200]
    max_calls = context.max_calls
    if len(served) > max_calls:
        yield Problem(
            served[max_calls],
            f"{len(served)} model calls in one session (more than {max_calls}): a tool loop that "
            "never ends?",
        )


# Requests in a row a harness may see refused before it must stop asking: asking again with
# the same history gets the same refusal (docs/verdict.md, "Replies that are valid and
# still wrong"), so a bounded retry is fine and a loop is not.
MAX_REFUSALS = 3
_REFUSALS = ("refusal", "content_filter", "blocked_prompt")
_EMPTY = ("empty", "reasoning_only")


def _misbehaviour(entry: EntryJson) -> str | None:
    response = entry.get("response") or {}
    kind = response.get("misbehaviour") if response.get("status") == 200 else None
    return str(kind) if kind else None


def _refusal_loop(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    run: list[EntryJson] = []
    for e in entries:
        if e.get("turn") is None:  # not a model request (MCP, a side request)
            continue
        run = [*run, e] if _misbehaviour(e) in _REFUSALS else []
        if len(run) == MAX_REFUSALS + 1:
            yield Problem(
                e,
                f"{len(run)} requests in a row (log seq {run[0]['seq']}-{e['seq']}) were "
                "answered with a refusal or a content filter: asking again with the same "
                f"history gets the same; stop after at most {MAX_REFUSALS}",
            )


def _empty_taken(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    """An empty reply (reasoning alone included) must be asked again: sent back as a turn,
    or the session's last reply at its first attempt, it was taken for something."""
    model = [e for e in entries if e.get("turn") is not None and not e.get("side")]
    for i, e in enumerate(model):
        if _misbehaviour(e) not in _EMPTY or _cut_by(e) is not None:
            continue
        later = model[i + 1 :]
        if not later and e.get("attempt") == 1:
            yield Problem(
                e,
                f"the session ended on the empty reply of request (log seq {e['seq']}), "
                "never asked again: was it taken for the answer?",
            )
        elif later and later[0].get("turn") != e.get("turn"):
            yield Problem(
                later[0],
                f"request (log seq {later[0]['seq']}) sent the empty reply of request (log "
                f"seq {e['seq']}) back as an assistant turn: ask again instead",
            )


def _early_retries(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    for i, e in enumerate(entries):
        wait = (e.get("response") or {}).get("retry_after")
        if not wait:
            continue
        same = (e.get("scenario"), e.get("turn"))
        retry = next(
            (x for x in entries[i + 1 :] if (x.get("scenario"), x.get("turn")) == same), None
        )
        if retry is None:
            continue
        waited = _time(retry) - _time(e) - (e.get("duration_ms") or 0) / 1000
        if waited < wait * 0.95 - 0.01:
            yield Problem(
                retry,
                f"request (log seq {retry['seq']}) retried after {waited:.3f} s; request "
                f"(log seq {e['seq']}) said retry-after {wait:g} s",
            )


def _continued_after_failure(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    for e in entries:
        for finding in e.get("violations") or ():
            if finding.get("rule") == "continued_after_failed_stream":
                yield Problem(e, f"request (log seq {e['seq']}): {finding['message']}")


def _refused(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    """Requests a provider would refuse (a rule in strict mode, a diverged history, a bad
    path or body, an unknown scenario): a scripted or chaos fault is not a refusal."""
    for e in entries:
        kind = _error_kind(e)
        if kind is not None and kind not in NOT_REFUSALS and kind not in _OWN_KIND:
            yield Problem(e, f"{_where(e)} was refused: {_error_text(e)}")


def _refused_as(kind: str) -> Callable[[list[EntryJson], Context], Iterator[Problem]]:
    def find(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
        for e in entries:
            if _error_kind(e) == kind or (kind == "server_error" and e.get("server_error")):
                yield Problem(e, f"{_where(e)}: {_error_text(e)}")

    return find


def _error_kind(entry: EntryJson) -> str | None:
    """The kind of an error answer; None for a 200 or a response still being sent."""
    response = entry.get("response") or {}
    status = response.get("status")
    if status is None or 200 <= status < 300:  # MCP's notifications are answered 202
        return None
    return str((response.get("error") or {}).get("kind") or f"status_{status}")


def _where(entry: EntryJson) -> str:
    turn = "" if entry.get("turn") is None else f" (turn {entry['turn']})"
    if _consumed(entry):
        turn = f" (turn {entry['turn']}, attempt {entry['attempt']})"
    return f"request (log seq {entry['seq']}){turn}"


def _consumed(entry: EntryJson) -> bool:
    """A store 503 that may have consumed an attempt (the store lost while counting it): its
    entry names the attempt and its note says how (state/__init__.py, consumed_note)."""
    response = entry.get("response") or {}
    error = response.get("error") or {}
    kind = error.get("kind")
    return kind == "store_unavailable" and bool(entry.get("attempt") and response.get("notes"))


def _error_text(entry: EntryJson) -> str:
    response = entry.get("response") or {}
    error = response.get("error") or {}
    message = " ".join(str(error.get("message") or "").split())
    notes = response.get("notes") or []
    if _consumed(entry):  # the attempt it may have consumed first, the store's message after
        message = f"{notes[0]} ({message})"
    elif notes:  # advice (a wrong base URL): more use than the rest of the message
        message = f"{message.split(';')[0]}. {notes[0]}"
    message = message if len(message) <= 200 else message[:199] + "…"
    return f"{response.get('status')} {error.get('kind', '')}: {message}".rstrip(": ")


def _no_requests(entries: list[EntryJson], context: Context) -> Iterator[Problem]:
    """An empty session passed nothing: its agent sent its requests elsewhere, or none."""
    if not entries:
        yield Problem(
            None,
            "no request reached this session: is the client's base URL the session's url(...)?",
        )


def unserved_turns(entries: Iterable[EntryJson]) -> list[str]:
    """Scripted turns no request reached, one line per scenario (respx's assert_all_called):
    the agent stopped early, or the scenario scripts more than the test runs. Each served
    entry says how many turns its scenario scripts (`scripted_turns`), so a log file tells
    this too. Not a verdict check: a test that uses part of a scenario is common and fine;
    `assert_all_turns_served` asks for it (docs/verdict.md)."""
    scripted: dict[str, tuple[int, set[int]]] = {}
    for e in entries:
        count, turn = e.get("scripted_turns"), e.get("turn")
        if not isinstance(count, int) or e.get("side") or e.get("api") in ("mcp", ALLOWANCE):
            continue
        seen = scripted.setdefault(str(e.get("scenario")), (count, set()))[1]
        if isinstance(turn, int):
            seen.add(turn)
    lines = []
    for name, (count, seen) in scripted.items():
        missing = [str(t) for t in range(count) if t not in seen]
        if missing:
            shown = ", ".join(missing[:10]) + (", …" if len(missing) > 10 else "")
            lines.append(
                f"scenario {name!r}: {len(missing)} of {count} scripted turns never served "
                f"(turn {shown})"
            )
    return lines


def unconsumed_mcp_answers(entries: Iterable[EntryJson]) -> list[str]:
    """Scripted MCP answers no `tools/call` got, one line per tool (aimock's MCP fakes fail
    on unconsumed entries): each call's entry says which answer it got (`mcp.answer`) and
    how many its tool scripts, and each `tools/list` entry how many each listed tool
    scripts (`mcp.scripted`), so a tool listed and never called counts too."""
    scripted: dict[tuple[str, str], tuple[int, set[int]]] = {}
    for e in entries:
        mcp = e.get("mcp")
        if e.get("api") != "mcp" or not isinstance(mcp, dict):
            continue
        server = str(mcp.get("server"))
        for tool, count in (mcp.get("scripted") or {}).items():
            if isinstance(count, int):
                scripted.setdefault((server, str(tool)), (count, set()))
        answer = mcp.get("answer")
        if mcp.get("method") == "tools/call" and isinstance(answer, int):
            count = (mcp.get("scripted") or {}).get(mcp.get("tool"), 0)
            key = (server, str(mcp.get("tool")))
            scripted.setdefault(key, (count if isinstance(count, int) else 0, set()))[1].add(answer)
    lines = []
    for (server, tool), (count, got) in scripted.items():
        missing = [str(i) for i in range(count) if i not in got]
        if missing:
            lines.append(
                f"{server}.{tool}: {len(missing)} of {count} scripted results never "
                f"answered a call (result {', '.join(missing[:10])})"
            )
    return lines


# How each wire's result says "this call failed", for errors_fed_back's message.
_HOW_TO_SAY_ERROR = {
    "anthropic": "Anthropic wants the tool_result block with is_error: true",
    "gemini": 'Gemini carries no error flag: put it under the response\'s "error" key, or '
    "say so in the result's text, e.g. 'error: ...'",
}
_HOW_TO_SAY_ERROR |= {
    "vertex-gemini": _HOW_TO_SAY_ERROR["gemini"],
    "vertex-anthropic": _HOW_TO_SAY_ERROR["anthropic"],
    "": "OpenAI carries no error flag: say so in the result's text, e.g. 'error: ...'",
}


CHECKS: tuple[VerdictCheck, ...] = (
    VerdictCheck("calls_answered", _unanswered),
    VerdictCheck("answered_once", _answered_twice),
    VerdictCheck("results_known", _unknown_results),
    VerdictCheck("parallel_complete", _partial_parallel),
    VerdictCheck("errors_fed_back", _errors_not_fed_back),
    VerdictCheck("no_tool_loop", _tool_loop),
    VerdictCheck("no_refusal_loop", _refusal_loop),
    VerdictCheck("empty_replies_asked_again", _empty_taken),
    VerdictCheck("retry_after_honoured", _early_retries),
    VerdictCheck("failed_streams_retried", _continued_after_failure),
    VerdictCheck("requests_accepted", _refused),
    VerdictCheck("expectations_met", _refused_as("expectation_failed")),
    VerdictCheck("scenario_not_exhausted", _refused_as("scenario_exhausted")),
    VerdictCheck("no_server_errors", _refused_as("server_error")),
    VerdictCheck("requests_made", _no_requests),
)
CHECK_NAMES = (*(c.name for c in CHECKS), *MCP_CHECK_NAMES)  # what an allowance may name
# The checks of a request's answer rather than of the tool protocol: what a provider refused.
REQUEST_CHECKS = (
    "requests_accepted",
    "expectations_met",
    "scenario_not_exhausted",
    "no_server_errors",
)


_WHOLE_LOG = (*REQUEST_CHECKS, "requests_made")  # the checks that see MCP messages too


def _time(entry: EntryJson) -> float:
    return datetime.fromisoformat(str(entry["time"]).replace("Z", "+00:00")).timestamp()


def sessions(entries: Iterable[EntryJson]) -> dict[str, list[EntryJson]]:
    """Entries grouped by session, in order of first appearance."""
    grouped: dict[str, list[EntryJson]] = {}
    for e in entries:
        grouped.setdefault(str(e.get("session")), []).append(e)
    return grouped
