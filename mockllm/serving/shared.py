"""This server's side of a shared store: run-time scenarios kept in step with the other
replicas, and the attempt counted against the scenarios this replica knows.

A scenario posted to any replica is stored in Redis under a new version (unique to that
POST); counting an attempt reads the version in the same round trip, and a replica that is
behind loads the scenarios before it answers (docs/scale.md).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

from mockllm.core.cache import Lru
from mockllm.core.conversation import Conversation
from mockllm.core.divergence import CallId
from mockllm.core.engine import Answer, Engine
from mockllm.core.scenario import Scenario
from mockllm.core.validation import Violation
from mockllm.errors import ScenarioError
from mockllm.loading.loader import load_text
from mockllm.state import StoreUnavailable
from mockllm.state.redis_store import Cuts, RedisStore, cuts_of

SOURCE = "<POST /_mockllm/scenarios>"
TRIES = 8  # answers computed for one request before it gives up on a turn others keep counting
Known = tuple[dict[str, int], Cuts]  # a session's attempts by turn field, and its cuts


class Shared:
    def __init__(self, store: RedisStore, engine: Engine) -> None:
        self.store, self.engine = store, engine
        self.version = "?"  # never a real version: the first request loads the scenarios
        self._texts: dict[str, str] = {}  # the run-time scenarios loaded, as posted
        # What this replica last saw of each session: the guess each answer is computed on
        self._known: Lru[Known] = Lru(4096)

    async def answer(
        self,
        scenario: Scenario,
        session: str,
        parsed: Conversation,
        call_id: CallId | None,
        violations: Callable[[Scenario], tuple[Violation, ...]],
    ) -> tuple[Scenario, Answer]:
        """`answer_in_memory` on the shared store: the answer computed for the attempt this
        replica expects, then counted and its cut recorded in one write that happens only
        if the store agrees (`RedisStore.commit`); else computed again on the state the
        store sent back. One round trip when this replica saw the session last (a harness
        that keeps to one replica, or a turn's first attempt), two when another counted."""
        attempts, cuts = self._known.get(session) or ({}, {})
        version = self.version
        for _ in range(TRIES):
            conv = self.engine.joined(scenario, parsed, call_id)
            field = f"{conv.turn}\x1f{scenario.name}"
            before = attempts.get(field, 0)
            found = violations(scenario)
            answer = self.engine.answer(
                scenario, session, conv, before + 1, cuts_of(cuts, scenario.name), found, call_id
            )
            try:
                done, version, count, now = await self.store.commit(
                    session, scenario.name, conv.turn, version, before, cuts, answer.cut
                )
            except StoreUnavailable as lost:
                if not lost.refused:  # a write Redis refused (full: OOM) consumed nothing
                    lost.consumed = (conv.turn, before + 1)
                raise
            if done == 1:
                key = field.encode()
                kept = {k: v for k, v in cuts.items() if k != key}
                if answer.cut is not None:
                    kept[key] = answer.cut.encode()
                self._known.put(session, ({**attempts, field: count}, kept))
                return scenario, answer
            if done == -1:  # scenarios posted meanwhile: load them, then count unchecked
                await self.refresh()
                scenario, version = self.engine.find(scenario.name), ""
                continue
            assert now is not None
            attempts, cuts = {**attempts, field: count}, now
        raise StoreUnavailable(self.store.url, f"turn counted by others {TRIES} times meanwhile")

    async def begin(
        self, session: str, scenario: str, turn: int, checked: bool = True
    ) -> tuple[int, Mapping[int, str]] | None:
        """Count an attempt: (attempt, cut turns); None when `checked` and this replica's
        scenarios are behind (nothing counted: `refresh`, then count again unchecked)."""
        version = self.version if checked else ""
        attempt, cuts, _ = await self.store.begin(session, scenario, turn, version)
        return None if attempt == 0 else (attempt, cuts)

    async def refresh(self) -> None:
        """Load the run-time scenarios posted since this replica last looked (one short
        read when none was: the texts come only with a new version)."""
        version, texts = await self.store.scenarios(self.version)
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
        replaced = await self.store.add_scenario(scenario.name, text)
        replaced = self.engine.add(scenario) or replaced
        self._texts[scenario.name] = text
        await self.refresh()
        return replaced
