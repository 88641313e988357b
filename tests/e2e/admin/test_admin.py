"""Admin routes under /_mockllm/: health, scenarios at run time."""

from __future__ import annotations

import httpx
import openai
import pytest

from tests.support import BUNDLED, TEST_SCENARIOS, ServerProcess
from tests.support.clients import ChatFactory

YAML = {"content-type": "application/yaml"}  # admin state changes need JSON or YAML


def test_health(server: ServerProcess) -> None:
    body = httpx.get(f"{server.url}/_mockllm/health").json()
    assert body["status"] == "ok" and body["scenarios"] >= 3
    # The server loads both folders; tests add scenarios under other names only.
    files = [*BUNDLED.glob("*.yaml"), *TEST_SCENARIOS.glob("*.yaml")]
    assert body["scenarios"] >= len(files)


def test_list_scenarios(server: ServerProcess) -> None:
    listed = {s["name"]: s for s in httpx.get(f"{server.url}/_mockllm/scenarios").json()}
    assert listed["weather-parallel"]["turns"] == 2
    assert listed["weather-parallel"]["source"].endswith("weather-parallel.yaml")


def test_add_scenario_from_yaml_then_serve_it(
    server: ServerProcess, session: str, chat: ChatFactory
) -> None:
    name = f"added-{session}"
    r = httpx.post(
        f"{server.url}/_mockllm/scenarios",
        content=f"name: {name}\nturns: [{{reply: {{text: fresh}}}}]",
        headers=YAML,
    )
    assert r.status_code == 201 and r.json()["name"] == name and r.json()["replaced"] is False
    reply = chat(name).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}]
    )
    assert reply.choices[0].message.content == "fresh"
    again = httpx.post(
        f"{server.url}/_mockllm/scenarios",
        json={"name": name, "turns": [{"reply": {"text": "v2"}}]},
    )
    assert again.status_code == 200 and again.json()["replaced"] is True
    reply = chat(name).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}]
    )
    assert reply.choices[0].message.content == "v2"


def test_add_invalid_scenario_explains_and_changes_nothing(
    server: ServerProcess, chat: ChatFactory
) -> None:
    r = httpx.post(
        f"{server.url}/_mockllm/scenarios",
        content="name: hello\nturns:\n  - reply: {txt: x}\n",
        headers=YAML,
    )
    assert r.status_code == 400
    assert r.json()["error"]["problems"] == [
        "<POST /_mockllm/scenarios>:3:13: turns[0].reply.txt: unknown key 'txt' "
        "(allowed here: text, reasoning, tool_calls, finish, usage, json, refusal, empty, filter, blocked, search_tools); did you mean 'text'?"
    ]
    reply = chat("hello").chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}]
    )
    assert (
        reply.choices[0].message.content
        == "Hello! I am mockllm, a deterministic fake model. How can I help?"
    )  # the refused post replaced nothing


def test_a_nameless_posted_scenario_is_refused(server: ServerProcess) -> None:
    r = httpx.post(
        f"{server.url}/_mockllm/scenarios",
        content="turns: [{reply: {text: x}}]",
        headers={"content-type": "application/yaml"},
    )
    assert r.status_code == 400 and "missing required key 'name'" in r.json()["error"]["message"]


def test_unknown_admin_route(server: ServerProcess) -> None:
    r = httpx.get(f"{server.url}/_mockllm/nope")
    assert r.status_code == 404 and "no admin route" in r.json()["error"]["message"]


def test_models_route_is_not_a_scenario_request(server: ServerProcess) -> None:
    with openai.OpenAI(base_url=f"{server.url}/s/hello/v1", api_key="x") as client:
        assert any(m.id == "gpt-4o-mini" for m in client.models.list())
    with (
        openai.OpenAI(base_url=f"{server.url}/v1", api_key="x", max_retries=0) as client,
        pytest.raises(openai.NotFoundError),
    ):
        client.images.generate(model="m", prompt="x")  # a route no wire serves
