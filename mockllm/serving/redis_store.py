"""This server's side of a shared store: run-time scenarios kept in step with the other
replicas, and the attempt counted against the scenarios this replica knows.

A scenario posted to any replica is stored in Redis under a new version (unique to that
POST); counting an attempt reads the version in the same round trip, and a replica that is
behind loads the scenarios before it answers (docs/scale.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from mockllm.core.cache import Lru
from mockllm.core.conversation import Conversation
from mockllm.core.divergence import CallId
from mockllm.core.engine import Answer, Engine
from mockllm.core.scenario import Scenario
from mockllm.core.validation import Violation
from mockllm.errors import ScenarioError
from mockllm.loading.loader import load_text
from mockllm.state import StoreUnavailable
from mockllm.state.redis_state import Cuts, RedisState, cuts_of, field_of
from mockllm.state.store import TRIES, Counted, Expected, gave_up

SOURCE = "<POST /_mockllm/scenarios>"
Known = tuple[dict[str, int], Cuts]  # a session's attempts by turn field, and its cuts


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """What an answer was computed on: the session as this replica knew it, and the
    version of the scenarios it knew (the count is refused under another)."""

    attempts: dict[str, int]
    cuts: Cuts
    version: str
    field: str = ""  # the turn's hash field (`field_of`), made once per request


class RedisStore:
    """The `Store` on Redis (state/store.py), for every server given the same URL and
    prefix: an attempt is counted only if Redis still has what this replica expected."""

    keeps_responses = True

    def __init__(self, state: RedisState, engine: Engine) -> None:
        self.state, self.engine = state, engine
        self.url = state.url
        self.version = "?"  # never a real version: the first request loads the scenarios
        self._texts: dict[str, str] = {}  # the run-time scenarios loaded, as posted
        # What this replica last saw of each session: the guess each answer is computed on
        self._known: Lru[Known] = Lru(4096)

    async def answer_turn(
        self,
        engine: Engine,
        scenario: Scenario,
        session: str,
        parsed: Conversation,
        call_id: CallId | None,
        violations: Callable[[Scenario], tuple[Violation, ...]],
    ) -> tuple[Scenario, Answer]:
        """`answer_turn` (state/store.py), step for step, in one coroutine: `expect` is a
        plain call here (it never suspends), and the exchange awaits this directly."""
        for _ in range(TRIES):
            conv = engine.joined(scenario, parsed, call_id)
            turn = conv.turn
            expected = self._expect(session, scenario.name, turn)
            found = engine.answer(
                scenario,
                session,
                conv,
                expected.attempt,
                expected.cuts,
                violations(scenario),
                call_id,
            )
            again = await self.commit(session, scenario, turn, expected, found.cut)
            if again is None:
                return scenario, found
            if isinstance(again, Counted):  # the attempt it really is
                found = engine.answer(
                    scenario,
                    session,
                    conv,
                    again.attempt,
                    again.cuts,
                    violations(scenario),
                    call_id,
                )
                await self.cut(session, scenario, turn, again, found.cut)
                return scenario, found
            scenario = again
        raise gave_up(self.url)

    async def expect(self, session: str, scenario: str, turn: int) -> Expected:
        return self._expect(session, scenario, turn)

    def _expect(self, session: str, scenario: str, turn: int) -> Expected:
        """The attempt this replica expects (no round trip): right when it saw the
        session last (a harness that keeps to one replica, or a turn's first attempt)."""
        attempts, cuts = self._known.get(session) or ({}, {})
        field = field_of(scenario, turn)
        before = attempts.get(field, 0)
        seen = ReplicaView(attempts, cuts, self.version, field)
        return Expected(before + 1, cuts_of(cuts, scenario) if cuts else {}, seen)

    async def commit(
        self, session: str, scenario: Scenario, turn: int, expected: Expected, how: str | None
    ) -> Scenario | Counted | None:
        """The count and the cut in one write, if Redis agrees (`RedisState.commit`); else
        the count alone, and what Redis sent back is what this replica knows of the session
        from now on."""
        seen = expected.seen
        assert isinstance(seen, ReplicaView)
        field, before = seen.field or field_of(scenario.name, turn), expected.attempt - 1
        key = field.encode()
        kept = {k: v for k, v in seen.cuts.items() if k != key} if seen.cuts else {}
        if how is not None:
            kept[key] = how.encode()
        # What Redis will have once this count lands, known before it does: a request
        # answered here meanwhile expects the next attempt, and its command goes after this
        # one on the same connection (state/redis_line.py), so concurrent requests on one
        # session count in one write each, none answered twice. Redis decides all the same.
        self._known.put(session, ({**seen.attempts, field: expected.attempt}, kept))
        try:
            done, count, now = await self.state.commit(
                session, field, seen.version, before, seen.cuts, how
            )
        except StoreUnavailable as lost:
            self._known.put(session, (seen.attempts, seen.cuts))  # nothing known any more
            if not lost.refused:  # a write Redis refused (full: OOM) consumed nothing
                lost.consumed = (turn, expected.attempt)
            raise
        if done == 1:
            return None
        if done == -1:  # scenarios posted meanwhile: load them, then answer again
            self._known.put(session, (seen.attempts, seen.cuts))
            await self.refresh()
            return self.engine.find(scenario.name)
        assert now is not None  # counted, as another attempt than this replica expected
        attempts = {**seen.attempts, field: count}
        self._known.put(session, (attempts, now))
        view = ReplicaView(attempts, now, seen.version, field)
        return Counted(count, cuts_of(now, scenario.name), view)

    async def cut(
        self, session: str, scenario: Scenario, turn: int, counted: Counted, how: str | None
    ) -> None:
        """Record how a `Counted` attempt was cut, when that differs from what Redis has
        (most answers are whole, on a turn never cut: no round trip)."""
        seen = counted.seen
        assert isinstance(seen, ReplicaView)
        key = (seen.field or field_of(scenario.name, turn)).encode()
        if seen.cuts.get(key) == (how.encode() if how is not None else None):
            return
        try:
            await self.state.cut(session, scenario.name, turn, counted.attempt, how)
        except StoreUnavailable as lost:  # the attempt was counted, its cut perhaps not
            lost.consumed, lost.counted = (turn, counted.attempt), True
            raise
        kept = {k: v for k, v in seen.cuts.items() if k != key}
        if how is not None:
            kept[key] = how.encode()
        self._known.put(session, (seen.attempts, kept))

    async def response(self, key: str) -> bytes | None:
        return await self.state.response(key)

    async def keep_response(self, key: str, data: bytes) -> None:
        await self.state.keep_response(key, data)

    async def reset(self, session: str | None = None) -> None:
        await self.state.reset(session)

    async def refresh(self) -> None:
        """Load the run-time scenarios posted since this replica last looked (one short
        read when none was: the texts come only with a new version)."""
        version, texts = await self.state.scenarios(self.version)
        for name, text in (texts or {}).items():
            if self._texts.get(name) != text:
                self._texts[name] = text  # tried once: a text this version cannot load
                try:  # (a newer mockllm's) is left out, and said so once
                    self.engine.add(load_text(text, source=SOURCE))
                except ScenarioError as error:
                    print(
                        f"mockllm: warning: run-time scenario {name!r} of the shared store "
                        f"(version {version}) is not served here: {error}",
                        file=sys.stderr,
                        flush=True,
                    )
        self.version = version

    async def add(self, scenario: Scenario, text: str) -> bool:
        """Share a scenario posted here; True if it replaced one of the same name."""
        replaced = await self.state.add_scenario(scenario.name, text)
        replaced = self.engine.add(scenario) or replaced
        self._texts[scenario.name] = text
        await self.refresh()
        return replaced
