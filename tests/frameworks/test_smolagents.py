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


TEXT_LAST = {  # what most scenarios end with: a text turn
    "turns": [
        {"reply": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}},
        {"reply": {"text": "18 °C in Paris."}},
    ]
}


def test_a_text_turn_under_tool_choice_required_is_refused(mock: Session) -> None:
    """smolagents sets `tool_choice: "required"`: no model answers text then. Strict mode
    says so (the scenario must script `final_answer`), rather than serving it silently."""
    name = mock.add_scenario({"name": "smol-text-last", **TEXT_LAST})
    with pytest.raises(Exception, match="no model could answer so"):
        agent(mock, name, stream=False).run("Weather in Paris?")
    last = mock.requests()[-1]
    assert last.request["tool_choice"] == "required" and last.response is not None
    assert last.response.status == 400
    assert [v.rule for v in last.violations] == ["impossible_reply"]
    assert "requires one (tool_choice required)" in last.violations[0].message
    assert "requests_accepted" in failed(mock)


def test_under_validation_warn_the_text_is_served_and_logged(mock: Session) -> None:
    name = mock.add_scenario({"name": "smol-text-warn", "validation": "warn", **TEXT_LAST})
    agent(mock, name, stream=False, max_steps=2).run("Weather in Paris?")
    second = mock.requests()[1]
    assert second.response is not None and second.response.status == 200
    assert [v.rule for v in second.violations] == ["impossible_reply"]


def test_at_max_steps_a_call_offered_no_tools_is_logged_not_blamed(mock: Session) -> None:
    """At `max_steps` smolagents asks for a final answer offering no tools. A scripted call
    there is served and logged (no model would make it); the harness is not blamed for it
    (`errors_fed_back`). A turn keyed to such requests (`match: {tools: none}`) answers."""
    name = mock.add_scenario({"name": "smol-steps", **WEATHER_THEN_ANSWER})
    agent(mock, name, stream=False, max_steps=1).run("Weather in Paris?")
    last = mock.requests()[-1]
    assert not last.request.get("tools")
    assert [v.rule for v in last.violations] == ["impossible_reply"]
    assert "offers no tools" in last.violations[0].message
    assert "errors_fed_back" not in failed(mock)
    keyed = {
        "name": "smol-steps-keyed",
        "turns": [
            WEATHER_THEN_ANSWER["turns"][0],
            {"match": {"tools": "none"}, "reply": {"text": "It is 18 °C in Paris."}},
        ],
    }
    mock.clear()
    name = mock.add_scenario(keyed)
    assert agent(mock, name, stream=False, max_steps=1).run("Weather?") == "It is 18 °C in Paris."
    assert all(not e.violations for e in mock.requests())
