"""Shared state under concurrency (issue 36): 32 clients at once on one session of a real
`mockllm serve --state redis://` are all answered, never a 503, and counted exactly: the
count is one atomic step in Redis (serving/redis_store.py), not an optimistic loop that gives
up. The same requests in memory are the other side: there nothing can race at all."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import pytest

from tests.support import ServerProcess, running_server
from tests.support.redis_server import RedisServer

CLIENTS = 32
BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}


async def _at_once(server: ServerProcess, path: str, each: int) -> list[httpx.Response]:
    """CLIENTS clients, each on its own connection, sending `each` requests in a row."""
    limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
    async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=30) as client:

        async def one_client() -> list[httpx.Response]:
            return [await client.post(path, json=BODY) for _ in range(each)]

        done = await asyncio.gather(*(one_client() for _ in range(CLIENTS)))
    return [r for answers in done for r in answers]


@pytest.mark.parametrize("state", ["redis", "memory"])
def test_32_clients_on_one_session_are_all_answered_and_counted_exactly(
    redis: RedisServer, session: str, state: str
) -> None:
    flags = ("--state", redis.url()) if state == "redis" else ()
    with running_server(*flags, "--quiet") as server:
        answers = asyncio.run(_at_once(server, f"/s/hello/{session}/v1/chat/completions", 8))
        statuses = Counter(r.status_code for r in answers)
        assert statuses == {200: CLIENTS * 8}, [r.text for r in answers if r.status_code != 200]
        logged = server.requests(session=session)
    # every request its own attempt at turn 0: 1..256, none twice, none skipped
    assert sorted(e["attempt"] for e in logged) == list(range(1, CLIENTS * 8 + 1))
    if state == "redis":
        counted = redis.command("HGET", f"mockllm:attempts:{session}", "0\x1fhello")
        assert int(counted) == CLIENTS * 8


def test_a_times_1_fault_fires_once_among_32_requests_at_once(
    redis: RedisServer, session: str
) -> None:
    """`slow-down` answers its first attempt with a scripted 429 (times: 1): of 32 requests
    counted at once, exactly the one that is attempt 1 gets it, whichever lost the race."""
    with running_server("--state", redis.url(), "--quiet") as server:
        answers = asyncio.run(_at_once(server, f"/s/slow-down/{session}/v1/chat/completions", 1))
        logged = server.requests(session=session)
    assert Counter(r.status_code for r in answers) == {429: 1, 200: CLIENTS - 1}
    by_attempt = {e["attempt"]: e["response"]["status"] for e in logged}
    assert sorted(by_attempt) == list(range(1, CLIENTS + 1))
    assert by_attempt[1] == 429 and set(by_attempt.values()) == {429, 200}


def _commandstats(redis: RedisServer) -> dict[str, int]:
    """Calls per command since the last CONFIG RESETSTAT, from INFO commandstats."""
    info = redis.command("INFO", "commandstats")
    return {name.removeprefix("cmdstat_"): int(stats["calls"]) for name, stats in info.items()}


def test_32_requests_at_once_on_one_replica_are_each_counted_in_one_write(
    redis: RedisServer, session: str
) -> None:
    """A replica knows what it has counted before Redis answers, and its commands reach
    Redis in the order it sent them (one pipelined connection, state/redis_line.py): 32
    requests at once on one session each expect the right attempt, so none is counted
    as another attempt than it was answered for. That path reads the session's cuts back
    (HGETALL), answers again and perhaps writes its cut: here it never runs. (A replica's
    first request loads the scenarios' version: it goes first, on a session of its own.)"""
    with running_server("--state", redis.url(), "--quiet") as server:
        assert server.http.post("/s/hello/warm/v1/chat/completions", json=BODY).status_code == 200
        redis.command("CONFIG", "RESETSTAT")
        answers = asyncio.run(_at_once(server, f"/s/hello/{session}/v1/chat/completions", 4))
        calls = _commandstats(redis)
        logged = server.requests(session=session)
    assert Counter(r.status_code for r in answers) == {200: CLIENTS * 4}
    assert sorted(e["attempt"] for e in logged) == list(range(1, CLIENTS * 4 + 1))
    assert calls["hincrby"] == CLIENTS * 4  # one count per request, in its one script call
    assert "hgetall" not in calls, calls  # no request was counted as another attempt


def test_two_replicas_at_once_on_one_session_are_counted_exactly(
    redis: RedisServer, session: str
) -> None:
    """Across replicas the counts do race: a request counted as another attempt than its
    replica expected answers that attempt (the other side of the test above)."""
    path = f"/s/hello/{session}/v1/chat/completions"
    with (
        running_server("--state", redis.url(), "--quiet") as one,
        running_server("--state", redis.url(), "--quiet") as two,
    ):
        redis.command("CONFIG", "RESETSTAT")

        async def both() -> list[httpx.Response]:
            first, second = await asyncio.gather(_at_once(one, path, 4), _at_once(two, path, 4))
            return first + second

        answers = asyncio.run(both())
        calls = _commandstats(redis)
        logged = one.requests(session=session)
    assert Counter(r.status_code for r in answers) == {200: 2 * CLIENTS * 4}
    assert sorted(e["attempt"] for e in logged) == list(range(1, 2 * CLIENTS * 4 + 1))
    assert calls["hincrby"] == 2 * CLIENTS * 4
