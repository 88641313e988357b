"""Attempt counters and cut deliveries in this process's memory: the default store.

`MemoryState` keeps the counters (plain calls); `MemoryStore` is the `Store` over them
(state/store.py), whose coroutines never suspend: the default path pays an await per call
(tens of nanoseconds) and no event-loop round trip.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

from mockllm.core.conversation import Conversation
from mockllm.core.divergence import CallId
from mockllm.core.engine import Answer, Engine
from mockllm.core.rejoin import rejoined, unmerged
from mockllm.core.scenario import Scenario
from mockllm.core.validation import Violation
from mockllm.state import MEMORY
from mockllm.state.store import Counted, Expected

NO_CUTS: Mapping[int, str] = {}  # shared, never written: a plain dict reads fastest


class MemoryState:
    """Attempts by session, least recently used first: past `max_sessions` the oldest
    session starts afresh. A running test sends requests, so its session is never the
    oldest unless `max_sessions` others were used since its last request."""

    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self._attempts: OrderedDict[str, dict[tuple[str, int], int]] = OrderedDict()
        # session → scenario → turn → how its latest delivery was cut short (absent: whole)
        self._cuts: dict[str, dict[str, dict[int, str]]] = {}

    def begin(self, session: str, scenario: str, turn: int) -> tuple[int, Mapping[int, str]]:
        """Count one more attempt at this turn; with how the session's earlier turns of
        this scenario were cut (what divergence needs)."""
        counts = self._attempts.get(session)
        if counts is None:
            counts = self._attempts[session] = {}
            if len(self._attempts) > self.max_sessions:
                oldest, _ = self._attempts.popitem(last=False)
                self._cuts.pop(oldest, None)
        else:
            self._attempts.move_to_end(session)
        key = (scenario, turn)
        counts[key] = attempt = counts.get(key, 0) + 1
        cuts = self._cuts.get(session)
        return attempt, (cuts.get(scenario, NO_CUTS) if cuts else NO_CUTS)

    def expected(self, session: str, scenario: str, turn: int) -> tuple[int, Mapping[int, str]]:
        """What `begin` would count and hand back now, without counting."""
        counts = self._attempts.get(session)
        attempt = counts.get((scenario, turn), 0) + 1 if counts is not None else 1
        cuts = self._cuts.get(session)
        return attempt, (cuts.get(scenario, NO_CUTS) if cuts else NO_CUTS)

    def cut(self, session: str, scenario: str, turn: int, how: str | None) -> None:
        """Record how this turn's latest delivery was cut short (None: it was whole)."""
        if how is None:
            by_turn = self._cuts.get(session, {}).get(scenario)
            if by_turn is not None:
                by_turn.pop(turn, None)
        else:
            self._cuts.setdefault(session, {}).setdefault(scenario, {})[turn] = how

    def reset(self, session: str | None = None) -> None:
        if session is None:
            self._attempts.clear()
            self._cuts.clear()
        else:
            self._attempts.pop(session, None)
            self._cuts.pop(session, None)

    def sessions(self) -> int:
        """How many sessions have attempt counters now."""
        return len(self._attempts)


class MemoryStore:
    """The store of one process: attempts and cuts in a `MemoryState`, run-time scenarios
    in the engine, stored Responses in the adapters' own stores. Nothing here suspends, so
    no other request runs between a request's `expect` and its `commit`."""

    url = MEMORY
    keeps_responses = False

    def __init__(self, engine: Engine, max_sessions: int) -> None:
        self.engine = engine
        self.state = MemoryState(max_sessions)

    def answer(
        self,
        engine: Engine,
        scenario: Scenario,
        session: str,
        parsed: Conversation,
        call_id: CallId | None,
        violations: tuple[Violation, ...],
    ) -> Answer:
        """`answer_turn` (state/store.py) in one plain call, the path every request of the
        default store takes: the same steps as `expect`, the answer and `commit`, without
        two coroutines and an `Expected` per request. Nothing suspends between the look and
        the count, so the count is exact; an attempt is counted only once it is answered."""
        plain = scenario.plain if engine.chaos is None else None  # (decided at load)
        if plain is None:
            conv = engine.joined(scenario, parsed, call_id)
        elif call_id is not None and plain.calls:  # (no seed, no keyed turn to locate)
            conv = rejoined(unmerged(parsed, scenario, call_id), scenario, call_id)
        else:
            conv = parsed
        state, name, turn = self.state, scenario.name, conv.turn
        # `expected`, then `begin` once answered, on one look-up of the session's counts
        counts = state._attempts.get(session)
        key = (name, turn)
        attempt = counts.get(key, 0) + 1 if counts is not None else 1
        by_scenario = state._cuts.get(session)
        cuts = by_scenario.get(name, NO_CUTS) if by_scenario else NO_CUTS
        found = None
        if plain is not None:
            found = engine.plain(scenario, conv, attempt, cuts, violations, call_id)
        if found is None:
            found = engine.answer(scenario, session, conv, attempt, cuts, violations, call_id)
        if counts is None:  # the session's first attempt: `begin` makes room for it
            state.begin(session, name, turn)
        else:  # (nothing suspended since the look: the count is still `attempt - 1`)
            counts[key] = attempt
            state._attempts.move_to_end(session)
        if found.cut != cuts.get(turn):
            state.cut(session, name, turn, found.cut)
        return found

    async def expect(self, session: str, scenario: str, turn: int) -> Expected:
        return Expected(*self.state.expected(session, scenario, turn))

    async def commit(
        self, session: str, scenario: Scenario, turn: int, expected: Expected, how: str | None
    ) -> Scenario | None:
        # Nothing suspended since `expect`: the store still has what it expected.
        state = self.state
        _, cuts = state.begin(session, scenario.name, turn)
        if how != cuts.get(turn):
            state.cut(session, scenario.name, turn, how)
        return None

    async def cut(
        self, session: str, scenario: Scenario, turn: int, counted: Counted, how: str | None
    ) -> None:
        # Never reached: nothing counts between `expect` and `commit` here (no `Counted`).
        self.state.cut(session, scenario.name, turn, how)

    async def refresh(self) -> None:
        return None  # every scenario this server serves was posted to it

    async def add(self, scenario: Scenario, text: str) -> bool:
        return self.engine.add(scenario)

    async def response(self, key: str) -> bytes | None:
        return None  # the adapter's own store is the only one (keeps_responses)

    async def keep_response(self, key: str, data: bytes) -> None:
        return None

    async def reset(self, session: str | None = None) -> None:
        self.state.reset(session)
