"""Every session one `mockllm record` has seen: its attempts, in arrival order, and its file.

A file is rewritten (atomically) after every finished attempt, so a killed recorder loses
at most the exchanges in flight; `end` waits for those before it names the file.
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
        """The attempt is over: keep it and rewrite the session's file."""
        attempt.done = True
        return self.write(self._settled(name))

    def discard(self, name: str, attempt: Attempt) -> None:
        """Forget an attempt the upstream never answered (unreachable): not the model's doing."""
        self._settled(name).attempts.remove(attempt)

    def _settled(self, name: str) -> Session:
        """One exchange of the session is over; the session, idle when it was the last."""
        session = self.sessions[name]
        session.in_flight -= 1
        if session.in_flight == 0:
            session.idle.set()
        return session

    async def end(self, name: str) -> Session | None:
        """Wait for the session's exchanges in flight; its file is then complete."""
        session = self.sessions.get(name)
        if session is not None and session.in_flight:
            await session.idle.wait()
        return session

    def path(self, name: str) -> Path:
        return self.out / f"{name}.yaml"

    def turns(self, name: str) -> int:
        done = [a.turn for a in self.sessions[name].attempts if a.done]
        return max(done) + 1 if done else 0

    def write(self, session: Session) -> Path:
        path = self.path(session.name)
        done = [a for a in session.attempts if a.done]
        if not done:
            return path
        date = time.strftime("%Y-%m-%d", time.gmtime())
        meta = Meta(session.name, self.upstream, date, str(path))
        text = scenario_text(meta, done, self.redactor, self.redactor.clean_prefix)
        self.out.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)  # atomic: a reader never sees half a file
        return path
