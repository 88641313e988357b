"""Gemini on Vertex AI through google-genai with `vertexai=True` (project, location, an
access token that needs no network, `base_url` at mockllm): the tool loop with parallel
calls streamed and not, results paired by name, countTokens, a 429 read as Vertex's, the
history rules' two sides, and an unknown route under a project in Vertex's envelope."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from google import genai
from google.genai import errors, types
from google.oauth2.credentials import Credentials

from mockllm import Session
from tests.support import TOOL_PARAMETERS, ServerProcess

QUESTION = "北京和上海?"
NO_AFC = {"automatic_function_calling": {"disable": True}}
WEATHER = [
    {"function_declarations": [{"name": "get_weather", "parameters_json_schema": TOOL_PARAMETERS}]}
]
MODEL = "gemini-2.5-flash"


def vertex_client(base_url: str, **http: Any) -> genai.Client:
    """google-genai on Vertex AI, offline: an OAuth token of its own (any is accepted), so
    google-auth never asks for application default credentials."""
    return genai.Client(
        vertexai=True,
        project="mock-project",
        location="us-central1",
        credentials=Credentials(token="ya29.mock-token"),  # type: ignore[no-untyped-call]
        http_options={"base_url": base_url, "retry_options": {"attempts": 1}, **http},
    )


@pytest.fixture
def vertex(mock: Session) -> Iterator[Any]:
    clients: list[genai.Client] = []

    def make(scenario: str, **http: Any) -> genai.Client:
        client = vertex_client(mock.url(scenario, api="vertex-gemini"), **http)
        clients.append(client)
        return client

    yield make
    for c in clients:
        c.close()


def ask(client: genai.Client, contents: Any, stream: bool, config: Any) -> Any:
    if not stream:
        return client.models.generate_content(model=MODEL, contents=contents, config=config)
    chunks = list(
        client.models.generate_content_stream(model=MODEL, contents=contents, config=config)
    )
    parts = [p for c in chunks for p in c.candidates[0].content.parts]
    return types.GenerateContentResponse(
        candidates=[types.Candidate(content=types.Content(role="model", parts=parts))]
    )


@pytest.mark.parametrize("stream", [False, True])
def test_tool_loop_with_parallel_calls(
    vertex: Any, mock: Session, server: ServerProcess, stream: bool
) -> None:
    client = vertex("weather-parallel")
    config = {"tools": WEATHER, **NO_AFC}
    first = ask(client, QUESTION, stream, config)
    assert [(c.name, c.args) for c in first.function_calls] == [
        ("get_weather", {"city": "北京"}),
        ("get_weather", {"city": "上海"}),
    ]
    answers = [
        types.Part.from_function_response(name="get_weather", response={"result": r})
        for r in ("25度", "22度")
    ]
    history = [
        types.Content(role="user", parts=[types.Part(text=QUESTION)]),
        first.candidates[0].content,
        types.Content(role="user", parts=answers),
    ]
    second = ask(client, history, stream, config)
    assert "".join(p.text or "" for p in second.candidates[0].content.parts) == (
        "北京多云25℃，上海小雨22℃。"
    )
    entries = server.requests(session=mock.name)
    assert [(e["api"], e["stream"], e["turn"]) for e in entries] == [
        ("vertex-gemini", stream, 0),
        ("vertex-gemini", stream, 1),
    ]
    method = "streamGenerateContent" if stream else "generateContent"
    path = f"/v1beta1/projects/mock-project/locations/us-central1/publishers/google/models/{MODEL}:{method}"
    assert entries[0]["path"].endswith(path)
    assert all(e["violations"] == [] for e in entries)
    assert entries[0]["headers"]["authorization"].startswith("[redacted")
    assert "ya29.mock-token" not in str(server.requests())
    assert mock.verdict().ok, mock.verdict()


def test_automatic_function_calling_closes_the_loop(vertex: Any, mock: Session) -> None:
    def get_weather(city: str) -> str:
        """The weather of a city."""
        return {"北京": "25度", "上海": "22度"}[city]

    client = vertex("weather-parallel")
    answer = client.models.generate_content(
        model=MODEL, contents=QUESTION, config={"tools": [get_weather]}
    )
    assert answer.text == "北京多云25℃，上海小雨22℃。"
    assert mock.verdict().ok


def test_count_tokens_is_a_side_request(vertex: Any, mock: Session, server: ServerProcess) -> None:
    counted = vertex("hello").models.count_tokens(model=MODEL, contents="hello there")
    assert counted.total_tokens and counted.total_tokens > 0
    (entry,) = server.requests(session=mock.name)
    assert entry["side"]["name"] == "count_tokens" and entry["api"] == "vertex-gemini"


def test_a_429_reads_as_vertex_quota(vertex: Any) -> None:
    with pytest.raises(errors.ClientError) as caught:
        vertex("rate-limited").models.generate_content(
            model=MODEL, contents="Paris?", config={"tools": WEATHER, **NO_AFC}
        )
    assert caught.value.code == 429 and caught.value.status == "RESOURCE_EXHAUSTED"
    assert "vertex-ai/generative-ai/docs/error-code-429" in str(caught.value.message)


def test_unknown_route_under_a_project_names_the_routes(vertex: Any, server: ServerProcess) -> None:
    client = vertex("hello")
    with pytest.raises(errors.ClientError) as caught:
        client.models.embed_content(model="text-embedding-005", contents="hi")
    assert caught.value.code == 404 and caught.value.status == "NOT_FOUND"
    assert "publishers/google/models/{model}:generateContent" in str(caught.value.message)
