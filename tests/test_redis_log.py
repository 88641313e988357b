"""The fleet log's Lua scripts against a real redis-server, with hostile names: whatever
sessions and scenarios entries carry and whatever the limit, the log reads back as the
last `limit` entries in seq order, each filter finds exactly its entries, a cleared
session is gone, and no index key keeps a seq the ring no longer holds."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
import redis.asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllm.state import connect
from mockllm.state.redis_log import LOG_TTL, RedisLog

from .redis_server import RedisServer, redis_server

NAMES = st.text(min_size=1, max_size=12) | st.sampled_from(["a", "b:c", "*", "log:ring", "é"])
ENTRIES = st.lists(st.tuples(NAMES, st.none() | NAMES), min_size=1, max_size=30)


@pytest.fixture(scope="module")
def shared_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One redis-server for the module: hypothesis runs many examples per test."""
    with redis_server(tmp_path_factory.mktemp("redis")) as r:
        yield r


def line(i: int) -> str:
    return json.dumps({"seq": 0, "i": i})  # as entry_line writes: the seq first


async def scenario(url: str, entries: list[tuple[str, str | None]], limit: int) -> None:
    client = connect(url)
    try:
        await client.flushdb()
        log = RedisLog(client, url, "t", limit)
        given_seqs = await log.append([(line(i), s, c) for i, (s, c) in enumerate(entries)])
        assert given_seqs == list(range(1, len(entries) + 1))
        kept = list(enumerate(entries, 1))[-limit:]
        read = [json.loads(text) for text in await log.lines()]
        assert [(e["seq"], e["i"]) for e in read] == [(seq, seq - 1) for seq, _ in kept]
        for name in {s for _, (s, _) in kept} | {c for _, (_, c) in kept if c}:
            mine = [seq for seq, (s, _) in kept if s == name]
            assert [json.loads(t)["seq"] for t in await log.lines(session=name)] == mine
            theirs = [seq for seq, (_, c) in kept if c == name]
            assert [json.loads(t)["seq"] for t in await log.lines(scenario=name)] == theirs
        since = kept[len(kept) // 2][0]
        assert [json.loads(t)["seq"] for t in await log.lines(since=since)] == [
            seq for seq, _ in kept if seq > since
        ]
        await _no_stale_index(client, {seq for seq, _ in kept})
        first = kept[0][1][0]
        assert await log.clear(first) == sum(1 for _, (s, _) in kept if s == first)
        assert await log.lines(session=first) == []
        await _no_stale_index(client, {seq for seq, (s, _) in kept if s != first})
        assert await log.clear() == sum(1 for _, (s, _) in kept if s != first)
        assert await client.keys("t:log:*") == [b"t:log:seq"]  # the seq goes on
        assert 0 < await client.ttl("t:log:seq") <= LOG_TTL
    finally:
        await client.aclose()


async def _no_stale_index(client: redis.asyncio.Redis, kept: set[int]) -> None:
    """Every index names kept seqs only, and every kept seq has its line."""
    for key in await client.keys("t:log:*"):
        if key.startswith((b"t:log:session:", b"t:log:scenario:")) or key == b"t:log:ring":
            members = {int(m) for m in await client.zrange(key, 0, -1)}
            assert members and members <= kept, key
    assert {int(k) for k in await client.hkeys("t:log:lines")} == kept


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries=ENTRIES, limit=st.integers(1, 12))
def test_the_log_reads_back_filters_trims_and_clears_whatever_the_names(
    shared_redis: RedisServer, entries: list[tuple[str, str | None]], limit: int
) -> None:
    asyncio.run(scenario(shared_redis.url(), entries, limit))
