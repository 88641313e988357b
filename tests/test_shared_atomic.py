"""An honest 503 never spends a scripted fault (issue 24): a real `mockllm serve` on a real
redis-server behind a proxy that loses the store between the commands of one request. The
attempt and its cut are one write, so a request the store fails is either not counted at all
(the `times: 1` 429 still comes next) or the 503's log entry names the attempt it consumed."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from .redis_proxy import Proxy, redis_proxy
from .redis_server import RedisServer
from .support import ServerProcess, running_server

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def proxied(redis: RedisServer) -> Iterator[tuple[Proxy, ServerProcess]]:
    with redis_proxy(redis.port) as proxy, running_server("--state", proxy.url()) as server:
        yield proxy, server


def chat(server: ServerProcess, scenario: str, session: str) -> httpx.Response:
    url = f"{server.url}/s/{scenario}/{session}/v1/chat/completions"
    return httpx.post(url, json=BODY, timeout=20)


@pytest.mark.parametrize("forwarded", [0, 1])
def test_a_503_never_spends_the_scripted_fault(
    proxied: tuple[Proxy, ServerProcess], session: str, forwarded: int
) -> None:
    proxy, server = proxied
    assert chat(server, "hello", session + "-warm").status_code == 200  # scripts loaded
    proxy.fail_after(forwarded)  # the store is lost after this many of the request's scripts
    first = chat(server, "slow-down", session)
    proxy.heal()
    statuses = [first.status_code]
    while statuses[-1] != 200 and len(statuses) < 5:
        statuses.append(chat(server, "slow-down", session).status_code)
    # The scripted 429 (times: 1) reaches the client exactly once, before the answer.
    assert statuses.count(429) == 1 and statuses[-1] == 200, statuses
    assert set(statuses) <= {503, 429, 200}
    entries = server.requests(session=session)
    assert [e["response"]["status"] for e in entries] == statuses
    for entry in entries:
        if entry["response"]["status"] == 503:
            assert entry["response"]["error"]["kind"] == "store_unavailable"
            notes = " ".join(entry["response"]["notes"])
            assert entry["attempt"] == 1 and "attempt 1 of turn 0" in notes, entry
    assert [e["attempt"] for e in entries if e["response"]["status"] != 503] == [1, 2]
