"""Many processes, one mock (docs/scale.md): three `mockllm serve` processes sharing a real
redis-server, asked in turn by the official SDKs through a round-robin transport, answer
exactly as one process in memory does; a lost Redis gives 503s naming it, then recovery."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest

from tests.support import TOOL_PARAMETERS, ServerProcess, running_server
from tests.support.redis_server import RedisServer

CHAT_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS}}
]
RESP_TOOLS = [
    {"type": "function", "name": "get_weather", "parameters": TOOL_PARAMETERS, "strict": False}
]
SEARCH = [{"name": "search", "input_schema": {"type": "object"}}]
ASK = [{"role": "user", "content": "Weather in Paris?"}]
# Posted at run time to the first server: seeded chaos the SDKs' retries get through.
CHAOTIC = """name: chaotic
chaos: {429: 0.3, 503: 0.2, seed: 11}
turns:
  - reply: {text: through the chaos}
    repeat: true
"""
ID_HEADERS = ("x-request-id", "request-id")  # they carry session, scenario, turn and attempt


@dataclass
class Exchange:
    """One HTTP request as the SDK made it, and what came back, byte for byte."""

    method: str
    path: str
    status: int
    request_id: str
    body: bytearray = field(default_factory=bytearray)
    error: str = ""  # the transport error that ended the body, if any

    def key(self) -> tuple[Any, ...]:
        return (self.method, self.path, self.status, self.request_id, bytes(self.body), self.error)


class _Recorded(httpx2.SyncByteStream):
    def __init__(self, inner: Any, exchange: Exchange) -> None:
        self.inner, self.exchange = inner, exchange

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self.inner:
                self.exchange.body += chunk
                yield chunk
        except httpx2.HTTPError as error:
            self.exchange.error = type(error).__name__
            raise

    def close(self) -> None:
        self.inner.close()


class RoundRobin(httpx2.BaseTransport):
    """Sends each request to the next server in turn (a load balancer on loopback), and
    records every exchange as the SDK received it."""

    def __init__(self, urls: list[str]) -> None:
        self.targets = itertools.cycle([httpx2.URL(u) for u in urls])
        self.inner = httpx2.HTTPTransport()
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        with self._lock:
            target = next(self.targets)
        request.url = request.url.copy_with(host=target.host, port=target.port)
        response = self.inner.handle_request(request)
        found = next((response.headers[h] for h in ID_HEADERS if h in response.headers), "")
        exchange = Exchange(request.method, request.url.path, response.status_code, found)
        with self._lock:
            self.exchanges.append(exchange)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_Recorded(response.stream, exchange),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self.inner.close()


def run_suite(urls: list[str]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The state-dependent scenarios through the SDKs, round robin over `urls`: each
    exchange as received, and each server's log reduced to what the store decides."""
    transport = RoundRobin(urls)
    http = httpx2.Client(transport=transport)
    base = urls[0]

    def chat(scenario: str, session: str, **kw: Any) -> openai.OpenAI:
        url = f"{base}/s/{scenario}/{session}/v1"
        return openai.OpenAI(base_url=url, api_key="k", http_client=http, **kw)

    # `times:` faults: two 429s, each retried by the SDK on the next server, then served.
    client = chat("rate-limited", "retries")
    first = client.chat.completions.create(model="gpt-4o", messages=ASK, tools=CHAT_TOOLS)
    call = first.choices[0].message.tool_calls[0]
    history = [*ASK, first.choices[0].message.model_dump(exclude_none=True)]
    history.append({"role": "tool", "tool_call_id": call.id, "content": "18 °C"})
    client.chat.completions.create(model="gpt-4o", messages=history, tools=CHAT_TOOLS)

    # A stream cut inside the arguments; the harness goes on with what it half received:
    # the cut is shared, so the next server reports continued_after_failed_stream (served)
    # instead of refusing a history it believes diverged.
    client = chat("stream-cut", "cut", max_retries=0)
    got: list[Any] = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in client.chat.completions.create(
            model="gpt-4o", messages=ASK, tools=CHAT_TOOLS, stream=True
        ):
            got.extend(chunk.choices[0].delta.tool_calls or [] if chunk.choices else [])
    partial = {"id": got[0].id, "type": "function", "function": {"name": "get_weather"}}
    partial["function"]["arguments"] = "".join(c.function.arguments or "" for c in got)
    continued = [*ASK, {"role": "assistant", "tool_calls": [partial]}]
    continued.append({"role": "tool", "tool_call_id": got[0].id, "content": "18 °C"})
    client.chat.completions.create(model="gpt-4o", messages=continued, tools=CHAT_TOOLS)

    # Responses: previous_response_id across servers, and GET of a stored response.
    client = chat("weather-single", "chain")
    asked = client.responses.create(model="gpt-4o", input="Weather in Paris?", tools=RESP_TOOLS)
    output = [{"type": "function_call_output", "call_id": asked.output[0].call_id}]
    output[0]["output"] = "18 °C"
    client.responses.create(
        model="gpt-4o", input=output, previous_response_id=asked.id, tools=RESP_TOOLS
    )
    assert client.responses.retrieve(asked.id).id == asked.id

    # A scenario posted to one server, served by all; its seeded chaos retried by the SDK.
    posted = httpx.post(
        f"{base}/_mockllm/scenarios", content=CHAOTIC, headers={"content-type": "application/yaml"}
    )
    assert posted.status_code == 201, posted.text
    client = chat("chaotic", "chaos", max_retries=6)
    for _ in range(4):
        client.chat.completions.create(model="gpt-4o", messages=ASK)

    # A tool loop through the Anthropic SDK.
    claude = anthropic.Anthropic(base_url=f"{base}/s/tool-loop/loop", api_key="k", http_client=http)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Find flights"}]
    for _ in range(4):
        reply = claude.messages.create(
            model="claude-sonnet-4-6", max_tokens=100, messages=messages, tools=SEARCH
        )
        use = next(b for b in reply.content if b.type == "tool_use")
        messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        result = {"type": "tool_result", "tool_use_id": use.id, "content": "none found"}
        messages.append({"role": "user", "content": [result]})
    http.close()

    # On a shared store the log is the fleet's: every server gives all of it.
    log = httpx.get(f"{urls[0]}/_mockllm/requests").json()
    assert all(httpx.get(f"{url}/_mockllm/requests").json() == log for url in urls[1:])
    logged = []
    for e in log:
        kinds = sorted(v["rule"] for v in e["violations"])
        status = e["response"]["status"]
        logged.append((e["session"], e["turn"], e["attempt"], status, kinds))
    return [x.key() for x in transport.exchanges], sorted(logged)


@contextmanager
def _servers(*argsets: tuple[str, ...]) -> Iterator[list[ServerProcess]]:
    """`mockllm serve` processes with these arguments each, started at once."""
    managers = [running_server(*args, "--quiet") for args in argsets]
    with ThreadPoolExecutor(len(managers)) as pool, ExitStack() as stack:
        futures = [pool.submit(m.__enter__) for m in managers]
        for manager, future in zip(managers, futures, strict=True):
            if future.exception() is None:
                stack.push(manager.__exit__)
        yield [f.result() for f in futures]


def _two_on(*state: str) -> Any:
    return _servers(state, state)


def test_three_servers_on_redis_answer_as_one_in_memory(redis: RedisServer) -> None:
    on_redis = ("--state", redis.url())
    with _servers((), on_redis, on_redis, on_redis) as (alone, *servers):
        expected_exchanges, expected_log = run_suite([alone.url])
        exchanges, logged = run_suite([s.url for s in servers])
    assert [e[:4] for e in exchanges] == [e[:4] for e in expected_exchanges]
    assert exchanges == expected_exchanges  # byte-identical bodies, the same attempts
    assert logged == expected_log
    assert [e[2] for e in exchanges[:3]] == [429, 429, 200]  # retried on the next servers
    statuses = [e[2] for e in expected_exchanges]
    assert statuses.count(429) >= 3 and 503 in statuses  # the faults did fire
    assert ("cut", 1, 1, 200, ["continued_after_failed_stream"]) in logged


def test_behind_a_round_robin_servers_in_memory_never_let_a_retry_through() -> None:
    """The failure this exists for, and the other side of the test above (where the same
    request gets 429, 429, 200): each server in memory counts its own attempts, so
    `times: 2` never runs out behind a round robin and the SDK's retries give up."""
    with _two_on() as servers:
        transport = RoundRobin([s.url for s in servers])
        with httpx2.Client(transport=transport) as http:
            url = servers[0].openai_url("rate-limited", "retries")
            client = openai.OpenAI(base_url=url, api_key="k", http_client=http)
            with pytest.raises(openai.RateLimitError):
                client.chat.completions.create(model="gpt-4o", messages=ASK, tools=CHAT_TOOLS)
    assert [e.status for e in transport.exchanges] == [429, 429, 429]


def test_concurrent_retries_on_two_servers_get_distinct_attempts(redis: RedisServer) -> None:
    """Four clients, two on each server, send the same request of one session at once."""
    with _two_on("--state", redis.url()) as servers:

        def ask(url: str) -> None:
            with httpx.Client(base_url=url) as client:
                for _ in range(10):
                    body = {"model": "gpt-4o", "messages": ASK}
                    client.post("/s/hello/race/v1/chat/completions", json=body)

        threads = [threading.Thread(target=ask, args=(s.url,)) for s in servers for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        logged = servers[1].requests(session="race")
    assert sorted(e["attempt"] for e in logged) == list(range(1, 41))
    assert [e["seq"] for e in logged] == list(range(1, 41))  # one gap-free log, in order


def test_a_reset_or_a_replaced_scenario_on_one_server_is_seen_by_the_others(
    redis: RedisServer,
) -> None:
    """Under a prefix and with session names that are glob patterns: each reset deletes
    exactly what it names. A scenario replaced on one server is served as replaced by
    the other at once, though it knew the old one (the version read with the attempt)."""
    shared = ("--state", redis.url(), "--state-prefix", "mock*[1]")
    with _two_on(*shared) as (one, two):
        body = {"model": "gpt-4o", "messages": ASK}
        for session in ("a*", "a*:b", "a*"):
            one.http.post(f"/s/hello/{session}/v1/chat/completions", json=body)
        client = openai.OpenAI(base_url=one.openai_url("hello", "r"), api_key="k")
        stored = client.responses.create(model="gpt-4o", input="hi")
        reset = two.http.post("/_mockllm/reset", params={"session": "a*"}, json={})
        assert reset.status_code == 200
        for session, attempt in (("a*", 1), ("a*:b", 2)):
            answered = two.http.post(f"/s/hello/{session}/v1/chat/completions", json=body)
            assert answered.status_code == 200
            assert two.last(session)["attempt"] == attempt
        assert client.responses.retrieve(stored.id).id == stored.id
        assert two.http.post("/_mockllm/reset", json={}).status_code == 200
        with pytest.raises(openai.NotFoundError, match="No response found"):
            client.responses.retrieve(stored.id)
        one.http.post("/s/hello/a*:b/v1/chat/completions", json=body)
        assert one.last("a*:b")["attempt"] == 1

        for version in ("first", "second"):
            posted = one.http.post(
                "/_mockllm/scenarios",
                content=f"name: posted\nturns:\n  - reply: {{text: {version}}}\n",
                headers={"content-type": "application/yaml"},
            )
            assert posted.status_code == (201 if version == "first" else 200)
            answered = two.http.post("/s/posted/p/v1/chat/completions", json=body)
            assert answered.json()["choices"][0]["message"]["content"] == version


def test_a_lost_redis_gives_503s_naming_it_then_recovers(redis: RedisServer) -> None:
    with _two_on("--state", redis.url()) as (one, two):
        client = openai.OpenAI(base_url=one.openai_url("hello", "lost"), api_key="k")
        asked = client.responses.create(model="gpt-4o", input="hi")
        redis.stop()
        store = f"the shared state store {redis.url()} is unreachable"
        for server in (one, two):
            lost = openai.OpenAI(
                base_url=server.openai_url("hello", "lost"), api_key="k", max_retries=0
            )
            with pytest.raises(openai.InternalServerError, match=store) as raised:
                lost.chat.completions.create(model="gpt-4o", messages=ASK)
            assert raised.value.status_code == 503
            assert raised.value.code == "store_unavailable"
            with pytest.raises(openai.InternalServerError, match=store):
                lost.responses.retrieve(asked.id)
            claude = anthropic.Anthropic(
                base_url=f"{server.url}/s/hello/lost", api_key="k", max_retries=0
            )
            with pytest.raises(anthropic.InternalServerError, match=store) as failed:
                claude.messages.create(model="claude-sonnet-4-6", max_tokens=9, messages=ASK)
            assert failed.value.status_code == 503
            health = server.http.get("/_mockllm/health")
            assert health.status_code == 503 and store in health.json()["error"]["message"]
        assert one.http.get("/_mockllm/requests").status_code == 503  # the log is there too

        redis.start()  # empty: nothing was persisted
        # A fleet log whose keys vanished is said to be lost (docs/scale.md), never silently
        # restarted at seq 1: its reads answer 503 until somebody clears it.
        again = openai.OpenAI(base_url=one.openai_url("hello", "back"), api_key="k")
        again.chat.completions.create(model="gpt-4o", messages=ASK)  # finds the keys gone
        lost = one.http.get("/_mockllm/requests")
        assert lost.status_code == 503
        cleared = one.http.delete(
            "/_mockllm/requests", headers={"content-type": "application/json"}
        )
        assert cleared.status_code < 300
        for server in (one, two):
            again = openai.OpenAI(base_url=server.openai_url("rate-limited", "back2"), api_key="k")
            again.chat.completions.create(model="gpt-4o", messages=ASK, tools=CHAT_TOOLS)
        one.requests()  # a read makes `one` send what waited now, not after its writer's pause
        attempts = sorted(e["attempt"] for e in two.requests(session="back2"))
        assert attempts == [1, 2, 3, 4]  # one counter from a clean start: 429, 429, 200, 200
        with pytest.raises(openai.NotFoundError):  # gone with Redis, and said so: not corrupt
            client.responses.retrieve(asked.id)


def test_an_unreachable_redis_at_start_never_shows_its_password() -> None:
    url = "redis://:s3cret@127.0.0.1:1/0"  # nothing listens on port 1
    with running_server("--state", url) as server:
        response = server.http.post(
            "/s/hello/v1/chat/completions", json={"model": "m", "messages": ASK}
        )
        assert response.status_code == 503
        message = response.json()["error"]["message"]
        assert "redis://:***@127.0.0.1:1/0 is unreachable" in message
        log = server.http.get("/_mockllm/requests")  # the log is on that Redis too
        assert log.status_code == 503
        printed = server.printed()
    assert "s3cret" not in message + log.text + printed


def _posted(text: str) -> str:
    return f"name: posted\nturns:\n  - reply: {{text: {text}}}\n"


def _post(server: ServerProcess, yaml: str) -> int:
    headers = {"content-type": "application/yaml"}
    return server.http.post("/_mockllm/scenarios", content=yaml, headers=headers).status_code


def _said(server: ServerProcess, session: str) -> str:
    body = {"model": "gpt-4o", "messages": ASK}
    answered = server.http.post(f"/s/posted/{session}/v1/chat/completions", json=body)
    content: str = answered.json()["choices"][0]["message"]["content"]
    return content


def test_a_scenario_posted_after_redis_restarted_empty_reaches_every_server(
    redis: RedisServer,
) -> None:
    """The scenarios' version is unique to each POST, not a counter that starts again at 1
    on an empty Redis (where the other server, which knew version 1, would keep its old
    scenario forever); and run-time scenarios never expire."""
    with _two_on("--state", redis.url()) as (one, two):
        assert _post(one, _posted("first")) == 201
        assert _said(two, "a") == "first"
        redis.start()  # empty: post them again, docs/scale.md says
        assert _post(one, _posted("second")) == 200  # replaced the one it had
        assert _said(one, "b") == "second"
        assert _said(two, "b") == "second"
        assert redis.command("TTL", "mockllm:scenarios") == -1  # kept: no replica loses them


def test_a_slow_redis_is_an_honest_503_and_counts_the_attempt_once(redis: RedisServer) -> None:
    """A command that times out may still run: it is not retried (counting is not
    idempotent), so one request never leaves attempt 2 behind with no attempt 1 seen."""
    with running_server("--state", redis.url(), "--quiet") as server:
        body = {"model": "gpt-4o", "messages": ASK}
        assert server.http.post("/s/hello/warm/v1/chat/completions", json=body).is_success
        assert redis.command("PING")
        with redis.asleep(2.8):
            slow = server.http.post("/s/hello/slow/v1/chat/completions", json=body)
        assert slow.status_code == 503, slow.text
        assert "is unreachable (Timeout" in slow.json()["error"]["message"]
        assert redis.command("HGETALL", "mockllm:attempts:slow") == {"0\x1fhello": "1"}


def test_a_server_up_to_date_reads_only_the_version_not_every_posted_text(
    redis: RedisServer,
) -> None:
    """Health probes and requests naming an unknown scenario look for new run-time
    scenarios each time: with the version unchanged, Redis sends a few bytes back, not
    the (here 300 kB of) scenarios posted."""
    with running_server("--state", redis.url(), "--quiet") as server:
        assert _post(server, _posted("x" * 300_000)) == 201
        redis.command("CONFIG", "RESETSTAT")
        body = {"model": "gpt-4o", "messages": ASK}
        for i in range(10):
            unknown = server.http.post(f"/s/nope{i}/v1/chat/completions", json=body)
            assert unknown.status_code == 404
            assert server.http.get("/_mockllm/health").json()["status"] == "ok"
        sent = int(redis.command("INFO", "stats")["total_net_output_bytes"])
    assert sent < 20_000  # 20 reads of the whole texts would be 6 MB


def test_state_ttl_bounds_every_session_and_response_key_and_the_url_may_come_from_env(
    redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOCKLLM_STATE", redis.url())  # out of `ps`
    with running_server("--state-ttl", "40", "--quiet") as server:
        client = openai.OpenAI(base_url=server.openai_url("stream-cut", "ttl"), api_key="k")
        with pytest.raises(openai.APIConnectionError):  # a cut: recorded, with a TTL too
            for _ in client.chat.completions.create(
                model="gpt-4o", messages=ASK, tools=CHAT_TOOLS, stream=True, timeout=5
            ):
                pass
        hello = openai.OpenAI(base_url=server.openai_url("hello", "ttl"), api_key="k")
        hello.responses.create(model="gpt-4o", input="hi")
        keys = redis.command("KEYS", "mockllm:*")
    state = [k for k in keys if k.split(":")[1] != "log"]
    assert sorted(k.split(":")[1] for k in state) == ["attempts", "cuts", "response"]
    assert all(0 < redis.command("TTL", k) <= 40 for k in state)
    # The log's keys carry none: not even a `volatile-*` policy would evict them.
    assert all(redis.command("TTL", k) == -1 for k in keys if k not in state)


def test_a_cut_is_recorded_only_by_the_attempt_still_current(redis: RedisServer) -> None:
    """Two replicas answer attempts 1 and 2 of a turn at once, and attempt 1's record of
    its cut arrives last: it is dropped, so attempt 2's (whole) delivery stands."""
    from mockllm.state.redis_state import RedisState

    async def race() -> tuple[Any, ...]:
        store = RedisState(redis.url(), "race", 60)
        try:
            first, *_ = await store.begin("s", "x", 0, "")
            second, *_ = await store.begin("s", "x", 0, "")
            await store.cut("s", "x", 0, second, None)  # attempt 2 was whole
            await store.cut("s", "x", 0, first, "truncate on attempt 1")  # late: dropped
            after_late = (await store.begin("s", "x", 0, ""))[1]
            await store.cut("s", "x", 0, 3, "http 500 on attempt 3")  # current: kept
            return first, second, after_late, (await store.begin("s", "x", 0, ""))[1]
        finally:
            await store.close()

    assert asyncio.run(race()) == (1, 2, {}, {0: "http 500 on attempt 3"})


def test_a_shared_scenario_this_server_cannot_load_is_warned_about_once(
    redis: RedisServer,
) -> None:
    """Written by a newer mockllm, say: left out, said so once, and the rest still served."""
    with running_server("--state", redis.url()) as server:
        redis.command("HSET", "mockllm:scenarios", "future", "name: future\nturns: 7\n")
        redis.command("SET", "mockllm:scenarios:version", "v-future")
        body = {"model": "gpt-4o", "messages": ASK}
        for _ in range(3):
            assert server.http.post("/s/future/v1/chat/completions", json=body).status_code == 404
            assert server.http.get("/_mockllm/health").status_code == 200
        printed = server.printed()
    warning = "warning: run-time scenario 'future' of the shared store (version v-future)"
    assert printed.count(warning) == 1, printed


def test_a_scenario_replaced_while_a_request_reads_its_previous_response_answers_as_replaced(
    redis: RedisServer,
) -> None:
    """A Responses request naming previous_response_id reads it from Redis first; a refresh
    that lands meanwhile (here a health probe sent just before, both held up by a sleeping
    Redis) must not leave it answering with the scenario it would have found before."""
    repeated = "name: posted\nturns:\n  - reply: {{text: {}}}\n    repeat: true\n"
    with _two_on("--state", redis.url()) as (one, two):
        assert _post(one, repeated.format("first")) == 201
        client = openai.OpenAI(base_url=two.openai_url("posted", "race"), api_key="k")
        earlier = client.responses.create(model="gpt-4o", input="hi")
        assert earlier.output_text == "first"
        assert _post(one, repeated.format("second")) == 200
        assert redis.command("PING")
        with redis.asleep(1), ThreadPoolExecutor(2) as pool:
            before = redis.waiting()
            probe = pool.submit(two.http.get, "/_mockllm/health")  # refreshes, held up
            redis.until_waiting(before + 1)  # its refresh waits in the sleeping Redis
            asked = pool.submit(
                client.responses.create,
                model="gpt-4o",
                input="again",
                previous_response_id=earlier.id,
            )
            assert probe.result().status_code == 200
            assert asked.result().output_text == "second"


def test_a_prefix_with_a_colon_is_refused() -> None:
    refused = "--state-prefix 'a:b': give a non-empty name without ':'"
    shared = ("--state", "redis://127.0.0.1:1/0", "--state-prefix", "a:b")
    with pytest.raises(RuntimeError, match=refused), running_server(*shared):
        pass


def _workers(server: ServerProcess) -> list[int]:
    pid = server.process.pid
    return list(map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split()))


def test_workers_share_one_port_on_redis_and_are_refused_in_memory(redis: RedisServer) -> None:
    with running_server("--workers", "2", "--state", redis.url(), "--quiet") as server:
        workers = _workers(server)
        assert len(workers) == 2
        # Each attempt on a fresh connection to one worker (the other stopped), alternating:
        # the `times: 2` fault runs out across workers only if they share the counter.
        statuses = []
        for paused in (workers[1], workers[0], workers[1]):
            os.kill(paused, signal.SIGSTOP)
            try:
                url = server.openai_url("rate-limited", "w")
                with openai.OpenAI(base_url=url, api_key="k", max_retries=0) as client:
                    raw = client.chat.completions.with_raw_response
                    try:
                        asked = raw.create(model="gpt-4o", messages=ASK, tools=CHAT_TOOLS)
                        statuses.append(asked.status_code)
                    except openai.RateLimitError as limited:
                        statuses.append(limited.status_code)
            finally:
                os.kill(paused, signal.SIGCONT)
        assert statuses == [429, 429, 200]
        logged = [(e["seq"], e["response"]["status"]) for e in server.requests(session="w")]
        assert logged == [(1, 429), (2, 429), (3, 200)]  # each worker's batches its own
        server.process.terminate()
        assert server.process.wait(10) == 0

    with running_server("--workers", "2", "--state", redis.url(), "--quiet") as server:
        dead, other = _workers(server)
        os.kill(dead, signal.SIGKILL)  # a worker dies: the lot stops, and says so
        assert server.process.wait(10) == 1
        assert not Path(f"/proc/{other}").exists()  # stopped and reaped by the parent
        assert f"worker {dead} exited with -9; stopping the others" in server.console.read_text()

    with running_server("--workers", "2", "--state", redis.url(), "--quiet") as server:
        workers = _workers(server)
        os.kill(server.process.pid, signal.SIGKILL)  # the parent dies: its workers follow
        server.process.wait(10)
        deadline = time.monotonic() + 10
        while any(_running(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_running(w) for w in workers)

    needs = "--workers 2 needs a shared --state"
    with pytest.raises(RuntimeError, match=needs) as refused, running_server("--workers", "2"):
        pass
    assert "exited with 2" in str(refused.value)


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan is reaped by init, or by whoever adopted it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_bedrock_attempts_and_streams_are_shared_on_redis(redis: RedisServer) -> None:
    """Bedrock's wire on shared state: a throttled Converse retried on the other server is
    the same session's next attempt (429, 429, then served), and a ConverseStream answered
    by either server is the same bytes."""
    import boto3
    from botocore.config import Config
    from botocore.exceptions import ClientError

    def client(server: ServerProcess, scenario: str, session: str) -> Any:
        return boto3.client(
            "bedrock-runtime",
            endpoint_url=f"{server.url}/s/{scenario}/{session}",
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
            config=Config(retries={"total_max_attempts": 1}),
        )

    body = {"messages": [{"role": "user", "content": [{"text": "Paris?"}]}]}
    tools = {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {}}}}]}
    model = "us.anthropic.claude-sonnet-4-6"
    with _two_on("--state", redis.url()) as servers:
        for server in servers:  # attempts 1 and 2, one on each server
            with pytest.raises(ClientError, match="ThrottlingException"):
                client(server, "fault-429-twice", "b").converse(
                    modelId=model, toolConfig=tools, **body
                )
        served = client(servers[0], "fault-429-twice", "b").converse(
            modelId=model, toolConfig=tools, **body
        )
        assert served["stopReason"] == "tool_use"
        logged = servers[1].requests(session="b")
        streams = [
            httpx.post(f"{s.url}/s/hello/s{i}/model/{model}/converse-stream", json=body).content
            for i, s in enumerate(servers)
        ]
    assert [(e["attempt"], e["response"]["status"]) for e in logged] == [
        (1, 429),
        (2, 429),
        (3, 200),
    ]
    assert streams[0] == streams[1] and streams[0][:4] != b"{"  # an event stream, the same
