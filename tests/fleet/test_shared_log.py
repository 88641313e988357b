"""The request log of a fleet: three real `mockllm serve` processes on one real Redis, a
round-robin client in front of them (as a load balancer would be), the official SDKs.
Whichever replica is asked gives the same log: one gap-free seq, every request, the same
verdict as one process gives for the same requests (docs/scale.md, The request log)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import anthropic
import httpx
import openai
import pytest
import redis as redis_client

from tests.support import TOOL_PARAMETERS, ServerProcess, running_server
from tests.support.redis_server import RedisServer

LIMIT = 40
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": TOOL_PARAMETERS}}
    for name in ("search", "read_file")
]
RESULTS = {"search": "notes/paris.md", "read_file": "Louvre on Tuesday"}


class RoundRobin(httpx.BaseTransport):
    """Each request goes to the next replica in turn, whatever URL the client built."""

    def __init__(self, replicas: list[ServerProcess]) -> None:
        self.targets = [httpx.URL(r.url) for r in replicas]
        self.sent = 0
        self.inner = httpx.HTTPTransport()

    def take(self) -> httpx.URL:
        """The next replica's URL (also for a client with an HTTP stack of its own)."""
        self.sent += 1
        return self.targets[(self.sent - 1) % len(self.targets)]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        target = self.take()
        request.url = request.url.copy_with(host=target.host, port=target.port)
        request.headers["host"] = f"{target.host}:{target.port}"
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def fleet(redis: RedisServer) -> Iterator[list[ServerProcess]]:
    with ExitStack() as stack:
        args = ("--state", redis.url(), "--log-limit", str(LIMIT))
        yield [stack.enter_context(running_server(*args)) for _ in range(3)]


def agent(client: openai.OpenAI, rounds: int) -> int:
    """A tool loop that stops after `rounds` requests (a careless harness) or at the answer;
    how many requests it sent."""
    messages: list[Any] = [{"role": "user", "content": "Plan my Paris trip"}]
    for sent in range(1, rounds + 1):
        reply = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return sent
        for call in message.tool_calls:
            content = RESULTS[call.function.name]
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return rounds


def harness(http: httpx.Client, base: str, session: str, rounds: int) -> int:
    """One refused request, then the tool loop: the requests it sent."""
    url = f"{base}/s/sequential-calls/{session}/v1"
    # Not closed: closing an SDK client closes the http client it was given.
    client = openai.OpenAI(base_url=url, api_key="k", http_client=http, max_retries=0)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="m", messages=[])
    return 1 + agent(client, rounds)


def judged(verdict: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """A verdict without what differs between two logs of the same requests: its seqs."""
    seqs = re.compile(r"log seq \d+")
    return [(c["name"], c["ok"], seqs.sub("log seq N", c["message"])) for c in verdict["checks"]]


def read(replica: ServerProcess, route: str, **params: Any) -> Any:
    response = replica.http.get(f"/_mockllm/{route}", params=params)
    response.raise_for_status()
    return response.json() if route != "transcript" else response.text


def delete(replica: ServerProcess, **params: Any) -> Any:
    json_type = {"content-type": "application/json"}
    return replica.http.delete("/_mockllm/requests", params=params, headers=json_type).json()


def test_every_replica_reads_one_gap_free_log_of_every_request(
    fleet: list[ServerProcess], server: ServerProcess, session: str, redis: RedisServer
) -> None:
    good, bad, hello = f"{session}-good", f"{session}-bad", f"{session}-hello"
    balanced = RoundRobin(fleet)
    with httpx.Client(transport=balanced) as http:
        sent = harness(http, "http://fleet", good, rounds=9)
        sent += harness(http, "http://fleet", bad, rounds=2)  # read_file never answered
        # The Anthropic SDK brings its own HTTP stack (httpx2): it takes its turn by hand.
        with anthropic.Anthropic(
            base_url=f"{str(balanced.take()).rstrip('/')}/s/hello/{hello}", api_key="k"
        ) as claude:
            text = claude.messages.create(
                model="m", max_tokens=50, messages=[{"role": "user", "content": "hi"}]
            ).content[0]
        assert text.type == "text" and text.text.startswith("Hello!")
        assert http.get("http://fleet/v1/chat/completion").status_code == 404  # a typo
        sent += 2
    assert sent == 4 + 3 + 2 and balanced.sent == sent

    log = read(fleet[0], "requests")
    assert [e["seq"] for e in log] == list(range(1, sent + 1))
    assert read(fleet[1], "requests") == log == read(fleet[2], "requests")
    assert [e["response"]["status"] for e in log] == [400, 200, 200, 200, 400, 200, 200, 200, 404]
    assert log[-1]["path"] == "/v1/chat/completion" and log[-2]["api"] == "anthropic"

    # Each process wrote the lines it answered to its own --log, numbered by the fleet.
    written = [[json.loads(line) for line in r.log_file.read_text().splitlines()] for r in fleet]
    assert all(written) and sorted(e["seq"] for w in written for e in w) == list(range(1, sent + 1))
    assert sorted((e for w in written for e in w), key=lambda e: e["seq"]) == log

    assert read(fleet[1], "requests", session=good) == [e for e in log if e["session"] == good]
    assert read(fleet[2], "requests", scenario="hello") == [log[-2]]
    assert read(fleet[2], "requests", session=bad, scenario="hello") == []
    assert read(fleet[0], "requests", since=5) == log[5:]

    # The verdict of sessions spread over three replicas is the verdict of one process.
    assert {e["session"] for e in log[:4]} == {good}
    for name, rounds in ((good, 9), (bad, 2)):
        with httpx.Client() as direct:
            harness(direct, server.url, f"{name}-solo", rounds)
        alone = judged(read(server, "verdict", session=f"{name}-solo"))
        assert judged(read(fleet[2], "verdict", session=name)) == alone
    # Each harness's first request is refused on purpose: the one verdict counts it.
    failed = [c for c in read(fleet[0], "verdict", session=good)["checks"] if not c["ok"]]
    assert [c["name"] for c in failed] == ["requests_accepted"]
    failed = [c for c in read(fleet[1], "verdict", session=bad)["checks"] if not c["ok"]]
    assert [c["name"] for c in failed] == ["calls_answered", "requests_accepted"]
    assert "read_file" in failed[0]["message"]
    assert set(read(fleet[1], "verdicts", since=5)) == {bad, hello, "default"}
    transcript = read(fleet[2], "transcript", session=good)
    assert "4 model requests" in transcript and "(log seq 4)" in transcript

    # The ring keeps the last LIMIT entries of the fleet, and its indexes with it.
    with httpx.Client(transport=RoundRobin(fleet)) as http:
        for i in range(LIMIT):
            body = {"model": "m", "messages": [{"role": "user", "content": str(i)}]}
            url = f"http://fleet/s/hello/{session}-ring/v1/chat/completions"
            assert http.post(url, json=body).status_code == 200
    log = read(fleet[1], "requests")
    assert [e["seq"] for e in log] == list(range(sent + 1, sent + LIMIT + 1))
    assert read(fleet[0], "requests", session=good) == []
    keys = redis_client.Redis(port=redis.port)
    try:
        assert not keys.exists(
            f"mockllm:log:session:{good}", "mockllm:log:scenario:sequential-calls"
        )
        assert keys.ttl("mockllm:log:lines") == -1  # no TTL: never evicted (docs/scale.md)
    finally:
        keys.close()

    # Deleting a session, then everything, from any replica; the seq goes on.
    assert delete(fleet[2], session=f"{session}-ring") == {"deleted": LIMIT}
    assert read(fleet[0], "requests") == []
    with openai.OpenAI(base_url=fleet[0].openai_url("hello", hello), api_key="k") as client:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert [e["seq"] for e in read(fleet[1], "requests")] == [sent + LIMIT + 1]
    assert delete(fleet[1]) == {"deleted": 1}
    assert read(fleet[2], "requests") == []


def test_a_lost_store_gives_readers_a_503_and_the_log_recovers(
    redis: RedisServer, session: str
) -> None:
    ask = [{"role": "user", "content": "hi"}]
    with running_server("--state", redis.url()) as replica:
        url = replica.openai_url("hello", session)
        with openai.OpenAI(base_url=url, api_key="k", max_retries=0) as client:
            client.chat.completions.create(model="m", messages=ask)
        redis.stop()
        for route in ("requests", "verdict", "verdicts", "transcript"):
            lost = replica.http.get(f"/_mockllm/{route}")
            assert lost.status_code == 503, route
            message = lost.json()["error"]["message"]
            assert f"shared state store {redis.url()} is unreachable" in message
        assert redis.url() in delete(replica)["error"]["message"]
        # Answered or refused (a lost store fails the requests whose state it keeps), the
        # request is logged: its entry waits in the process until the store is back.
        during = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": ask})
        assert during.status_code in (200, 503)
        redis.start()  # empty, as nothing is persisted: the log lost its first entry
        lost = replica.http.get("/_mockllm/requests")
        assert lost.status_code == 503 and "lost its keys" in lost.json()["error"]["message"]
        assert delete(replica) == {"deleted": 1}  # the entry that waited: seq 2, not 1 again
        assert read(replica, "requests") == []
        printed = replica.printed()
    assert "unreachable" in printed and "is back; log written" in printed
    assert "ERROR: the fleet log" in printed
