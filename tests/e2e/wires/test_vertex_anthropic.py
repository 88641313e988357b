"""Claude on Vertex AI through `anthropic`'s AnthropicVertex (region, project, an access
token: nothing asks google-auth): rawPredict and streamRawPredict with the model in the
path and no `model` in the body, the tool loop with parallel calls streamed and not (the
SDK's own accumulator), count-tokens:rawPredict, Vertex's quota 429 in Google's envelope,
Claude's own refusals in Anthropic's, and an unknown route under a project."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import pytest
from anthropic import AnthropicVertex
from anthropic._constants import ANTHROPIC_API_VERSION

from mockllm import Session
from tests.support import ServerProcess

MODEL = "claude-sonnet-4-6@20260101"
TOOLS = [
    {
        "name": "get_weather",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


def sdk(mock: Session, scenario: str, retries: int = 0) -> AnthropicVertex:
    return AnthropicVertex(
        base_url=mock.url(scenario, api="vertex-anthropic"),
        region="us-east5",
        project_id="mock-project",
        access_token="ya29.mock-token",
        max_retries=retries,
    )


def ask(client: AnthropicVertex, messages: list[Any], stream: bool) -> Any:
    if not stream:
        return client.messages.create(model=MODEL, max_tokens=200, messages=messages, tools=TOOLS)
    with client.messages.stream(
        model=MODEL, max_tokens=200, messages=messages, tools=TOOLS
    ) as events:
        return events.get_final_message()  # the SDK's own accumulator


@pytest.mark.parametrize("stream", [False, True])
def test_tool_loop_with_parallel_calls(mock: Session, server: ServerProcess, stream: bool) -> None:
    client = sdk(mock, "weather-parallel")
    history: list[Any] = [{"role": "user", "content": "北京和上海?"}]
    first = ask(client, history, stream)
    assert first.stop_reason == "tool_use" and first.model == MODEL
    assert first.id.startswith("msg_vrtx_01")  # Vertex's own message ids
    uses = [b for b in first.content if b.type == "tool_use"]
    assert [u.input for u in uses] == [{"city": "北京"}, {"city": "上海"}]
    assert all(u.id.startswith("toolu_vrtx_01") and len(u.id) == 35 for u in uses)
    answers = [
        {"type": "tool_result", "tool_use_id": u.id, "content": t}
        for u, t in zip(uses, ["25度", "22度"], strict=True)
    ]
    history += [
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": answers},
    ]
    second = ask(client, history, stream)
    assert second.content[0].text == "北京多云25℃，上海小雨22℃。"
    entries = server.requests(session=mock.name)
    assert [(e["api"], e["stream"], e["turn"]) for e in entries] == [
        ("vertex-anthropic", stream, 0),
        ("vertex-anthropic", stream, 1),
    ]
    method = "streamRawPredict" if stream else "rawPredict"
    path = f"/v1/projects/mock-project/locations/us-east5/publishers/anthropic/models/{MODEL}"
    assert entries[0]["path"].endswith(f"{path}:{method}")
    assert entries[0]["headers"]["authorization"].startswith("[redacted")
    assert all(e["violations"] == [] for e in entries)
    assert mock.verdict().ok, mock.verdict()


def test_the_body_carries_no_model_and_the_sdks_version(
    mock: Session, server: ServerProcess
) -> None:
    sdk(mock, "hello").messages.create(
        model=MODEL, max_tokens=20, messages=[{"role": "user", "content": "hi"}]
    )
    (entry,) = server.requests(session=mock.name)
    body = entry["request"]
    # the SDK's own dated version (anthropic/_constants.py), not Google's vertex-2023-10-16
    assert "model" not in body and body["anthropic_version"] == ANTHROPIC_API_VERSION


def test_count_tokens(mock: Session, server: ServerProcess) -> None:
    counted = sdk(mock, "hello").messages.count_tokens(
        model=MODEL, messages=[{"role": "user", "content": "hello there"}]
    )
    assert counted.input_tokens > 0
    (entry,) = server.requests(session=mock.name)
    assert entry["side"]["name"] == "count_tokens" and entry["api"] == "vertex-anthropic"
    assert entry["path"].endswith("/publishers/anthropic/models/count-tokens:rawPredict")


def test_the_quota_429_is_vertex_and_the_sdk_retries_it(mock: Session) -> None:
    """A harness with the SDK's retries off meets RateLimitError with Vertex's body; one
    that keeps them (two by default) gets through, as rate-limited.yaml scripts two 429s."""
    ask_paris = [{"role": "user", "content": "Paris?"}]
    with pytest.raises(anthropic.RateLimitError) as caught:
        sdk(mock, "rate-limited").messages.create(
            model=MODEL, max_tokens=50, messages=ask_paris, tools=TOOLS
        )
    error = caught.value.body["error"]
    assert error["status"] == "RESOURCE_EXHAUSTED" and error["code"] == 429
    assert "online_prediction_requests_per_base_model" in error["message"]
    mock.reset()
    first = sdk(mock, "rate-limited", retries=2).messages.create(
        model=MODEL, max_tokens=50, messages=ask_paris, tools=TOOLS
    )
    assert first.stop_reason == "tool_use"


def test_a_missing_anthropic_version_is_refused(mock: Session) -> None:
    url = mock.url("hello", api="vertex-anthropic")
    route = f"{url}/projects/p/locations/us-east5/publishers/anthropic/models/{MODEL}:rawPredict"
    body = {"max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    answer = httpx.post(route, json=body)
    assert answer.status_code == 400
    assert answer.json()["error"] == {
        "type": "invalid_request_error",
        "message": "anthropic_version: Field required",
    }


def test_versionless_path_as_claude_code_sends_without_v1(mock: Session) -> None:
    base = mock.url("hello", api="vertex-anthropic").removesuffix("/v1")
    route = f"{base}/projects/p/locations/global/publishers/anthropic/models/{MODEL}:rawPredict"
    body = {
        "anthropic_version": "vertex-2023-10-16",  # Google's documented value
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}],
    }
    answer = httpx.post(route, json=body)
    assert answer.status_code == 200 and answer.json()["type"] == "message"


def test_unknown_route_under_a_project_is_vertex_shaped(mock: Session) -> None:
    client = sdk(mock, "hello")
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.post(
            "/projects/p/locations/us-east5/publishers/anthropic/models/m:predict",
            body={"instances": []},
            cast_to=httpx.Response,
        )
    error = caught.value.body["error"]
    assert error["status"] == "NOT_FOUND" and error["code"] == 404
    assert "publishers/anthropic/models/{model}:rawPredict" in error["message"]
