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

from mockllm.log.shared import SharedJournal
from mockllm.state import connect
from mockllm.state.redis_log import BATCHES, PAGE, RedisLog
from tests.support.hypothesis_profiles import examples
from tests.support.journals import opened
from tests.support.redis_server import RedisServer, redis_server

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
        given_seqs = await log.append(
            [(line(i), s, c) for i, (s, c) in enumerate(entries)], "batch-1"
        )
        assert given_seqs == list(range(1, len(entries) + 1))
        kept = list(enumerate(entries, 1))[-limit:]
        read = [json.loads(text) for text in await log.lines()]
        assert [(e["seq"], e["i"]) for e in read] == [(seq, seq - 1) for seq, _ in kept]
        for name in {s for _, (s, _) in kept} | {c for _, (_, c) in kept if c}:
            mine = [seq for seq, (s, _) in kept if s == name]
            assert [json.loads(t)["seq"] for t in await log.lines(session=name)] == mine
            theirs = [seq for seq, (_, c) in kept if c == name]
            assert [json.loads(t)["seq"] for t in await log.lines(scenario=name)] == theirs
            for other in {c for _, (_, c) in kept if c}:  # both filters at once
                both = [seq for seq, (s, c) in kept if s == name and c == other]
                found = await log.lines(session=name, scenario=other)
                assert [json.loads(t)["seq"] for t in found] == both
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
        left = await client.keys("t:log:*")
        # the seq goes on, with the log's epoch and the batches remembered
        assert sorted(left) == [
            b"t:log:batch-order",
            b"t:log:batches",
            b"t:log:epoch",
            b"t:log:seq",
        ]
        for key in left:
            assert await client.ttl(key) == -1  # no TTL: no eviction policy takes them
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
    max_examples=examples(40),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(entries=ENTRIES, limit=st.integers(1, 12))
def test_the_log_reads_back_filters_trims_and_clears_whatever_the_names(
    shared_redis: RedisServer, entries: list[tuple[str, str | None]], limit: int
) -> None:
    asyncio.run(scenario(shared_redis.url(), entries, limit))


def test_a_batch_sent_again_is_stored_once(redis: RedisServer) -> None:
    """A reply lost on the way back (Redis slow, a connection dropped) makes the writer send
    the batch again: the same token gets the seqs of the first time, and no second copy."""

    async def story() -> None:
        log = RedisLog(connect(redis.url()), redis.url(), "t", 100)
        assert await log.append([(line(1), "s", None), (line(2), "s", None)], "p:1") == [1, 2]
        assert await log.append([(line(1), "s", None), (line(2), "s", None)], "p:1") == [1, 2]
        assert await log.append([(line(3), "s", None)], "p:2") == [3]
        assert [json.loads(t)["i"] for t in await log.lines()] == [1, 2, 3]
        assert await log.client.hget("t:log:batches", "p:1") == b"1,2"
        for i in range(BATCHES):  # the oldest tokens are forgotten past BATCHES
            await log.append([(line(i), "s", None)], f"q:{i}")
        assert await log.client.hlen("t:log:batches") == BATCHES
        await log.client.aclose()

    asyncio.run(story())


def test_a_big_log_is_read_a_page_at_a_time_in_seq_order(redis: RedisServer) -> None:
    """More entries than a page, with a session and scenario filter that finds few on each
    page: every read returns them all, in order (the Lua read built it in one reply)."""

    async def story() -> None:
        log = RedisLog(connect(redis.url()), redis.url(), "t", 10 * PAGE)
        total = 2 * PAGE + 7
        entries = [(line(i), f"s{i % 2}", f"c{i % 3}") for i in range(total)]
        await log.append(entries[:PAGE], "p:1")
        await log.append(entries[PAGE:], "p:2")
        assert [json.loads(t)["i"] for t in await log.lines()] == list(range(total))
        assert [json.loads(t)["i"] for t in await log.lines(since=PAGE + 3)] == list(
            range(PAGE + 3, total)
        )
        both = [json.loads(t)["i"] for t in await log.lines(session="s1", scenario="c2")]
        assert both == [i for i in range(total) if i % 2 == 1 and i % 3 == 2]
        touched = [json.loads(t)["i"] for t in await log.touched_lines(total - 1)]
        assert touched == [i for i in range(total) if i % 2 == (total - 1) % 2]
        await log.client.aclose()

    asyncio.run(story())


def test_a_stopping_process_writes_what_waits_on_a_client_of_its_own(
    redis: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server's event loop is gone (its writer cancelled mid-write): `shutdown` writes
    the entries still waiting from a loop and a connection of its own, once each."""
    log = SharedJournal(RedisLog(connect(redis.url()), redis.url(), "t", 100), None, 1000)

    async def loop_ends_mid_write() -> None:
        for name in ("a", "b"):
            log.close(opened(log, name))
        await asyncio.sleep(0)
        assert log._writer is not None
        log._writer.cancel()  # as the end of asyncio.run does, with the write under way
        await log.store.aclose()  # (this test's own: no connection left to a closed loop)

    asyncio.run(loop_ends_mid_write())
    log.shutdown()
    assert "never reached" not in capsys.readouterr().err

    async def read() -> list[str]:
        reader = RedisLog(connect(redis.url()), redis.url(), "t", 100)
        try:
            return await reader.lines()
        finally:
            await reader.aclose()

    assert [json.loads(t)["session"] for t in asyncio.run(read())] == ["a", "b"]
