"""Every resource limit holds, and the server stays responsive meanwhile: a health request is
answered while the hostile work is still running (an ordering, never a timing)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockllm.core import disk_cache
from tests.support import ServerProcess, running_server

JSON = {"content-type": "application/json"}
YAML = {"content-type": "application/yaml"}


def answered_during(
    server: ServerProcess, hostile: Callable[[int], httpx.Response], count: int
) -> list[httpx.Response]:
    """Send `count` hostile requests one after another; while they are still going, the
    server answers a health request. Returns the hostile responses."""
    results: list[httpx.Response] = []
    started = threading.Event()

    def run() -> None:
        for i in range(count):
            started.set()
            results.append(hostile(i))

    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(run)
        started.wait()
        health = httpx.get(f"{server.url}/_mockllm/health", timeout=60)
        finished_before_health = len(results)
        running.result()
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert finished_before_health < count, "the health request waited for all hostile work"
    return results


def add(server: ServerProcess, yaml: str) -> httpx.Response:
    return httpx.post(f"{server.url}/_mockllm/scenarios", content=yaml, headers=YAML, timeout=60)


def test_a_backtracking_expect_regex_stops_at_its_limit(server: ServerProcess) -> None:
    scenario = """\
name: limits-regex
turns:
  - expect: {user: {regex: "^(a|aa)+$"}}
    reply: {text: matched}
"""
    assert add(server, scenario).status_code in (200, 201)
    body = {"model": "m", "messages": [{"role": "user", "content": "a" * 40 + "!"}]}

    def hostile(i: int) -> httpx.Response:
        url = f"{server.url}/s/limits-regex/re{i}/v1/chat/completions"
        return httpx.post(url, json=body, timeout=60)

    for r in answered_during(server, hostile, 12):
        assert r.status_code == 400
        assert "ran past its 100 ms limit on 41 characters" in r.json()["error"]["message"]
    good = {"model": "m", "messages": [{"role": "user", "content": "aaaa"}]}
    url = f"{server.url}/s/limits-regex/re-good/v1/chat/completions"
    assert httpx.post(url, json=good).json()["choices"][0]["message"]["content"] == "matched"


GENERATE = """\
name: limits-generate
turns:
  - reply:
      tool_calls: [{name: grow, generate: valid}]
"""


@pytest.mark.parametrize(
    ("schema", "limit"),
    [
        ({"type": "string", "minLength": 80_000_000}, "limit of 10000 characters"),
        ({"type": "string", "pattern": "^a{2000000}$"}, "the 10000 characters"),
        (
            {"type": "array", "minItems": 900, "items": {"type": "array", "minItems": 900}},
            "the 10000 values",
        ),
    ],
)
def test_generate_refuses_what_a_client_schema_would_blow_up(
    server: ServerProcess, schema: dict[str, Any], limit: str
) -> None:
    assert add(server, GENERATE).status_code in (200, 201)
    parameters = {"type": "object", "properties": {"x": schema}, "required": ["x"]}
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "go"}],
        "tools": [{"type": "function", "function": {"name": "grow", "parameters": parameters}}],
    }

    def hostile(i: int) -> httpx.Response:
        url = f"{server.url}/s/limits-generate/gen{i}/v1/chat/completions"
        return httpx.post(url, json=body, timeout=60)

    for r in answered_during(server, hostile, 6):
        assert r.status_code == 400 and r.json()["error"]["code"] == "generate_failed"
        assert limit in r.json()["error"]["message"], r.json()


BOMB = """\
name: bomb
turns: [{reply: {text: hi}}]
description: &a [x, x, x, x, x, x, x, x, x, x]
stream: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
chaos: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
validation: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
flavor: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
x: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
y: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
"""


def test_a_yaml_alias_bomb_is_refused_where_the_alias_is(server: ServerProcess) -> None:
    for r in answered_during(server, lambda i: add(server, BOMB), 6):
        assert r.status_code == 400
        assert r.json()["error"]["problems"] == [
            "<POST /_mockllm/scenarios>:4:13: aliases expand this document past 10000 nodes "
            "(the limit); the first alias of a list or mapping, *a, is here"
        ]


def test_a_scenario_past_max_body_is_refused() -> None:
    with running_server("--max-body", "64KB") as server:
        big = "name: big\ndescription: " + "x" * 70_000 + "\nturns: [{reply: {text: hi}}]\n"
        r = add(server, big)
        assert r.status_code == 413 and "(--max-body)" in r.json()["error"]["message"]
        names = [s["name"] for s in server.http.get("/_mockllm/scenarios").json()]
        assert "big" not in names


def test_big_scenarios_load_off_the_event_loop(server: ServerProcess) -> None:
    turns = "".join(f"  - reply: {{text: 'turn {i} {'y' * 40}'}}\n" for i in range(6000))

    def hostile(i: int) -> httpx.Response:
        return add(server, f"name: big-{i}\nturns:\n{turns}")

    for r in answered_during(server, hostile, 4):
        assert r.status_code in (200, 201) and r.json()["turns"] == 6000


def test_attempt_counters_are_bounded_by_session_without_breaking_a_running_one() -> None:
    with running_server("--max-sessions", "3", scenarios=()) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}

        def attempt(session: str) -> int:
            url = f"{server.url}/s/hello/{session}/v1/chat/completions"
            assert httpx.post(url, json=body).status_code == 200
            return int(server.last(session)["attempt"])

        assert attempt("old") == 1
        live = [attempt("live")]
        for other in ("a", "b", "c", "d"):
            attempt(other)
            live.append(attempt("live"))  # a running test: used between the others
        assert live == [1, 2, 3, 4, 5]  # never forgotten
        assert attempt("old") == 1  # the least recently used session started afresh


def test_the_schema_cache_keeps_a_bounded_number_of_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOCKLLM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(disk_cache, "MAX_ENTRIES", 5)
    for i in range(12):
        disk_cache.put("schemas", json.dumps({"i": i}).encode(), {"problem": None})
    assert len(list((tmp_path / "schemas").glob("*.json"))) == 5
    assert disk_cache.get("schemas", json.dumps({"i": 11}).encode()) == {"problem": None}
