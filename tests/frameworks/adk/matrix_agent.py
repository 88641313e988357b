"""Google ADK's LlmAgent run by its Runner, in .venv-adk (tests/frameworks/test_adk.py;
agent.py beside it is the Vertex AI run of test_adk_vertex.py):
`matrix_agent.py CELLS` prints each run's outcome (tests/frameworks/child.py).

WIRE is `gemini` (its own Gemini model, `base_url`), `anthropic` (AnthropicLlm with an
AsyncAnthropic client) or `openai-chat` (LiteLlm, its documented path to other models);
streamed runs use StreamingMode.SSE."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import child

os.environ.setdefault("GOOGLE_API_KEY", "test")  # any key: the endpoint is mockllm

from anthropic import AsyncAnthropic
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.models.anthropic_llm import AnthropicLlm
from google.adk.models.google_llm import Gemini
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types


def get_weather(city: str) -> str:
    """Get the current weather of a city.

    Args:
        city: the city's name
    """
    weather: str = child.weather(city)
    return weather


def model(wire: str, url: str) -> object:
    if wire == "gemini":
        return Gemini(model="gemini-2.5-flash", base_url=url)
    if wire == "anthropic":
        sdk = AsyncAnthropic(base_url=url, api_key="test", max_retries=0)
        return AnthropicLlm(model="claude-sonnet-4-6", client=sdk)
    return LiteLlm(model="openai/gpt-4.1", api_base=url, api_key="test", num_retries=0)


async def run(wire: str, stream: bool, url: str, prompt: str) -> str:
    agent = LlmAgent(name="weather", model=model(wire, url), tools=[get_weather])
    runner = InMemoryRunner(agent=agent, app_name="matrix")
    session = await runner.session_service.create_session(app_name="matrix", user_id="u")
    mode = StreamingMode.SSE if stream else StreamingMode.NONE
    text = ""
    async for event in runner.run_async(
        user_id="u",
        session_id=session.id,
        new_message=types.Content(role="user", parts=[types.Part(text=prompt)]),
        run_config=RunConfig(streaming_mode=mode),
    ):
        if event.error_code:  # ADK ends the run on a model error without raising
            raise RuntimeError(f"{event.error_code}: {event.error_message}")
        if event.is_final_response() and event.content and event.content.parts:
            text = "".join(p.text or "" for p in event.content.parts if not p.thought)
    return text


if __name__ == "__main__":
    child.main(run)
