"""strands' Agent on its OpenAI Responses model, run by tests/frameworks/test_strands.py in
.venv-strands: `agent.py BASE_URL PROMPT [--stateful]` prints the run's answer as JSON
(`{"text": …}`, or `{"error": …}` with what ended it)."""

from __future__ import annotations

import json
import sys

from strands import Agent, tool
from strands.models.openai_responses import OpenAIResponsesModel

WEATHER = {"北京": "25度", "上海": "22度", "Paris": "18 °C"}


@tool  # type: ignore[untyped-decorator]
def get_weather(city: str) -> str:
    """Get the current weather of a city.

    Args:
        city: the city's name
    """
    return WEATHER[city]


def main() -> None:
    url, prompt = sys.argv[1], sys.argv[2]
    model = OpenAIResponsesModel(
        client_args={"base_url": url, "api_key": "test", "max_retries": 0},
        model_id="gpt-4.1",
        stateful="--stateful" in sys.argv,
    )
    agent = Agent(model=model, tools=[get_weather], callback_handler=None)
    try:
        print(json.dumps({"text": str(agent(prompt)).strip()}, ensure_ascii=False))
    except Exception as error:  # what ended the run is the finding: reported, not raised
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}, ensure_ascii=False))


if __name__ == "__main__":
    main()
