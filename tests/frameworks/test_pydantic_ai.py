"""pydantic-ai's Agent on its OpenAI Chat, OpenAI Responses, Anthropic and Bedrock
Converse models, run and streamed (`run` with an event stream handler: every model
request streams)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable
from typing import Any

import boto3
import pytest
from anthropic import AsyncAnthropic
from botocore.config import Config
from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelConnectionError
from pydantic_ai.messages import AgentStreamEvent
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.bedrock import BedrockConverseModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.bedrock import BedrockProvider
from pydantic_ai.providers.openai import OpenAIProvider

from mockllm import Session

from .matrix import PARALLEL_TEXT, PROMPTS, Expect, check, fails, get_weather

EXPECTED: dict[tuple[str, str, bool], Expect] = {}
for api in ("chat", "responses", "anthropic", "bedrock"):
    for stream in (False, True):
        EXPECTED["weather-parallel", api, stream] = Expect(text=PARALLEL_TEXT)
        # The validation error goes back as a retry prompt (Anthropic, Bedrock: an error result).
        EXPECTED["malformed-arguments", api, stream] = Expect(
            text="It is 18 °C and sunny in Paris.",
            fed_back="json_invalid",
            is_error=True if api in ("anthropic", "bedrock") else None,
        )
        EXPECTED["stream-cut", api, stream] = Expect(raises=ModelConnectionError)

CASES = sorted(EXPECTED)


def model(api: str, mock: Session, scenario: str) -> tuple[Model, Any]:
    if api == "bedrock":  # boto3 with any credentials and no retries of its own
        client = boto3.client(
            "bedrock-runtime",
            endpoint_url=mock.url(scenario, api="bedrock"),
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
            config=Config(retries={"total_max_attempts": 1}),
        )
        provider = BedrockProvider(bedrock_client=client)
        return BedrockConverseModel("us.anthropic.claude-sonnet-4-6", provider=provider), (
            contextlib.nullcontext()
        )
    if api == "anthropic":
        sdk = AsyncAnthropic(
            base_url=mock.url(scenario, api="anthropic"), api_key="test", max_retries=0
        )
        return AnthropicModel(
            "claude-sonnet-4-6", provider=AnthropicProvider(anthropic_client=sdk)
        ), sdk
    client = AsyncOpenAI(base_url=mock.url(scenario), api_key="test", max_retries=0)
    kind = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
    return kind("gpt-4o-mini", provider=OpenAIProvider(openai_client=client)), client


async def run_agent(api: str, stream: bool, mock: Session, scenario: str) -> str:
    chat_model, sdk = model(api, mock, scenario)
    agent = Agent(chat_model, tools=[get_weather])

    async def drain(_ctx: object, events: AsyncIterable[AgentStreamEvent]) -> None:
        async for _ in events:
            pass

    async with sdk:  # the SDK client is ours to close, inside the loop that used it
        result = await agent.run(PROMPTS[scenario], event_stream_handler=drain if stream else None)
    return result.output


@pytest.mark.parametrize(("scenario", "api", "stream"), CASES)
def test_agent(mock: Session, scenario: str, api: str, stream: bool) -> None:
    check(
        lambda: asyncio.run(run_agent(api, stream, mock, scenario)),
        mock,
        EXPECTED[scenario, api, stream],
    )


@pytest.mark.parametrize("api", ["chat", "anthropic"])
def test_run_stream_stops_at_the_first_text_and_leaves_the_calls_unanswered(
    mock: Session, api: str
) -> None:
    """`run_stream` takes the first text it streams as the final output: a reply with text
    before its tool calls ends the run there — a pydantic-ai behaviour the verdict shows."""

    async def run() -> str:
        chat_model, sdk = model(api, mock, "weather-parallel")
        agent = Agent(chat_model, tools=[get_weather])
        async with sdk, agent.run_stream(PROMPTS["weather-parallel"]) as result:
            return await result.get_output()

    check(
        lambda: asyncio.run(run()),
        mock,
        Expect(text="我先查一下。", failed=fails("calls_answered")),
    )
