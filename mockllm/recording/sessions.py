"""Every session one `mockllm record` has seen: its attempts, in arrival order, and its file.

A file is rewritten (atomically) after every finished attempt, so a killed recorder loses
at most the exchanges in flight. Writing happens on a worker thread, one write per session
at a time, later attempts folded into the next write: a long session's file must not hold
up the event loop that relays every other stream. `end` waits for the exchanges in flight
and the write; `flush` writes every session once the server has stopped.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from mockllm.providers.base import Adapter, Parsed
from mockllm.recording.attempt import Attempt
from mockllm.recording.compose import Meta, scenario_text
from mockllm.recording.redact import Redactor


def scenario_name(scenario: str | None, session: str | None) -> str:
    """The recorded scenario's name (and file stem): the client's scenario and session."""
    name = "-".join(part for part in (scenario or "recorded", session) if part)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "recorded"


@dataclass
class Session:
    name: str
    attempts: list[Attempt] = field(default_factory=list)
    in_flight: int = 0
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    stale: bool = False  # attempts finished since the file was last written
    writer: asyncio.Task[None] | None = None

    def done(self) -> list[Attempt]:
        """The finished attempts: a snapshot, which a writer thread may read while more come."""
        return [a for a in self.attempts if a.done]


class Sessions:
    def __init__(self, out: Path, upstream: str, redactor: Redactor) -> None:
        self.out, self.upstream, self.redactor = out, upstream, redactor
        self.sessions: dict[str, Session] = {}

    def begin(self, name: str, adapter: Adapter, parsed: Parsed) -> Attempt:
        """A new attempt at the turn this request asks for, in arrival order."""
        session = self.sessions.get(name)
        if session is None:
            session = self.sessions[name] = Session(name)
        turn = parsed.conversation.turn
        number = 1 + sum(1 for a in session.attempts if a.turn == turn)
        attempt = Attempt(adapter, parsed, turn, number)
        session.attempts.append(attempt)
        session.in_flight += 1
        session.idle.clear()
        return attempt

    def finish(self, name: str, attempt: Attempt) -> Path:
        """The attempt is over: keep it, and have the session's file rewritten."""
        attempt.done = True
        session = self._settled(name)
        session.stale = True
        if session.writer is None or session.writer.done():
            session.writer = asyncio.get_running_loop().create_task(
                self._write_while_stale(session)
            )
        return self.path(name)

    def discard(self, name: str, attempt: Attempt) -> None:
        """Forget an attempt the upstream never answered (unreachable): not the model's doing."""
        self._settled(name).attempts.remove(attempt)

    async def end(self, name: str) -> Session | None:
        """Wait for the session's exchanges in flight and its file; then it is complete."""
        session = self.sessions.get(name)
        if session is None:
            return None
        while session.in_flight or (session.writer is not None and not session.writer.done()):
            await session.idle.wait()
            if session.writer is not None:
                await session.writer
        return session

    def flush(self) -> list[Session]:
        """Write every session now (the server has stopped: no loop, no thread needed)."""
        for session in self.sessions.values():
            if session.stale:
                self.write(session.name, session.done())
        return [s for s in self.sessions.values() if s.done()]

    def path(self, name: str) -> Path:
        return self.out / f"{name}.yaml"

    def scenario_of(self, name: str) -> str:
        """The `name:` the session's file gives its scenario."""
        return name

    def turns(self, name: str) -> int:
        done = [a.turn for a in self.sessions[name].done()]
        return max(done) + 1 if done else 0

    def write(self, name: str, attempts: list[Attempt]) -> None:
        path = self.path(name)
        date = time.strftime("%Y-%m-%d", time.gmtime())
        meta = Meta(self.scenario_of(name), self.upstream, date, str(path))
        text = scenario_text(meta, attempts, self.redactor, self.redactor.clean_prefix)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)  # atomic: a reader never sees half a file

    async def _write_while_stale(self, session: Session) -> None:
        while session.stale:
            session.stale = False
            await asyncio.to_thread(self.write, session.name, session.done())

    def _settled(self, name: str) -> Session:
        """One exchange of the session is over; the session, idle when it was the last."""
        session = self.sessions[name]
        session.in_flight -= 1
        if session.in_flight == 0:
            session.idle.set()
        return session
