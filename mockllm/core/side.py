"""Side requests: what a harness sends beside its agent loop (a title, a router, a memory
agent), found by the scenario's `side_requests` rules (docs/scenarios.md, "Side requests").
A side request is never a turn nor an attempt of one: it is answered by its rule alone."""

from __future__ import annotations

from dataclasses import dataclass

from mockllm.core.conversation import Conversation
from mockllm.core.matching import describe, differences
from mockllm.core.scenario import Scenario, SideRequest


@dataclass(frozen=True, slots=True)
class SideMatch:
    """The side request (`side_requests:`) a request matched, and why."""

    index: int  # its place among the scenario's side requests
    rule: SideRequest
    why: str  # the rule that matched, in words, for the log

    @property
    def turn(self) -> int:
        """What ids are derived from in place of a turn: negative, so never a turn's."""
        return -1 - self.index

    def to_json(self) -> dict[str, str]:
        out = {"name": self.rule.name, "why": self.why}
        if self.rule.origin:
            out["rules"] = self.rule.origin
        return out


def side_request(scenario: Scenario, conv: Conversation, api: str) -> SideMatch | None:
    """The first side request rule this request meets, if any."""
    for index, rule in enumerate(scenario.side_requests):
        if not differences(rule.match, conv, api):
            origin = f" ({rule.origin})" if rule.origin else ""
            why = f"side request {rule.name!r}{origin}: {describe(rule.match)}"
            return SideMatch(index, rule, why)
    return None
