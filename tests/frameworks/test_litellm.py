"""LiteLLM's `completion` (to OpenAI Chat Completions and Anthropic Messages) and `responses`
(to OpenAI Responses and, through its bridge, Anthropic Messages), each in a plain tool loop
of the kind its users write, streamed (`stream_chunk_builder`, the final response event)
and not."""

from __future__ import annotations

import json
from typing import Any

import httpx
import litellm
import pytest
from litellm.exceptions import BadRequestError, InternalServerError, MidStreamFallbackError

from mockllm import Session

from .matrix import PARALLEL_TEXT, PROMPTS, Expect, check, fails, get_weather

PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
    "required": ["city"],
}
CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMETERS}}]
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": PARAMETERS}]
MODELS = {"openai": "openai/gpt-4o-mini", "anthropic": "anthropic/claude-sonnet-4-6"}


def answer(arguments: str) -> str:
    """Run the tool; a broken call gets an "Error: …" result, the only error signal a
    Chat-Completions-shaped message has."""
    try:
        return get_weather(**json.loads(arguments))
    except (ValueError, TypeError) as e:
        return f"Error: {e}"


def completion_loop(provider: str, stream: bool, url: str, prompt: str) -> str:
    messages: list[Any] = [{"role": "user", "content": prompt}]
    for _ in range(5):
        options = {"model": MODELS[provider], "api_base": url, "api_key": "test", "num_retries": 0}
        if stream:
            chunks = list(
                litellm.completion(messages=messages, tools=CHAT_TOOLS, stream=True, **options)
            )
            reply = litellm.stream_chunk_builder(chunks, messages=messages)
        else:
            reply = litellm.completion(messages=messages, tools=CHAT_TOOLS, **options)
        message = reply.choices[0].message
        if not message.tool_calls:
            return str(message.content)
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": answer(call.function.arguments),
                }
            )
    raise AssertionError("no final answer in 5 model calls")


def responses_loop(provider: str, stream: bool, url: str, prompt: str) -> str:
    items: list[Any] = [{"role": "user", "content": prompt}]
    for _ in range(5):
        options = {"model": MODELS[provider], "api_base": url, "api_key": "test", "num_retries": 0}
        if stream:
            events = litellm.responses(input=items, tools=RESPONSES_TOOLS, stream=True, **options)
            reply = next(e.response for e in events if e.type == "response.completed")
        else:
            reply = litellm.responses(input=items, tools=RESPONSES_TOOLS, **options)
        calls = [item for item in reply.output if item.type == "function_call"]
        if not calls:
            return "".join(
                c.text for item in reply.output if item.type == "message" for c in item.content
            )
        items += [item.model_dump(exclude_none=True) for item in reply.output]
        items += [
            {"type": "function_call_output", "call_id": c.call_id, "output": answer(c.arguments)}
            for c in calls
        ]
    raise AssertionError("no final answer in 5 model calls")


LOOPS = {"completion": completion_loop, "responses": responses_loop}

EXPECTED: dict[tuple[str, str, str, bool], Expect] = {}
for loop in LOOPS:
    for provider in MODELS:
        for stream in (False, True):
            EXPECTED["weather-parallel", loop, provider, stream] = Expect(text=PARALLEL_TEXT)
    for stream in (False, True):
        EXPECTED["malformed-arguments", loop, "openai", stream] = Expect(
            text="It is 18 °C and sunny in Paris.", fed_back="^Error: Unterminated string"
        )
    # Anthropic unstreamed: mockllm sends the cut call's complete parameters ({}); the tool
    # fails, but a tool message has no error flag, so Anthropic's is_error never gets set and
    # the scenario's `is_error: true` expectation refuses the next request.
    EXPECTED["malformed-arguments", loop, "anthropic", False] = Expect(
        raises=BadRequestError,
        message="expected is_error true",
        fed_back="^Error: .*missing 1 required positional argument",
        is_error=False,
        failed=fails("errors_fed_back", "expectations_met"),
    )
    # Streamed, the raw cut-off arguments are kept; LiteLLM cannot turn them into Anthropic's
    # `input` object for the next request and raises (a 400-class error) before sending it.
    EXPECTED["malformed-arguments", loop, "anthropic", True] = Expect(
        raises=BadRequestError,
        message="Failed to parse tool call arguments",
        failed=fails("calls_answered", "errors_fed_back"),
    )
    EXPECTED["stream-cut", loop, "anthropic", False] = Expect(raises=InternalServerError)
    EXPECTED["stream-cut", loop, "anthropic", True] = Expect(raises=MidStreamFallbackError)
EXPECTED["stream-cut", "completion", "openai", False] = Expect(raises=InternalServerError)
EXPECTED["stream-cut", "completion", "openai", True] = Expect(raises=MidStreamFallbackError)
EXPECTED["stream-cut", "responses", "openai", False] = Expect(raises=InternalServerError)
# litellm.responses(stream=True) lets the HTTP library's error through unwrapped.
EXPECTED["stream-cut", "responses", "openai", True] = Expect(raises=httpx.RemoteProtocolError)

CASES = sorted(EXPECTED)


@pytest.mark.parametrize(("scenario", "loop", "provider", "stream"), CASES)
def test_tool_loop(mock: Session, scenario: str, loop: str, provider: str, stream: bool) -> None:
    url = mock.url(scenario, api="anthropic" if provider == "anthropic" else "openai")
    run = LOOPS[loop]
    check(
        lambda: run(provider, stream, url, PROMPTS[scenario]),
        mock,
        EXPECTED[scenario, loop, provider, stream],
    )
