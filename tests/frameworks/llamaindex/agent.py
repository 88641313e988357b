"""LlamaIndex's FunctionAgent and ReActAgent, in .venv-llamaindex
(tests/frameworks/test_llamaindex.py): `agent.py CELLS` prints each run's outcome
(tests/frameworks/child.py). A cell's wire is `KIND/WIRE`: KIND `function` or `react`,
WIRE `openai-chat` (llama-index-llms-openai), `anthropic` (-anthropic) or `gemini`
(-google-genai, `http_options` base URL); streamed runs set the agent's `streaming`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import child
from google.genai import types
from llama_index.core.agent.workflow import FunctionAgent, ReActAgent
from llama_index.llms.anthropic import Anthropic
from llama_index.llms.google_genai import GoogleGenAI
from llama_index.llms.openai import OpenAI


def get_weather(city: str) -> str:
    """Get the current weather of a city."""
    weather: str = child.weather(city)
    return weather


def llm(wire: str, url: str) -> object:
    if wire == "anthropic":
        return Anthropic(model="claude-sonnet-4-6", base_url=url, api_key="test", max_retries=0)
    if wire == "gemini":
        options = types.HttpOptions(base_url=url)
        return GoogleGenAI(model="gemini-2.5-flash", api_key="test", http_options=options)
    return OpenAI(model="gpt-4o-mini", api_base=url, api_key="test", max_retries=0)


async def run(wire: str, stream: bool, url: str, prompt: str) -> str:
    kind, api = wire.split("/")
    agent_type = FunctionAgent if kind == "function" else ReActAgent
    agent = agent_type(tools=[get_weather], llm=llm(api, url), streaming=stream)
    handler = agent.run(user_msg=prompt, max_iterations=6)
    if stream:
        async for _ in handler.stream_events():
            pass
    result = await handler
    return str(result.response.content)  # type: ignore[attr-defined]


if __name__ == "__main__":
    child.main(run)
