"""CrewAI 1.x: one Agent with one Task, kicked off by a Crew, in .venv-crewai
(tests/frameworks/test_crewai.py): `agent.py CELLS` prints each run's outcome
(tests/frameworks/child.py). Wires are CrewAI's native providers: `openai-chat`,
`openai-responses` (`api="responses"`; `openai-responses/chained` adds `auto_chain=True`),
`anthropic`, and `gemini`, whose provider ignores `base_url` (it would call Google's
endpoint): its base URL goes in `client_params={"http_options": {"base_url": …}}`.
Streamed runs set the LLM's `stream`. Telemetry is off (child.QUIET)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import child
from crewai import LLM, Agent, Crew, Task
from crewai.tools import tool


@tool("get_weather")  # type: ignore[untyped-decorator]
def get_weather(city: str, unit: str = "celsius") -> str:
    """Get the current weather of a city."""
    weather: str = child.weather(city)
    return weather


def llm(wire: str, url: str, stream: bool) -> LLM:
    if wire == "gemini":
        params = {"http_options": {"base_url": url}}
        return LLM(
            model="gemini/gemini-2.5-flash", api_key="test", client_params=params, stream=stream
        )
    if wire.startswith("openai-responses"):  # `…/chained`: auto_chain=True
        chained = wire.endswith("/chained")
        return LLM(
            model="openai/gpt-4.1",
            api="responses",
            auto_chain=chained,
            base_url=url,
            api_key="test",
            stream=stream,
            max_retries=0,
        )
    model = "anthropic/claude-sonnet-4-6" if wire == "anthropic" else "openai/gpt-4.1"
    return LLM(model=model, base_url=url, api_key="test", stream=stream, max_retries=0)


def run(wire: str, stream: bool, url: str, prompt: str) -> str:
    agent = Agent(
        role="weather reporter",
        goal="Answer questions about the weather",
        backstory="You look the weather up with your tool.",
        tools=[get_weather],
        llm=llm(wire, url, stream),
        max_iter=5,
        verbose=False,
    )
    task = Task(description=prompt, expected_output="the weather", agent=agent)
    return str(Crew(agents=[agent], tasks=[task], verbose=False).kickoff().raw)


if __name__ == "__main__":
    child.main(run)
