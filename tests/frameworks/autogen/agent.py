"""AutoGen 0.7's AssistantAgent, in .venv-autogen (tests/frameworks/test_autogen.py):
`agent.py CELLS` prints each run's outcome (tests/frameworks/child.py). Wires: `openai-chat`
(autogen-ext's OpenAIChatCompletionClient) and `anthropic` (its AnthropicChatCompletionClient);
streamed runs set `model_client_stream`. The agent loops through tools up to five times and
reflects on their results, so the run ends on the model's text."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import child
from autogen_agentchat.agents import AssistantAgent
from autogen_core.models import ChatCompletionClient
from autogen_ext.models.openai import OpenAIChatCompletionClient


def get_weather(city: str) -> str:
    """Get the current weather of a city."""
    weather: str = child.weather(city)
    return weather


def client(wire: str, url: str) -> ChatCompletionClient:
    if wire == "anthropic":
        from autogen_ext.models.anthropic import AnthropicChatCompletionClient

        return AnthropicChatCompletionClient(
            model="claude-sonnet-4-6", base_url=url, api_key="test", max_retries=0
        )
    return OpenAIChatCompletionClient(model="gpt-4.1", base_url=url, api_key="test", max_retries=0)


async def run(wire: str, stream: bool, url: str, prompt: str) -> str:
    model = client(wire, url)
    agent = AssistantAgent(
        "weather",
        model_client=model,
        tools=[get_weather],
        reflect_on_tool_use=True,
        max_tool_iterations=5,
        model_client_stream=stream,
    )
    try:
        result = await agent.run(task=prompt)
    finally:
        await model.close()
    return str(result.messages[-1].content)


if __name__ == "__main__":
    child.main(run)
