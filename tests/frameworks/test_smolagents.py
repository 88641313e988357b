"""smolagents' ToolCallingAgent on its OpenAI Chat model, run and streamed (issue 38).

It sends every call back as assistant text (`Calling tools:\\n[{'id': 'call_…', …}]`) and
every result as a user `Observation:` message, with `tool_choice: "required"` on every
request, and ends the run by calling its own `final_answer` tool (never answered: the run
is over). Plain text is valid to the real API: mockllm holds the text for the reply it
served, and the verdict counts the `Observation:` as the call's answer."""

from __future__ import annotations

import pytest
from smolagents import OpenAIServerModel, ToolCallingAgent, tool

from mockllm import Session

from .matrix import WEATHER

ENDS = "smolagents ends the run with final_answer, whose call is never answered"
WEATHER_THEN_ANSWER = {
    "turns": [
        {"reply": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}},
        {
            "allow": {"calls_answered": ENDS},
            "reply": {
                "tool_calls": [{"name": "final_answer", "arguments": {"answer": "18 °C in Paris."}}]
            },
        },
    ]
}


@tool  # type: ignore[untyped-decorator]
def get_weather(city: str) -> str:
    """Get the current weather of a city.

    Args:
        city: the city's name
    """
    if city not in WEATHER:
        raise ValueError(f"no weather for {city!r}")
    return WEATHER[city]


def agent(mock: Session, scenario: str, stream: bool, max_steps: int = 4) -> ToolCallingAgent:
    model = OpenAIServerModel(
        model_id="gpt-4.1",
        api_base=mock.url(scenario),
        api_key="test",
        client_kwargs={"max_retries": 0},
    )
    return ToolCallingAgent(
        tools=[get_weather],
        model=model,
        max_steps=max_steps,
        verbosity_level=0,
        stream_outputs=stream,
    )


def failed(mock: Session) -> dict[str, str]:
    verdict = mock.verdict()
    return {c.name: c.message for c in verdict.checks if c.status == "failed"}


@pytest.mark.parametrize("stream", [False, True])
def test_calls_carried_as_text_are_the_replies_served(mock: Session, stream: bool) -> None:
    name = mock.add_scenario({"name": f"smol-weather-{stream}", **WEATHER_THEN_ANSWER})
    assert agent(mock, name, stream).run("Weather in Paris?") == "18 °C in Paris."
    entries = mock.requests()
    assert [e.turn for e in entries] == [0, 1]
    second = entries[1].request["messages"]
    assert second[2]["role"] == "assistant" and "Calling tools:" in str(second[2]["content"])
    assert second[3]["role"] == "user" and "Observation:" in str(second[3]["content"])
    assert all(not e.violations for e in entries)
    assert failed(mock) == {}  # get_weather's Observation counts as its answer
