"""Choosing scenario and session and deriving the turn from the history (docs/scenarios.md)."""

from __future__ import annotations

import httpx
import openai
import pytest

from tests.support import TOOL_PARAMETERS, ServerProcess, assistant_message, running_server
from tests.support.clients import ChatFactory

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": TOOL_PARAMETERS}}]
HELLO = "Hello! I am mockllm, a deterministic fake model. How can I help?"


def post(url: str, body: dict[str, object], **headers: str) -> httpx.Response:
    return httpx.post(url + "/chat/completions", json=body, headers=headers)


BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_path_prefix_with_and_without_session(server: ServerProcess, session: str) -> None:
    with_session = post(f"{server.url}/s/hello/{session}/v1", BODY)
    without = post(f"{server.url}/s/hello/v1", BODY)
    assert with_session.json()["choices"][0]["message"]["content"] == HELLO
    assert without.status_code == 200
    assert server.last(session)["scenario"] == "hello"
    assert server.requests(session="default", scenario="hello")


def test_headers_choose_scenario_and_session(server: ServerProcess, session: str) -> None:
    r = post(
        f"{server.url}/v1", BODY, **{"X-Mockllm-Scenario": "hello", "X-Mockllm-Session": session}
    )
    assert r.json()["choices"][0]["message"]["content"] == HELLO
    entry = server.last(session)
    assert (entry["scenario"], entry["session"]) == ("hello", session)


def test_path_wins_over_headers(server: ServerProcess, session: str) -> None:
    r = post(f"{server.url}/s/hello/{session}/v1", BODY, **{"X-Mockllm-Scenario": "loop"})
    assert r.json()["choices"][0]["message"]["content"] == HELLO


def test_deepseek_style_route_without_v1(server: ServerProcess, session: str) -> None:
    r = httpx.post(f"{server.url}/s/hello/{session}/chat/completions", json=BODY)
    assert r.json()["choices"][0]["message"]["content"] == HELLO


def test_unknown_scenario_is_a_404_listing_scenarios(
    chat: ChatFactory, server: ServerProcess, session: str
) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        chat("no-such-scenario").chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    message = caught.value.body["message"]
    assert "no scenario named 'no-such-scenario'" in message
    assert "weather-parallel" in message and "hello" in message
    assert server.last(session)["response"]["status"] == 404


def test_default_scenario_and_no_scenario_at_all() -> None:
    with running_server("--default", "hello") as s:
        assert post(f"{s.url}/v1", BODY).json()["choices"][0]["message"]["content"] == HELLO
    with running_server() as s:
        r = post(f"{s.url}/v1", BODY)
        assert r.status_code == 404
        assert "no scenario chosen" in r.json()["error"]["message"]
        assert "X-Mockllm-Scenario" in r.json()["error"]["message"]


def test_unknown_default_refuses_to_start() -> None:
    with (
        pytest.raises(RuntimeError, match="--default 'nope' is not a loaded scenario"),
        running_server("--default", "nope"),
    ):
        pass


def test_turn_is_the_number_of_assistant_replies(
    chat: ChatFactory, server: ServerProcess, session: str
) -> None:
    client = chat("loop")
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    queries = []
    for _ in range(4):
        message = (
            client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
            .choices[0]
            .message
        )
        queries.append(message.tool_calls[0].function.arguments)
        call_id = message.tool_calls[0].id
        messages += [
            assistant_message(message),
            {"role": "tool", "tool_call_id": call_id, "content": "nothing"},
        ]
    # turn 1 repeats (repeat: true), each with its own deterministic call id
    assert queries == ['{"q":"first"}', '{"q":"again"}', '{"q":"again"}', '{"q":"again"}']
    assert [e["turn"] for e in server.requests(session=session)] == [0, 1, 2, 3]


def test_retried_request_gets_the_same_turn_and_counts_attempts(
    chat: ChatFactory, server: ServerProcess, session: str
) -> None:
    client = chat("hello")
    first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
    second = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "b"}])
    assert first.choices[0].message.content == second.choices[0].message.content
    assert [(e["turn"], e["attempt"]) for e in server.requests(session=session)] == [(0, 1), (0, 2)]


def test_attempts_are_per_session(server: ServerProcess, session: str) -> None:
    for name in (session + "-a", session + "-b"):
        post(f"{server.url}/s/hello/{name}/v1", BODY)
    assert server.requests(session=session + "-a")[-1]["attempt"] == 1
    assert server.requests(session=session + "-b")[-1]["attempt"] == 1


def test_past_the_last_turn_is_scenario_exhausted(
    chat: ChatFactory, server: ServerProcess, session: str
) -> None:
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "one"},
        {"role": "user", "content": "again"},
    ]
    with pytest.raises(openai.BadRequestError) as caught:
        chat("hello").chat.completions.create(model="m", messages=history)
    exhausted = (
        "scenario 'hello' has no turn 1: the request's history holds 1 assistant reply, so it "
        "asks for turn 1, and the scenario has only turn 0. Add a turn to the scenario, or set "
        "`repeat: true` on its last turn to answer every later request with it"
    )
    assert caught.value.body["message"] == exhausted
    assert caught.value.code == "scenario_exhausted"
    entry = server.last(session)
    assert entry["turn"] == 1
    assert entry["violations"] == [{"rule": "scenario_exhausted", "message": exhausted}]
