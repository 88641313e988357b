"""The fleet log is never silently evicted (issue 24): its keys carry no TTL, so no
`volatile-*` policy picks them (and `noeviction`, docs/scale.md's, picks no key); when they
go all the same (a FLUSHALL, a Redis restarted empty, an `allkeys-*` policy), a replica that finds them gone says so loudly — a 503 from
the log routes and a line on stderr — and never gives a seq it was given before."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import pytest

from tests.support import ServerProcess, running_server
from tests.support.redis_server import RedisServer

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def pair(redis: RedisServer) -> Iterator[list[ServerProcess]]:
    with ExitStack() as stack:
        yield [stack.enter_context(running_server("--state", redis.url())) for _ in range(2)]


def chat(server: ServerProcess, session: str) -> None:
    url = f"{server.url}/s/hello/{session}/v1/chat/completions"
    assert httpx.post(url, json=BODY, timeout=20).status_code == 200


def test_log_keys_have_no_ttl(redis: RedisServer, pair: list[ServerProcess], session: str) -> None:
    for server in pair:
        chat(server, session)
    keys = redis.command("KEYS", "mockllm:log:*")
    assert keys, "the log is on Redis"
    assert {key: redis.command("TTL", key) for key in keys} == {key: -1 for key in keys}


def test_a_log_that_lost_its_keys_says_so_and_never_repeats_a_seq(
    redis: RedisServer, pair: list[ServerProcess], session: str
) -> None:
    one, two = pair
    for _ in range(3):
        chat(one, session)
    chat(two, session)
    before = [e["seq"] for e in one.requests(session=session)]
    assert before == [1, 2, 3, 4]
    redis.command("FLUSHALL")  # what an eviction of every log key, or a restart, leaves
    chat(two, session + "-after")  # `two` was given seq 4: it finds its log gone
    chat(one, session + "-after")
    for server in pair:
        r = server.http.get("/_mockllm/requests", timeout=10)
        assert r.status_code == 503, r.text[:300]
        assert "lost its keys" in r.json()["error"]["message"]
        assert server.http.get("/_mockllm/verdict", params={"session": session}).status_code == 503
    cleared = one.http.delete("/_mockllm/requests", headers={"content-type": "application/json"})
    assert cleared.status_code == 200
    chat(one, session + "-again")
    seqs = [e["seq"] for e in one.requests()]
    assert seqs == sorted(set(seqs)) and min(seqs) > max(before), seqs  # none given again
    printed = two.printed()
    assert "ERROR: the fleet log on redis://127.0.0.1" in printed and "lost its keys" in printed
