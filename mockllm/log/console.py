"""The server console: one line per request as it closes, for a person (text, coloured on a
terminal) or a machine (`--log-format json`). Formatting happens only when a line is
written, from fields the entry already holds, so the hot path pays one call when on and
nothing at all with `--quiet`."""

from __future__ import annotations

import asyncio
import json
import os
from typing import IO, TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mockllm.log.journal import LiveEntry

LogFormat = Literal["text", "json"]

_RESET = "\033[0m"
_GREEN, _YELLOW, _RED, _DIM = "\033[32m", "\033[33m", "\033[31m", "\033[2m"
_MESSAGE_WIDTH = 120  # characters of a finding shown; the request log keeps all of it


def wants_colour(stream: IO[str]) -> bool:
    """Colour on a terminal unless NO_COLOR is set (https://no-color.org)."""
    return not os.environ.get("NO_COLOR") and stream.isatty()


class Console:
    def __init__(self, stream: IO[str], log_format: LogFormat = "text", colour: bool = False):
        self.stream = stream
        self.colour = colour and log_format == "text"
        self._format = self._json if log_format == "json" else self._text
        self._warned: set[str] = set()
        self._held: list[str] = []
        self._ok = f"{_GREEN}200 " if self.colour else "200 "
        self._end = f"{_RESET}\n" if self.colour else "\n"

    def __call__(self, entry: LiveEntry) -> None:
        if self._format == self._text and _plain(entry):  # the common case, cheaply
            turn = entry.turn if entry.attempt == 1 else f"{entry.turn} attempt={entry.attempt}"
            finish = entry.resolved.reply.finish if entry.resolved is not None else ""
            line = (
                f"#{entry.seq} {entry.method} {entry.path}  session={entry.session} "
                f"scenario={entry.scenario} turn={turn}  {self._ok}{finish}{self._end}"
            )
        else:
            line = self._format(entry) + "\n"
            for note in entry.notes:  # a warning gets a line of its own, once
                if note.startswith("warning: ") and note not in self._warned:
                    self._warned.add(note)
                    line += self._paint(f"mockllm: {note}", _YELLOW) + "\n"
        # Lines are held until the loop's turn ends, then written and flushed together:
        # one write per burst of requests, not one per line (under PYTHONUNBUFFERED, common
        # in CI images, every `stream.write` would be a syscall of its own).
        self._held.append(line)
        if len(self._held) == 1:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:  # no loop: called outside the server
                self.flush()

    def flush(self) -> None:
        """Write the held lines (the server also calls this as it stops)."""
        held, self._held = self._held, []
        if held:
            self.stream.write("".join(held))
        self.stream.flush()

    def _json(self, entry: LiveEntry) -> str:
        return json.dumps(line_fields(entry), ensure_ascii=False)

    def _text(self, entry: LiveEntry) -> str:
        f = line_fields(entry)
        where = f"session={f['session']} scenario={f['scenario']}"
        if f["turn"] is not None:
            where += f" turn={f['turn']}"
            if f["attempt"] and f["attempt"] > 1:
                where += f" attempt={f['attempt']}"
        if f.get("side"):
            where += f" side={f['side']}"
        status = "..." if f["status"] is None else str(f["status"])
        outcome = f["error"] or f["finish"] or ""
        parts = [f"#{f['seq']} {f['method']} {f['path']}", where]
        result = f"{status} {outcome}".rstrip()
        parts.append(self._paint(result, _status_colour(f["status"])))
        if f["fault"]:
            parts.append(self._paint(f"fault={f['fault']}", _YELLOW))
        if f["problem"]:
            parts.append(self._paint(f"! {_short(f['problem'])}", _RED))
        if f["note"] and not f["note"].startswith("warning: "):
            parts.append(self._paint(f"note: {_short(f['note'])}", _DIM))
        return "  ".join(parts)

    def _paint(self, text: str, colour: str) -> str:
        return f"{colour}{text}{_RESET}" if self.colour and colour else text


def line_fields(entry: LiveEntry) -> dict[str, Any]:
    """What one console line says about a request (the JSON format's keys)."""
    findings = entry.violations or entry.expectation_failures
    finding = findings[0] if findings else None
    problem = f"{finding.rule}: {finding.message}" if finding is not None else None
    if (
        problem is None
        and entry.error is not None
        and entry.error["kind"] != "fault"
        and not entry.notes
    ):
        problem = entry.error["message"]
    reply = entry.resolved.reply if entry.resolved is not None and entry.status == 200 else None
    return {
        "seq": entry.seq,
        "method": entry.method,
        "path": entry.path,
        "session": entry.session,
        "scenario": entry.scenario,
        "turn": entry.turn,
        "attempt": entry.attempt,
        **({"side": entry.side["name"]} if entry.side else {}),
        "status": entry.status,
        "finish": reply.finish if reply is not None else None,
        "error": entry.error["kind"] if entry.error else None,
        "fault": entry.fault["kind"] if entry.fault else None,
        "problem": problem,
        "note": entry.notes[0] if entry.notes else None,
        "duration_ms": entry.duration_ms,
    }


def _plain(entry: LiveEntry) -> bool:
    """A 200 with nothing to add: no fault, finding or note."""
    return (
        entry.status == 200
        and entry.turn is not None
        and not (entry.fault or entry.violations or entry.expectation_failures or entry.notes)
    )


def _status_colour(status: int | None) -> str:
    if status is None:
        return ""
    return _GREEN if status < 400 else _YELLOW if status < 500 else _RED


def _short(text: str) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= _MESSAGE_WIDTH else text[: _MESSAGE_WIDTH - 1] + "…"
