"""This server's side of a shared store: run-time scenarios kept in step with the other
replicas, and the attempt counted against the scenarios this replica knows.

A scenario posted to any replica is stored in Redis under a new version (unique to that
POST); counting an attempt reads the version in the same round trip, and a replica that is
behind loads the scenarios before it answers (docs/scale.md).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from mockllm.core.engine import Engine
from mockllm.core.scenario import Scenario
from mockllm.errors import ScenarioError
from mockllm.loading.loader import load_text
from mockllm.state.redis_store import RedisStore

SOURCE = "<POST /_mockllm/scenarios>"


class Shared:
    def __init__(self, store: RedisStore, engine: Engine) -> None:
        self.store, self.engine = store, engine
        self.version = "?"  # never a real version: the first request loads the scenarios
        self._texts: dict[str, str] = {}  # the run-time scenarios loaded, as posted

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
