"""The protocol verdict: did a harness handle the tool protocol well, judged from a
session's log entries (docs/http-api.md)? It reads entries in their JSON form, so the server
(`GET /_mockllm/verdict`) and `mockllm report LOGFILE` judge exactly alike.

Each check has a stable name and says, when it fails, which request and which call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from functools import lru_cache
from typing import Any

from mockllm.log.mcp_checks import Declared, mcp_checks, split

EntryJson = dict[str, Any]  # a log entry as JSON: what `/_mockllm/requests` and a --log line hold
DEFAULT_MAX_CALLS = 20
# How a result says "error" on a wire without an error flag (OpenAI): documented heuristic.
ERROR_TEXT = re.compile(r"error|invalid|unknown|not (found|offered|available|allowed)|fail", re.I)


def verdict(
    session: str,
    entries: list[EntryJson],
    max_calls: int = DEFAULT_MAX_CALLS,
    mcp_tools: Declared | None = None,
) -> dict[str, Any]:
    """`mcp_tools`: each scenario's scripted MCP tools, when the judge knows the scenarios."""
    # Side requests (a title, a router) are not turns of the agent loop: no turn check
    # judges them (docs/scenarios.md, "Side requests").
    side = sum(1 for e in entries if e.get("side"))
    entries, mcp = split(
        sorted((e for e in entries if not e.get("side")), key=lambda e: int(e["seq"]))
    )
    cut = [f"{_label(e, c)} was cut by fault ({_cut_by(e)}): not counted" for e, c in _cut(entries)]
    checks = [
        _check("calls_answered", _unanswered(entries), cut),
        _check("answered_once", _answered_twice(entries)),
        _check("results_known", _unknown_results(entries)),
        _check("parallel_complete", _partial_parallel(entries)),
        _check("errors_fed_back", _errors_not_fed_back(entries)),
        _check("no_tool_loop", _tool_loop(entries, max_calls)),
        _check("retry_after_honoured", _early_retries(entries)),
        _check("failed_streams_retried", _continued_after_failure(entries)),
        *mcp_checks(entries, mcp, _says_error, mcp_tools),  # log/mcp_checks.py
    ]
    return {
        "session": session,
        "ok": all(c["ok"] for c in checks),
        "requests": len(entries) + len(mcp),
        **({"side_requests": side} if side else {}),
        "checks": checks,
    }


def _check(name: str, problems: Iterable[str], notes: Iterable[str] = ()) -> dict[str, Any]:
    """A failed check says what failed; a passed one may still say what it left out."""
    found = list(problems)
    return {"name": name, "ok": not found, "message": "; ".join(found or notes)}


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
    return f"{call['id']} ({call['name']}, turn {entry.get('turn')}, request #{entry['seq']})"


def _unanswered(entries: list[EntryJson]) -> Iterator[str]:
    for e, call in _served(entries):
        later = (r["call_id"] for x in entries if x["seq"] > e["seq"] for r in _results(x))
        if call["id"] not in set(later):
            yield f"{_label(e, call)} was never answered"


def _answered_twice(entries: list[EntryJson]) -> Iterator[str]:
    for e in entries:
        ids = [r["call_id"] for r in _results(e)]
        for call_id in sorted({i for i in ids if ids.count(i) > 1}):
            yield f"request #{e['seq']} answers {call_id} {ids.count(call_id)} times"


def _unknown_results(entries: list[EntryJson]) -> Iterator[str]:
    for e in entries:
        known: set[str] = set()
        for m in e.get("conversation") or ():
            known |= {c["id"] for c in m.get("tool_calls", ())}
            for r in m.get("tool_results", ()):
                if r["call_id"] not in known:
                    yield (
                        f"request #{e['seq']} sends a result for {r['call_id']}, which no call in "
                        "its history made"
                    )


def _partial_parallel(entries: list[EntryJson]) -> Iterator[str]:
    seen: set[tuple[str, ...]] = set()
    for e in entries:
        answered = {r["call_id"] for r in _results(e)}
        for m in e.get("conversation") or ():
            ids = tuple(c["id"] for c in m.get("tool_calls", ()))
            missing = [i for i in ids if i not in answered]
            if len(ids) > 1 and missing and len(missing) < len(ids) and ids not in seen:
                seen.add(ids)
                yield (
                    f"request #{e['seq']} answers {len(ids) - len(missing)} of {len(ids)} "
                    f"parallel calls (missing {', '.join(missing)})"
                )


def _errors_not_fed_back(entries: list[EntryJson]) -> Iterator[str]:
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
        if result is None:
            yield f"{_label(e, call)} ({problem}) was never answered with an error"
        elif not _says_error(result):
            yield (
                f"{_label(e, call)} ({problem}) was answered {result['content'][:60]!r} without "
                "an error"
            )


def _says_error(result: dict[str, Any]) -> bool:
    if "is_error" in result:
        return bool(result["is_error"])
    return ERROR_TEXT.search(str(result.get("content", ""))) is not None


def _tool_loop(entries: list[EntryJson], max_calls: int) -> Iterator[str]:
    served = [e for e in entries if (e.get("response") or {}).get("status") == 200]
    if len(served) > max_calls:
        yield (
            f"{len(served)} model calls in one session (more than {max_calls}): a tool loop that "
            "never ends?"
        )


def _early_retries(entries: list[EntryJson]) -> Iterator[str]:
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
            yield (
                f"request #{retry['seq']} retried after {waited:.3f} s; request #{e['seq']} said "
                f"retry-after {wait:g} s"
            )


def _continued_after_failure(entries: list[EntryJson]) -> Iterator[str]:
    for e in entries:
        for finding in e.get("violations") or ():
            if finding.get("rule") == "continued_after_failed_stream":
                yield f"request #{e['seq']}: {finding['message']}"


def _time(entry: EntryJson) -> float:
    return datetime.fromisoformat(str(entry["time"]).replace("Z", "+00:00")).timestamp()


def call_problem(
    name: str, arguments: str, tools: dict[str, Any], freeform: frozenset[str] = frozenset()
) -> str | None:
    """What is wrong with a served call that a careful harness must refuse to execute:
    a tool not offered, arguments that are not a JSON object, or that break its schema.
    A `freeform` tool takes any text (a Responses custom tool: Codex's `exec`)."""
    if name not in tools:
        return "not offered"
    if name in freeform:
        return None
    try:
        value = json.loads(arguments)
    except ValueError:
        return "arguments are not valid JSON"
    if not isinstance(value, dict):
        return "arguments are not a JSON object"
    schema = tools[name]
    if not isinstance(schema, dict):
        return None
    key = json.dumps(schema, sort_keys=True)
    if len(arguments) > _SMALL:
        return _schema_problem.__wrapped__(key, arguments)
    return _schema_problem(key, arguments)


_SMALL = 4096  # arguments up to this many characters have their answer remembered


@lru_cache(maxsize=1024)
def _schema_problem(schema: str, arguments: str) -> str | None:
    """Remembered: the same scripted call against the same tool recurs in every session
    (and a shared log formats each entry as it closes, on the request's path)."""
    validator = _validator(schema)
    if validator is None:
        return None
    import jsonschema  # deferred: only paid when an entry is formatted (in memory: when read)

    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(json.loads(arguments)))
    except Exception:  # a broken schema is a rule violation, never a broken log
        return None
    return f"arguments break the schema: {error.message}" if error is not None else None


@lru_cache(maxsize=256)
def _validator(schema: str) -> Any:
    """A checked validator per distinct schema: checking a schema against the metaschema
    costs milliseconds, and reading a log of thousands of calls to one tool paid it for
    every call. None for a schema that is not one."""
    import jsonschema

    try:
        parsed = json.loads(schema)
        jsonschema.Draft202012Validator.check_schema(parsed)
        return jsonschema.Draft202012Validator(parsed)
    except Exception:  # a broken schema is a rule violation, never a broken log
        return None


def sessions(entries: Iterable[EntryJson]) -> dict[str, list[EntryJson]]:
    """Entries grouped by session, in order of first appearance."""
    grouped: dict[str, list[EntryJson]] = {}
    for e in entries:
        grouped.setdefault(str(e.get("session")), []).append(e)
    return grouped
