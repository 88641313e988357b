"""`mockllm report LOGFILE`: a --log file read back, its sessions picked, judged by the
verdict (judge/verdict.py) and printed one line a session, or as transcripts. cli.py parses
the flags and prints; the HTML page (`--html`) is the viewer's, a layer above this one."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mockllm.errors import did_you_mean
from mockllm.judge.transcript import plural, transcript
from mockllm.judge.uses import name_of, reruns, uses
from mockllm.judge.verdict import NOT_REFUSALS, verdict
from mockllm.log.records import LogEntry

Entry = dict[str, Any]


def read_log(path: str) -> list[Entry] | str:
    """The entries of a --log file, or the one line that says why it is not one."""
    try:
        with open(path, encoding="utf-8") as log:
            lines = log.readlines()
    except FileNotFoundError:
        return f"{path}: no such file"
    except (OSError, UnicodeDecodeError) as e:
        return f"{path}: cannot read: {e}"
    entries = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as e:
            return f"{path}:{number}: not a JSON log entry: {e}"
        if not isinstance(entry, dict) or "seq" not in entry:
            return f"{path}:{number}: not a mockllm log entry (no 'seq'): is it a --log file?"
        entries.append(entry)
    if not entries:
        return f"{path}: empty: no requests were logged"
    return entries


def pick(entries: list[Entry], session: str | None, path: str) -> dict[str, list[Entry]] | str:
    """The log's entries by session (only `session`'s when given), or why there is none."""
    grouped = uses(entries)  # a name reset into a new use, or rerun, is judged apart
    if session is None:
        return grouped
    found = {k: v for k, v in grouped.items() if session in (k, name_of(k))}
    if not found:
        names = list(dict.fromkeys(map(name_of, grouped)))
        known = ", ".join(names)
        return f"no session {session!r} in {path}{did_you_mean(session, names)}; sessions: {known}"
    return found


def transcripts(grouped: Mapping[str, list[Entry]]) -> str:
    return "\n".join(
        transcript([LogEntry.from_json(e) for e in found], name_of(s))
        for s, found in grouped.items()
    )


def summary(
    grouped: Mapping[str, list[Entry]], max_calls: int, allow: Mapping[str, str]
) -> tuple[str, dict[str, dict[str, Any]]]:
    """One line a session (its label, then what failed, was waived, or was a fault), a last
    line counting the failed sessions, and each session's verdict."""
    verdicts = {
        s: verdict(name_of(s), found, max_calls, allow=dict(allow)) for s, found in grouped.items()
    }
    again = reruns(grouped)
    lines = [_session_lines(verdicts[s], s, found, again.get(s)) for s, found in grouped.items()]
    failed = sum(not v["ok"] for v in verdicts.values())
    counted = plural(len(grouped), "session")
    lines.append(f"{failed} of {counted} failed" if failed else f"{counted}: all ok")
    return "\n".join(lines), verdicts


def _session_lines(
    result: dict[str, Any], session: str, found: list[Entry], rerun: tuple[int, int] | None
) -> str:
    lines = [f"! {c['name']}: {c['message']}" for c in result["checks"] if c["status"] == "failed"]
    lines += [
        f"~ {c['name']} waived: {c['waived']}"
        + (f" [by {c['waived_by']}]" if "waived_by" in c else "")
        for c in result["checks"]
        if c["status"] == "waived"
    ]
    # Faults the scenario scripted: not failures, but what the harness had to handle.
    lines += [
        _answer_line(e) for e in found if _status(e) is not None and not _ok(e) and not _refused(e)
    ]
    head = f"{result['label']}  {name_of(session)} ({plural(result['requests'], 'request')})"
    if rerun is not None:  # the same test in another run, or its name reset and used again
        head += f" · run {rerun[0]} of {rerun[1]}" + (" (a rerun)" if rerun[0] > 1 else "")
    return head + "".join(f"\n     {line}" for line in lines)


def _status(entry: Entry) -> int | None:
    return (entry.get("response") or {}).get("status")


def _refused(entry: Entry) -> bool:
    """An error answer that is not a scripted or chaos fault, nor a refused WebSocket upgrade
    (the client falls back to HTTP): the harness did something wrong."""
    error = (entry.get("response") or {}).get("error") or {}
    if entry.get("client_disconnected") and _status(entry) is None:
        return False  # the client hung up before it was answered: its choice, not a refusal
    return not _ok(entry) and error.get("kind") not in NOT_REFUSALS


def _ok(entry: Entry) -> bool:
    """A 2xx: a model answer is 200, but an MCP notification or response a client posts is
    answered 202 Accepted by the streamable HTTP transport (docs/mcp.md), which is no error."""
    status = _status(entry)
    return status is not None and 200 <= status < 300


def _answer_line(entry: Entry) -> str:
    response = entry.get("response") or {}
    error = response.get("error") or {}
    turn = "" if entry.get("turn") is None else f" turn {entry['turn']}"
    mark = "!" if _refused(entry) else "·"
    message = str(error.get("message", "")).replace("\n", " ")
    notes = response.get("notes") or []
    if notes:  # advice (a wrong base URL): more use than the rest of the message
        message = f"{message.split(';')[0]}. {notes[0]}"
    message = message if len(message) <= 160 else message[:159] + "…"
    status = response.get("status", "(no response)")
    return f"{mark} #{entry['seq']}{turn}: {status} {error.get('kind', '')}: {message}"
