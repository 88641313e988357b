"""A replica without a --log file does not hold a response until Redis has stored its log
entry (log/shared.py): the entry's append is written to Redis before the response's last
byte leaves, and its reply is read when it comes. So another replica asked right after the
response already finds the entry, entries of concurrent requests keep one gap-free seq, and
an append Redis refuses is told to the log's readers (a 503) rather than lost silently."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx

from tests.support import BUNDLED, ServerProcess, running_command
from tests.support.redis_server import RedisServer

BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
CLIENTS = 32


@contextmanager
def unlogged(*args: str) -> Iterator[ServerProcess]:
    """`mockllm serve` with no --log file (tests.support.running_server always gives one)."""
    with running_command("serve", "--quiet", "--scenarios", str(BUNDLED), *args) as server:
        yield server


def test_another_replica_finds_each_entry_as_soon_as_the_response_is_back(
    redis: RedisServer, session: str
) -> None:
    with ExitStack() as stack:
        one, two = (stack.enter_context(unlogged("--state", redis.url())) for _ in range(2))
        for i in range(20):
            answer = one.http.post(f"/s/hello/{session}/v1/chat/completions", json=BODY)
            assert answer.status_code == 200
            seen = two.requests(session=session)  # the other replica: no flush of its own
            assert [e["attempt"] for e in seen] == list(range(1, i + 2))


def test_entries_of_concurrent_requests_keep_one_gap_free_seq(
    redis: RedisServer, session: str
) -> None:
    path = f"/s/hello/{session}/v1/chat/completions"

    async def at_once(server: ServerProcess) -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
        async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=30) as client:

            async def one_client() -> list[httpx.Response]:
                return [await client.post(path, json=BODY) for _ in range(4)]

            done = await asyncio.gather(*(one_client() for _ in range(CLIENTS)))
        return [r for answers in done for r in answers]

    with unlogged("--state", redis.url()) as server:
        answers = asyncio.run(at_once(server))
        logged = server.requests(session=session)
    assert Counter(r.status_code for r in answers) == {200: CLIENTS * 4}
    assert [e["seq"] for e in logged] == list(range(1, CLIENTS * 4 + 1))
    assert sorted(e["attempt"] for e in logged) == list(range(1, CLIENTS * 4 + 1))
    # Each attempt's own body (its own ids), logged as the very bytes sent
    assert sorted(e["response"]["body"] for e in logged) == sorted(r.text for r in answers)
    assert len({r.json()["id"] for r in answers}) == CLIENTS * 4


def test_an_append_redis_refuses_is_told_to_the_logs_readers(
    redis: RedisServer, session: str
) -> None:
    """A user whose ACL lets it count (the COMMIT script) but not append (ZADD, in the log's
    script): the request is answered, the log's read is a 503 naming the refusal (before,
    it read a log without the entry), and once Redis accepts the append the entry is there."""
    redis.command("ACL", "SETUSER", "mock", "on", ">pw", "~*", "&*", "+@all", "-zadd")
    url = f"redis://mock:pw@127.0.0.1:{redis.port}/0"
    with unlogged("--state", url) as server:
        answer = server.http.post(f"/s/hello/{session}/v1/chat/completions", json=BODY)
        assert answer.status_code == 200
        refused = server.http.get("/_mockllm/requests", params={"session": session})
        assert refused.status_code == 503, refused.text
        message = refused.json()["error"]["message"]
        assert "is unreachable" in message and "can't run this command" in message, message
        assert "pw" not in message  # the password stays out of messages
        redis.command("ACL", "SETUSER", "mock", "+zadd")
        logged = server.requests(session=session)
        printed = server.printed()
    assert [e["attempt"] for e in logged] == [1]
    assert "log entries wait here until it is back" in printed
    assert "is back; log written" in printed
