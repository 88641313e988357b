"""The store seam: what a store of attempts, cuts, run-time scenarios and stored responses
implements (`Store`), and the one step that counts an attempt and answers it (`answer_turn`).

Two stores implement it: this process's memory (state/memory.py, the default) and Redis
behind serving/redis_store.py. Every method is a coroutine; the memory store's never suspend, so
the default path pays the awaits (about 55 ns each, docs/design.md "The store seam") and no
event-loop round trip.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from mockllm.core.conversation import Conversation
from mockllm.core.divergence import CallId
from mockllm.core.engine import Answer, Engine
from mockllm.core.scenario import Scenario
from mockllm.core.validation import Violation
from mockllm.core.values import value
from mockllm.state import StoreBusy

# Times one request loads scenarios posted meanwhile (on another server) and answers again
# before it gives up with a 503 saying so: only a POST between its read and its count does it.
TRIES = 8


@value  # built per request: no frozen dataclass's __setattr__ per field (core/values.py)
class Expected:
    """What a store expects of a turn's next attempt: the answer is computed on it, and
    counted only if the store still agrees when it commits."""

    attempt: int  # the attempt this request will be, if nobody counts one meanwhile
    cuts: Mapping[int, str]  # how the session's earlier turns of the scenario were cut
    seen: object = None  # the store's own record of what it expected (serving/redis_store.py)


@value  # built per request (core/values.py)
class Counted:
    """`commit`'s word that it counted an attempt other than the expected one (another
    request counted meanwhile): the attempt this request is, and the session's cuts as the
    store has them now. The answer is computed on them, and its cut recorded with `cut`."""

    attempt: int
    cuts: Mapping[int, str]
    seen: object = None  # the store's own record of it (serving/redis_store.py)


class Store(Protocol):
    url: str  # what messages name it by ("memory", or the Redis URL, redacted when shown)
    # True: the store keeps the Responses a server stored, for the others (the adapter's
    # own store is a copy, loaded before its parse and handed over after the render).
    # False: the adapter's own store is the only one, and nothing is copied.
    keeps_responses: bool

    async def expect(self, session: str, scenario: str, turn: int) -> Expected:
        """The attempt this request is expected to be at `turn`, as this server knows it
        (no round trip)."""
        ...

    async def commit(
        self, session: str, scenario: Scenario, turn: int, expected: Expected, how: str | None
    ) -> Scenario | Counted | None:
        """Count an attempt at the turn, in one atomic step: with how it was cut (None:
        whole) in the same write if the store still agrees with `expected`: None then. If
        another request counted meanwhile, the attempt is counted all the same and comes
        back as `Counted`, its cut not recorded (the caller answers it and calls `cut`).
        If scenarios were posted meanwhile (Redis: another server), nothing is written and
        the scenario to answer again on comes back (replaced if it was), checked against
        the version just loaded; `answer_turn` gives up with a 503 after `TRIES` of them.
        A `StoreUnavailable` says in `consumed` whether the attempt may have counted."""
        ...

    async def cut(
        self, session: str, scenario: Scenario, turn: int, counted: Counted, how: str | None
    ) -> None:
        """Record how the `counted` attempt was cut (None: whole), unless the store already
        has that or a later attempt of the turn was counted meanwhile."""
        ...

    async def refresh(self) -> None:
        """Load the run-time scenarios other servers posted since this one last looked."""
        ...

    async def add(self, scenario: Scenario, text: str) -> bool:
        """Serve a scenario posted here (`text`, its YAML), on every server of the store;
        True if it replaced one of the same name."""
        ...

    async def response(self, key: str) -> bytes | None:
        """A stored response another server kept (only when `keeps_responses`)."""
        ...

    async def keep_response(self, key: str, data: bytes) -> None:
        """Keep a response for the other servers (only when `keeps_responses`)."""
        ...

    async def reset(self, session: str | None = None) -> None:
        """Forget attempts and cuts of `session`, or of all and every stored response."""
        ...


async def answer_turn(
    store: Store,
    engine: Engine,
    scenario: Scenario,
    session: str,
    parsed: Conversation,
    call_id: CallId | None,
    violations: Callable[[Scenario], tuple[Violation, ...]],
) -> tuple[Scenario, Answer]:
    """Count the attempt, answer it, record how it was cut: the answer is computed for the
    attempt the store expects, then counted with its cut in one write. In memory nothing
    can count meanwhile (nothing suspends), so it is one pass; on Redis one round trip when
    this server saw the session last; when another request counted meanwhile the count
    stands (exact under any concurrency, no retry) and the answer is computed again for the
    attempt it is, plus a round trip to record its cut if it has one (serving/redis_store.py)."""
    for _ in range(TRIES):
        conv = engine.joined(scenario, parsed, call_id)
        expected = await store.expect(session, scenario.name, conv.turn)
        found = engine.answer(
            scenario, session, conv, expected.attempt, expected.cuts, violations(scenario), call_id
        )
        again = await store.commit(session, scenario, conv.turn, expected, found.cut)
        if again is None:
            return scenario, found
        if isinstance(again, Counted):  # the attempt it really is
            found = engine.answer(
                scenario, session, conv, again.attempt, again.cuts, violations(scenario), call_id
            )
            await store.cut(session, scenario, conv.turn, again, found.cut)
            return scenario, found
        scenario = again
    raise gave_up(store.url)


def gave_up(url: str) -> StoreBusy:
    """The 503 of a request that met `TRIES` posts of run-time scenarios in a row."""
    return StoreBusy(
        url,
        f"its run-time scenarios were posted anew {TRIES} times while this request was "
        "answered; nothing was counted: send it again",
    )
