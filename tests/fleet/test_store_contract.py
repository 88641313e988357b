"""One contract for both stores behind `state/store.py`'s `Store`: this process's memory and
Redis (serving/redis_store.py on a real redis-server), each driven through `answer_turn`, the one
step the exchange takes, and Redis also through its own `RedisStore.answer_turn` (what the
exchange calls on Redis: the same steps in one coroutine). "Two servers" are two replicas on
one Redis, and in memory the one process that is the whole store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import pytest

from mockllm.core.conversation import Conversation, Message
from mockllm.core.engine import Engine
from mockllm.loading.loader import load_text
from mockllm.state.store import Store, answer_turn
from tests.support.redis_server import RedisServer
from tests.unit.stores import engine_of

TEXT = "name: contract\nturns:\n  - reply: {text: first}\n  - reply: {text: second}\n"
ASK = Conversation("m", (Message("user", "hi", at="messages[0]"),))


Turns = Callable[..., Awaitable[tuple[Any, Any]]]  # answer_turn without its store


class Server:
    """One server of a store: the store as the server sees it, and the server's engine."""

    def __init__(self, store: Store, engine: Engine, turns: Turns | None = None) -> None:
        self.store, self.engine = store, engine
        self.turns = turns or partial(answer_turn, store)

    async def attempt(self, session: str, conv: Conversation = ASK) -> tuple[int, int]:
        """One request through `answer_turn` (or the store's own): (turn, attempt)."""
        found = self.engine.find("contract")
        scenario, answer = await self.turns(self.engine, found, session, conv, None, lambda _: ())
        assert scenario is found and answer.error is None, answer.error
        return answer.turn, answer.attempt


Servers = tuple[Server, Server]
Check = Callable[[Servers], Awaitable[Any]]


def _engine() -> Engine:
    return engine_of(load_text(TEXT))


class OnStore:
    """Runs a check on two servers of a fresh store, in one event loop."""

    def __init__(self, kind: str, redis: RedisServer | None) -> None:
        self.kind, self.redis = kind, redis

    def __call__(self, check: Check) -> Any:
        return asyncio.run(self._run(check))

    async def _run(self, check: Check) -> Any:
        if self.redis is None:
            from mockllm.state.memory import MemoryStore

            engine = _engine()
            store = MemoryStore(engine, 100)  # one process: the whole store
            return await check((Server(store, engine), Server(store, engine)))
        from mockllm.serving.redis_store import RedisStore
        from mockllm.state.redis_state import RedisState

        engines = _engine(), _engine()
        shared = [RedisStore(RedisState(self.redis.url(), "contract", 60), e) for e in engines]
        try:
            own = self.kind == "redis, its own answer_turn"
            one, two = (
                Server(r, e, r.answer_turn if own else None)
                for r, e in zip(shared, engines, strict=True)
            )
            return await check((one, two))
        finally:
            for replica in shared:
                await replica.state.close()


@pytest.fixture(params=["memory", "redis", "redis, its own answer_turn"])
def on_store(request: pytest.FixtureRequest) -> OnStore:
    redis = None if request.param == "memory" else request.getfixturevalue("redis")
    return OnStore(request.param, redis)


def test_attempts_count_per_session_and_turn_whichever_server_answers(on_store: OnStore) -> None:
    async def check(servers: Servers) -> list[tuple[int, int]]:
        one, two = servers
        later = Conversation("m", (*ASK.messages, Message("assistant", "first", at="x")))
        return [
            await one.attempt("a"),
            await two.attempt("a"),  # on Redis: two's guess is stale, so it answers twice
            await one.attempt("a"),
            await two.attempt("b"),
            await one.attempt("a", later),
            await two.attempt("a", later),
        ]

    assert on_store(check) == [(0, 1), (0, 2), (0, 3), (0, 1), (1, 1), (1, 2)]


def test_a_cut_is_seen_by_the_next_turn_until_a_whole_delivery(on_store: OnStore) -> None:
    async def check(servers: Servers) -> list[Any]:
        one, two = servers
        store, scenario, seen = one.store, one.engine.find("contract"), []
        await store.refresh()  # up to date with the store: the first commit is counted
        expected = await store.expect("s", "contract", 0)
        assert await store.commit("s", scenario, 0, expected, "truncate on attempt 1") is None
        seen.append(dict((await store.expect("s", "contract", 1)).cuts))
        seen.append((await store.expect("s", "contract", 0)).attempt)
        expected = await store.expect("s", "contract", 0)
        assert await store.commit("s", scenario, 0, expected, None) is None  # whole this time
        seen.append(dict((await store.expect("s", "contract", 1)).cuts))
        await two.attempt("s")  # what the other server knows after it counted attempt 3
        seen.append((await two.store.expect("s", "contract", 0)).attempt)
        return seen

    assert on_store(check) == [{0: "truncate on attempt 1"}, 2, {}, 4]


def test_reset_forgets_one_session_or_all(on_store: OnStore) -> None:
    async def check(servers: Servers) -> list[tuple[int, int]]:
        one, two = servers
        for session in ("a", "a", "b"):
            await one.attempt(session)
        await two.store.reset("a")
        counted = [await one.attempt("a"), await one.attempt("b")]
        await two.store.reset()
        return [*counted, await one.attempt("b")]

    assert on_store(check) == [(0, 1), (0, 2), (0, 1)]


def test_a_posted_scenario_is_served_by_every_server_after_a_refresh(on_store: OnStore) -> None:
    async def check(servers: Servers) -> tuple[bool, bool, str]:
        one, two = servers
        text = "name: posted\nturns:\n  - reply: {text: posted}\n"
        first = await one.store.add(load_text(text), text)
        again = await one.store.add(load_text(text), text)
        await two.store.refresh()
        return first, again, two.engine.find("posted").name

    assert on_store(check) == (False, True, "posted")


def test_responses_are_kept_for_the_other_servers_only_by_a_store_that_keeps_them(
    on_store: OnStore,
) -> None:
    async def check(servers: Servers) -> tuple[bool, bytes | None]:
        one, two = servers
        if one.store.keeps_responses:
            await one.store.keep_response("resp_1", b'{"kept":1}')
        return one.store.keeps_responses, await two.store.response("resp_1")

    # In memory the adapter's own store is the only one: the exchange copies nothing.
    kept = (False, None) if on_store.kind == "memory" else (True, b'{"kept":1}')
    assert on_store(check) == kept
