"""The OpenAI Agents SDK: its own Chat Completions and Responses models, and its LiteLLM
model for Anthropic, run and streamed."""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

import litellm
import openai
import pytest
from agents import (
    Agent,
    FunctionTool,
    Model,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunContextWrapper,
    Runner,
    function_tool,
)
from agents.extensions.models.litellm_model import LitellmModel
from litellm.exceptions import BadRequestError, InternalServerError, MidStreamFallbackError
from litellm.llms.custom_httpx.async_client_cleanup import close_litellm_async_clients

from mockllm import Session

from .matrix import PARALLEL_TEXT, PROMPTS, Expect, check, fails, get_weather

HIDDEN = "An error occurred while running the tool. Please try again."

EXPECTED: dict[tuple[str, str, bool], Expect] = {}
for api in ("chat", "responses"):
    for stream in (False, True):
        EXPECTED["weather-parallel", api, stream] = Expect(text=PARALLEL_TEXT)
        # The tool's error is replaced by a fixed text unless failure_error_function is set.
        EXPECTED["malformed-arguments", api, stream] = Expect(
            text="It is 18 °C and sunny in Paris.", fed_back=HIDDEN
        )
        EXPECTED["stream-cut", api, stream] = Expect(raises=openai.APIConnectionError)
for stream in (False, True):
    # The LiteLLM model turns one reply with two calls into two replies of one call each
    # (call, result, call, result). Anthropic accepts that history, and so does mockllm: the
    # split replies count as the one served reply (core/rejoin.py).
    EXPECTED["weather-parallel", "anthropic", stream] = Expect(text=PARALLEL_TEXT)
# Through a Chat-Completions-shaped layer the error text arrives without Anthropic's
# is_error flag, so the scenario's `is_error: true` expectation refuses the next request.
EXPECTED["malformed-arguments", "anthropic", False] = Expect(
    raises=BadRequestError,
    message="expected is_error true",
    fed_back=HIDDEN,
    is_error=False,
    failed=fails("errors_fed_back", "expectations_met"),
)
# Streamed, the raw cut-off arguments are kept; LiteLLM cannot turn them into Anthropic's
# `input` object for the next request and raises before sending it.
EXPECTED["malformed-arguments", "anthropic", True] = Expect(
    raises=BadRequestError,
    message="Failed to parse tool call arguments",
    failed=fails("calls_answered", "errors_fed_back"),
)
EXPECTED["stream-cut", "anthropic", False] = Expect(raises=InternalServerError)
EXPECTED["stream-cut", "anthropic", True] = Expect(raises=MidStreamFallbackError)

CASES = sorted(EXPECTED)


def model(api: str, mock: Session, scenario: str) -> tuple[Model, openai.AsyncOpenAI | None]:
    if api == "anthropic":
        url = mock.url(scenario, api="anthropic")
        return LitellmModel(model="anthropic/claude-sonnet-4-6", base_url=url, api_key="test"), None
    client = openai.AsyncOpenAI(base_url=mock.url(scenario), api_key="test", max_retries=0)
    kind = OpenAIChatCompletionsModel if api == "chat" else OpenAIResponsesModel
    return kind(model="gpt-4o-mini", openai_client=client), client


async def run_agent(
    api: str, stream: bool, mock: Session, scenario: str, tool: FunctionTool
) -> str:
    chat_model, client = model(api, mock, scenario)
    agent = Agent(
        name="assistant", instructions="Answer with the tools.", model=chat_model, tools=[tool]
    )
    try:
        if not stream:
            return str((await Runner.run(agent, PROMPTS[scenario])).final_output)
        result = Runner.run_streamed(agent, PROMPTS[scenario])
        async for _ in result.stream_events():
            pass
        return str(result.final_output)
    finally:
        if client is not None:
            await client.close()
        else:  # LiteLLM caches its async HTTP clients: close them in the loop that made them
            await close_litellm_async_clients()  # type: ignore[no-untyped-call]
            # ... and its aiohttp transport drops the socket of a failed response unclosed:
            # let it go here, quietly, rather than in whichever test the collector next runs.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ResourceWarning)
                litellm.in_memory_llm_clients_cache.flush_cache()  # type: ignore[no-untyped-call]
                gc.collect()


@pytest.mark.parametrize(("scenario", "api", "stream"), CASES)
def test_agent(mock: Session, scenario: str, api: str, stream: bool) -> None:
    # Strict schemas (the default) make `unit` required: see the test below.
    tool = function_tool(get_weather, strict_mode=False)
    check(
        lambda: asyncio.run(run_agent(api, stream, mock, scenario, tool)),
        mock,
        EXPECTED[scenario, api, stream],
    )


def say_the_error(_ctx: RunContextWrapper[Any], error: Exception) -> str:
    return f"Error: {error}"


def test_failure_error_function_feeds_the_real_error_back(mock: Session) -> None:
    """With `failure_error_function`, the model is told what was wrong with its arguments."""
    tool = function_tool(get_weather, failure_error_function=say_the_error, strict_mode=False)
    expect = Expect(text="It is 18 °C and sunny in Paris.", fed_back="^Error: .*Invalid JSON")
    check(
        lambda: asyncio.run(run_agent("chat", False, mock, "malformed-arguments", tool)),
        mock,
        expect,
    )


def test_strict_schemas_make_every_parameter_required(mock: Session) -> None:
    """By default the SDK sends strict schemas: every parameter is required, defaults or not.
    The real API then always sends `unit`, so mockllm fills the parameter the scenario's
    call leaves out (deterministically, from the schema) and the run is clean."""
    tool = function_tool(get_weather)
    assert tool.strict_json_schema and tool.params_json_schema["required"] == ["city", "unit"]
    expect = Expect(text=PARALLEL_TEXT, fed_back="25度")
    check(
        lambda: asyncio.run(run_agent("chat", False, mock, "weather-parallel", tool)), mock, expect
    )
    served = mock.requests()[0].response
    assert served is not None
    assert all('"unit":' in call.arguments for call in served.tool_calls)
