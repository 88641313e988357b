"""Numbers at and past every limit, through real servers (issue 24): an integer longer than
Python converts (4,300 digits), anywhere in a body, is the provider's 400 on every route and
an admin POST's 400, is logged, and leaves `--log`, `/_mockllm/requests`, `/transcript` and
`/verdict` readable for everyone — in memory and on a real Redis."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support import ServerProcess, running_server
from tests.support.redis_server import RedisServer

GEMINI = "v1beta/models/gemini-2.5-flash:generateContent"
ROUTES: dict[str, dict[str, Any]] = {
    "v1/chat/completions": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    "v1/responses": {"model": "m", "input": "hi"},
    "v1/messages": {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
    GEMINI: {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
}
HUGE = "7" * 5000  # past Python's int conversion limit (4300 digits) and mockllm's
LONG = "7" * 1001  # past mockllm's --max-number-digits (1000), within Python's


def with_number(route: str, digits: str, where: str) -> bytes:
    """The route's good body with a number `digits` long put `where` (top, deep, float)."""
    body = json.dumps(ROUTES[route])
    if where == "top":
        return body[:-1].encode() + b', "x": ' + digits.encode() + b"}"
    if where == "deep":
        return body[:-1].encode() + b', "x": [{"y": [' + digits.encode() + b"]}]}"
    return body[:-1].encode() + b', "x": -' + digits.encode() + b".5e-" + digits.encode() + b"}"


def post(server: ServerProcess, session: str, route: str, body: bytes) -> httpx.Response:
    return httpx.post(
        f"{server.url}/s/hello/{session}/{route}",
        content=body,
        headers={"content-type": "application/json"},
        timeout=10,
    )


def assert_log_readable(server: ServerProcess, session: str, count: int) -> list[Any]:
    for path in ("/_mockllm/requests", "/_mockllm/transcript", "/_mockllm/verdict"):
        r = server.http.get(path, params={"session": session}, timeout=10)
        assert r.status_code == 200, (path, r.status_code, r.text[:300])
    everyone = server.http.get("/_mockllm/requests", timeout=10)
    assert everyone.status_code == 200
    entries: list[Any] = server.requests(session=session)
    assert len(entries) == count
    return entries


@pytest.fixture(scope="module")
def memory_server() -> Iterator[ServerProcess]:
    with running_server() as s:
        yield s


@pytest.fixture
def fleet_server(redis: RedisServer) -> Iterator[ServerProcess]:
    with running_server("--state", redis.url()) as s:
        yield s


@pytest.mark.parametrize("where", ["top", "deep", "float"])
@pytest.mark.parametrize("route", ROUTES)
def test_an_integer_past_every_limit_is_the_providers_400_and_logged(
    memory_server: ServerProcess, session: str, route: str, where: str
) -> None:
    for digits in (HUGE, LONG):
        r = post(memory_server, session, route, with_number(route, digits, where))
        assert r.status_code == 400, r.text[:300]
        assert r.headers["content-type"].startswith("application/json")
        message = r.json()["error"]["message"]
        assert "more than 1000 digits" in message and "--max-number-digits" in message
    good = post(memory_server, session, route, json.dumps(ROUTES[route]).encode())
    assert good.status_code == 200
    entries = assert_log_readable(memory_server, session, 3)
    assert [e["response"]["status"] for e in entries] == [400, 400, 200]
    assert entries[0]["response"]["error"]["kind"] == "invalid_json"
    assert isinstance(entries[0]["request"], str)  # shown as its text
    assert memory_server.log_file is not None
    lines = [json.loads(line) for line in memory_server.log_file.read_text().splitlines()]
    assert [e["seq"] for e in lines if e["session"] == session] == [e["seq"] for e in entries]


def test_a_number_within_the_limit_is_read_and_logged_as_json(
    memory_server: ServerProcess, session: str
) -> None:
    within = "9" * 1000
    body = with_number("v1/chat/completions", within, "deep")
    r = post(memory_server, session, "v1/chat/completions", body)
    assert r.status_code == 200
    (entry,) = assert_log_readable(memory_server, session, 1)
    assert entry["request"]["x"] == [{"y": [int(within)]}]


def test_the_digit_limit_is_a_flag(session: str) -> None:
    with running_server("--max-number-digits", "4300") as s:
        body = with_number("v1/chat/completions", "9" * 4300, "top")
        assert post(s, session, "v1/chat/completions", body).status_code == 200
        body = with_number("v1/chat/completions", "9" * 4301, "top")
        r = post(s, session, "v1/chat/completions", body)
        assert r.status_code == 400 and "more than 4300 digits" in r.text
        assert_log_readable(s, session, 2)


def test_a_scenario_posted_with_a_huge_integer_is_a_400(
    memory_server: ServerProcess, session: str
) -> None:
    text = f"name: huge-{session}\nturns:\n  - reply: {{text: {HUGE}}}\n"
    r = memory_server.http.post(
        "/_mockllm/scenarios", content=text, headers={"content-type": "application/yaml"}
    )
    assert r.status_code == 400, r.text[:300]
    assert "digits" in r.json()["error"]["message"]
    as_json = json.dumps({"name": f"j-{session}", "turns": [{"reply": {"text": "x"}}]})
    r = memory_server.http.post(
        "/_mockllm/scenarios",
        content=as_json[:-1] + ', "n": ' + HUGE + "}",
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 400, r.text[:300]
    assert memory_server.http.get("/_mockllm/health").status_code == 200


@pytest.mark.parametrize("route", ROUTES)
def test_on_redis_a_huge_integer_neither_breaks_nor_hangs_the_fleet_log(
    fleet_server: ServerProcess, session: str, route: str
) -> None:
    r = post(fleet_server, session, route, with_number(route, HUGE, "deep"))
    assert r.status_code == 400, r.text[:300]
    good = post(fleet_server, session, route, json.dumps(ROUTES[route]).encode())
    assert good.status_code == 200
    entries = assert_log_readable(fleet_server, session, 2)
    assert [e["seq"] for e in entries] == [1, 2]
    assert fleet_server.log_file is not None
    lines = fleet_server.log_file.read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [1, 2]
