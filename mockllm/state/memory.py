"""Attempt counters and cut deliveries in this process's memory: the default store.

Synchronous on purpose: the default serving path pays no await and no round trip for it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

from mockllm.core.conversation import Conversation
from mockllm.core.divergence import CallId
from mockllm.core.engine import Answer, Engine
from mockllm.core.scenario import Scenario
from mockllm.core.validation import Violation

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


def answer_in_memory(
    engine: Engine,
    state: MemoryState,
    scenario: Scenario,
    session: str,
    conv: Conversation,
    violations: tuple[Violation, ...] = (),
    call_id: CallId | None = None,
) -> Answer:
    """Count the attempt, answer, and record the cut: the whole exchange with the store,
    without an await."""
    joined = engine.joined(scenario, conv, call_id)
    attempt, cuts = state.begin(session, scenario.name, joined.turn)
    answer = engine.answer(scenario, session, joined, attempt, cuts, violations, call_id)
    if answer.cut != cuts.get(answer.turn):
        state.cut(session, scenario.name, answer.turn, answer.cut)
    return answer
