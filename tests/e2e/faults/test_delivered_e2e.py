"""`response.delivered` against the official SDKs: what the log says the client received of
a cut stream is what the SDK's own accumulator held when the stream broke, on every cut
point, for a wire that streams calls in fragments (OpenAI Chat) and one that sends each
call whole (Gemini). The other wires are shown by the browser test (tests/support/viewer_story.py)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from google import genai

from tests.support import ServerProcess

PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}}
REPLY = {
    "reasoning": "The user wants two cities.",
    "text": "Checking both.",
    "tool_calls": [
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "get_weather", "arguments": {"city": "Lyon"}},
    ],
}


def scripted(server: ServerProcess, name: str, after: int) -> None:
    """A reply with reasoning, text and two calls, cut after `after` events."""
    scenario = {
        "name": name,
        "stream": {"text_chunk_chars": 6, "argument_fragments": 3},
        "turns": [{"reply": REPLY, "fault": {"truncate": {"after_events": after}}}],
    }
    done = httpx.post(f"{server.url}/_mockllm/scenarios", json=scenario)
    assert done.status_code in (200, 201), done.text


def chat_received(server: ServerProcess, name: str) -> dict[str, Any]:
    """The openai SDK's accumulator (its stream snapshot) when the stream broke."""
    tools: Any = [
        {"type": "function", "function": {"name": "get_weather", "parameters": PARAMETERS}}
    ]
    with (
        openai.OpenAI(base_url=server.openai_url(name, name), api_key="t", max_retries=0) as c,
        c.chat.completions.stream(
            model="deepseek-reasoner",
            messages=[{"role": "user", "content": "Paris, Lyon?"}],
            tools=tools,
        ) as stream,
    ):
        with pytest.raises(openai.APIConnectionError):
            for _ in stream:
                pass
        snapshot = stream.current_completion_snapshot.choices
    message = snapshot[0].message if snapshot else None
    extra = (message.model_extra or {}) if message else {}
    return {
        "text": (message.content or "") if message else "",
        "reasoning": extra.get("reasoning_content") or "",
        "tool_calls": [
            {"name": c.function.name, "arguments": c.function.arguments}
            for c in ((message.tool_calls or []) if message else [])
        ],
    }


def gemini_received(server: ServerProcess, name: str) -> dict[str, Any]:
    """google-genai's chunks, merged as a harness merges them, until the stream broke."""
    got: dict[str, Any] = {"text": "", "reasoning": "", "tool_calls": []}
    http: Any = {"base_url": f"{server.url}/s/{name}/{name}"}
    with genai.Client(api_key="k", http_options=http) as g:
        stream = g.models.generate_content_stream(model="gemini-2.5-flash", contents="Paris, Lyon?")
        with pytest.raises(Exception, match="peer closed connection"):  # its httpx's, let through
            for chunk in stream:
                for part in chunk.candidates[0].content.parts or []:
                    if part.function_call is not None:
                        call = part.function_call
                        got["tool_calls"].append((call.name, call.args))
                    elif part.thought:
                        got["reasoning"] += part.text or ""
                    else:
                        got["text"] += part.text or ""
    return got


def delivered(server: ServerProcess, name: str) -> dict[str, Any]:
    (entry,) = server.requests(session=name)
    got: dict[str, Any] = entry["response"]["delivered"]
    assert got is not None and got["cut"]["by"] == "truncate", entry["response"]
    return got


@pytest.mark.parametrize("after", [1, 3, 5, 8, 11, 14])
def test_chat_delivered_is_what_the_openai_sdk_accumulated(
    server: ServerProcess, session: str, after: int
) -> None:
    name = f"{session}-{after}"
    scripted(server, name, after)
    received = chat_received(server, name)
    got = delivered(server, name)
    assert {k: got[k] for k in received} == received


@pytest.mark.parametrize("after", [0, 3, 5, 8, 9, 10])
def test_gemini_delivered_is_what_google_genai_received(
    server: ServerProcess, session: str, after: int
) -> None:
    """Gemini sends each call whole in its own frame: a call is delivered or it is not."""
    name = f"{session}-g{after}"
    scripted(server, name, after)
    received = gemini_received(server, name)
    got = delivered(server, name)
    assert (got["text"], got["reasoning"]) == (received["text"], received["reasoning"])
    calls = [(c["name"], json.loads(c["arguments"])) for c in got["tool_calls"]]
    assert calls == received["tool_calls"]
    parts = ["reasoning"] * 5 + ["text"] * 3 + ["call:0", "call:1", "tail"]
    assert got["cut"]["in"] == parts[after]
