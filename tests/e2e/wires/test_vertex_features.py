"""What the base wires have, on Vertex AI through its SDKs: structured output (google-genai's
`parsed`, AnthropicVertex's `messages.parse`), a side request matched by `api:
vertex-gemini`, an in-band stream error that each SDK raises and a correct harness retries,
and attempts shared on Redis across two servers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from anthropic import AnthropicVertex
from google.genai import errors, types

from tests.e2e.wires.test_structured_output import EXTRA as JSON_SCENARIOS
from tests.e2e.wires.test_structured_output import Weather
from tests.e2e.wires.test_vertex_gemini import NO_AFC, WEATHER, vertex_client
from tests.support import ServerProcess, running_server
from tests.support.doc_examples import example_server
from tests.support.redis_server import RedisServer

SIDE = """
name: vertex-side
side_requests:
  - name: title
    match: {tools: none, api: vertex-gemini}
    reply: {text: A title}
turns:
  - expect: {tools: [get_weather]}
    reply: {text: agent}
"""
PARIS = [{"role": "user", "content": "Paris?"}]
CLAUDE_TOOLS = [{"name": "get_weather", "input_schema": {"type": "object"}}]


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with example_server(extra={**JSON_SCENARIOS, "vertex-side": SIDE}) as s:
        yield s


def claude(url: str, retries: int = 0) -> AnthropicVertex:
    return AnthropicVertex(
        base_url=url + "/v1",
        region="us-east5",
        project_id="p",
        access_token="t",
        max_retries=retries,
    )


def test_structured_output_parses_through_both_sdks(server: ServerProcess, session: str) -> None:
    def gemini(scenario: str) -> Any:
        with vertex_client(f"{server.url}/s/{scenario}/{session}") as client:
            return client.models.generate_content(
                model="gemini-2.5-flash",
                contents="weather in Paris",
                config=types.GenerateContentConfig(
                    response_mime_type="application/json", response_schema=Weather
                ),
            ).parsed

    def parse(scenario: str) -> Any:
        with claude(f"{server.url}/s/{scenario}/{session}-c") as client:
            return client.messages.parse(
                model="claude-sonnet-4-6",
                max_tokens=512,
                messages=[{"role": "user", "content": "weather in Paris"}],
                output_format=Weather,
            ).parsed_output

    assert isinstance(gemini("json-valid"), Weather)
    assert gemini("json-not_json") is None  # google-genai leaves it unparsed
    assert isinstance(parse("json-valid"), Weather)
    with pytest.raises(ValueError):  # pydantic's ValidationError, or the JSON decoder's
        parse("json-not_json")


def test_a_side_request_matched_by_api(server: ServerProcess, session: str) -> None:
    with vertex_client(f"{server.url}/s/vertex-side/{session}") as client:
        title = client.models.generate_content(model="gemini-2.5-flash", contents="name it")
        agent = client.models.generate_content(
            model="gemini-2.5-flash", contents="Paris?", config={"tools": WEATHER, **NO_AFC}
        )
    assert (title.text, agent.text) == ("A title", "agent")
    entries = server.requests(session=session)
    assert [e["side"]["name"] if e.get("side") else e["turn"] for e in entries] == ["title", 0]


def test_a_stream_error_is_raised_and_a_retry_served(server: ServerProcess, session: str) -> None:
    """stream-error-event: each SDK raises the in-band error of the first stream (Google's
    `{"error"}` frame; Anthropic's `event: error`); the harness's next attempt is served."""
    config = {"tools": WEATHER, **NO_AFC}
    with vertex_client(f"{server.url}/s/stream-error-event/{session}") as client:
        with pytest.raises(errors.APIError) as google:
            list(client.models.generate_content_stream(model="m", contents="Paris?", config=config))
        again = list(
            client.models.generate_content_stream(model="m", contents="Paris?", config=config)
        )
    assert google.value.code == 503 and google.value.status == "UNAVAILABLE"
    assert any(c.function_calls for c in again)
    client_c = claude(f"{server.url}/s/stream-error-event/{session}-c")
    ask = {"model": "claude-sonnet-4-6", "max_tokens": 50, "messages": PARIS, "tools": CLAUDE_TOOLS}
    with pytest.raises(anthropic.APIStatusError) as said, client_c.messages.stream(**ask) as events:
        events.get_final_message()
    assert "overloaded_error" in str(said.value)
    with client_c.messages.stream(**ask) as events:
        assert events.get_final_message().stop_reason == "tool_use"


def test_attempts_are_shared_on_redis(redis: RedisServer, session: str) -> None:
    """Two servers on one Redis: a 429 on one and its retry on the other are the session's
    attempts 1, 2 and 3, on either publisher; a stream is the same bytes from either."""
    ask = {"model": "claude-sonnet-4-6", "max_tokens": 50, "messages": PARIS, "tools": CLAUDE_TOOLS}
    with (
        running_server("--state", redis.url()) as one,
        running_server("--state", redis.url()) as two,
    ):
        for server in (one, two):
            with pytest.raises(anthropic.RateLimitError):
                claude(f"{server.url}/s/fault-429-twice/{session}").messages.create(**ask)
        served = claude(f"{one.url}/s/fault-429-twice/{session}").messages.create(**ask)
        logged = two.requests(session=session)
        bodies = []
        for i, server in enumerate((one, two)):
            with vertex_client(f"{server.url}/s/hello/{session}-g{i}") as client:
                chunks = client.models.generate_content_stream(model="m", contents="hi")
                bodies.append([c.model_dump_json(exclude={"sdk_http_response"}) for c in chunks])
    assert served.stop_reason == "tool_use"
    assert [(e["api"], e["attempt"], e["response"]["status"]) for e in logged] == [
        ("vertex-anthropic", 1, 429),
        ("vertex-anthropic", 2, 429),
        ("vertex-anthropic", 3, 200),
    ]
    assert bodies[0] == bodies[1]
