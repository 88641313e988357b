"""`mockllm record` of Vertex AI: google-genai (`vertexai=True`) and AnthropicVertex
through a real recorder to a mockllm playing Vertex, then the recorded file served and the
same client code run again, which must see the same thing: a tool loop, a 429 (Vertex's
envelope on both publishers) and a stream cut, streamed and not."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic import AnthropicVertex
from google.genai import errors, types

from mockllm import load_paths
from mockllm.testing.client import Client
from tests.e2e.record.test_record import Recorder, recorder, replay  # noqa: F401  (the module's fixtures)
from tests.e2e.wires.test_vertex_gemini import WEATHER, vertex_client
from tests.support import ServerProcess

CLAUDE_TOOLS = [
    {
        "name": "get_weather",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


def _gemini_turn(client: Any, contents: list[Any], streamed: bool) -> tuple[str, list[Any]]:
    config = {"tools": WEATHER, "automatic_function_calling": {"disable": True}}
    model = "gemini-2.5-flash"
    if streamed:
        chunks = list(
            client.models.generate_content_stream(model=model, contents=contents, config=config)
        )
        parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])]
    else:
        answer = client.models.generate_content(model=model, contents=contents, config=config)
        parts = answer.candidates[0].content.parts or []
    return "".join(p.text or "" for p in parts), [p for p in parts if p.function_call]


def gemini_loop(url: str, streamed: bool) -> list[Any]:
    """A correct harness's loop: each attempt's outcome (an error by code and status)."""
    seen: list[Any] = []
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="Paris?")])]
    with vertex_client(url) as client:
        for _ in range(4):
            try:
                text, calls = _gemini_turn(client, contents, streamed)
            except errors.APIError as e:
                seen.append(("error", e.code, e.status, e.message))
                continue
            except Exception as e:  # a body cut short (httpx2's own classes): asked again
                seen.append(("cut", type(e).__name__))
                continue
            seen.append((text, [(c.function_call.name, c.function_call.args) for c in calls]))
            if not calls:
                break
            contents.append(types.Content(role="model", parts=calls))
            answers = [
                types.Part.from_function_response(
                    name=c.function_call.name, response={"r": "18 °C, sunny"}
                )
                for c in calls
            ]
            contents.append(types.Content(role="user", parts=answers))
    return seen


def claude_loop(url: str, streamed: bool) -> list[Any]:
    seen: list[Any] = []
    messages: list[Any] = [{"role": "user", "content": "Paris?"}]
    client = AnthropicVertex(
        base_url=url + "/v1", region="us-east5", project_id="p", access_token="t", max_retries=0
    )
    for _ in range(4):
        args = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 100,
            "messages": messages,
            "tools": CLAUDE_TOOLS,
        }
        try:
            if streamed:
                with client.messages.stream(**args) as events:
                    answer = events.get_final_message()
            else:
                answer = client.messages.create(**args)
        except anthropic.APIStatusError as e:
            seen.append(("error", e.status_code, e.body))
            continue
        except Exception as e:  # a body cut short: asked again
            seen.append(("cut", type(e).__name__))
            continue
        uses = [b for b in answer.content if b.type == "tool_use"]
        text = "".join(b.text for b in answer.content if b.type == "text")
        seen.append((text, [(u.name, u.input) for u in uses], answer.stop_reason))
        if not uses:
            break
        messages.append({"role": "assistant", "content": answer.content})
        results = [
            {"type": "tool_result", "tool_use_id": u.id, "content": "18 °C, sunny"} for u in uses
        ]
        messages.append({"role": "user", "content": results})
    return seen


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("guide", ["weather-single", "rate-limited", "stream-cut"])
@pytest.mark.parametrize("publisher", ["google", "anthropic"])
def test_a_recorded_vertex_session_replays_as_it_happened(
    server: ServerProcess,
    recorder: Recorder,  # noqa: F811
    replay: ServerProcess,  # noqa: F811
    session: str,
    publisher: str,
    guide: str,
    streamed: bool,
) -> None:
    loop = gemini_loop if publisher == "google" else claude_loop
    direct = loop(f"{server.url}/s/{guide}/{session}-direct", streamed)
    recorded = loop(f"{recorder.server.url}/s/{guide}/{session}", streamed)
    assert recorded == direct  # the recorder is transparent
    assert direct[-1][0] == "It is 18 °C and sunny in Paris."
    failed = {"rate-limited": ("error", 429), "stream-cut": ("cut",)}.get(guide)
    assert failed is None or any(o[: len(failed)] == failed for o in direct), direct
    path = recorder.end(f"{guide}-{session}")
    (scenario,) = load_paths([path])
    Client(replay.url).add_scenario(path)
    assert loop(f"{replay.url}/s/{scenario.name}/{session}", streamed) == recorded
