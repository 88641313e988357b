"""strands-agents' `Agent(model=OllamaModel(host, model_id=...))` with one tool, run against
mockllm with nothing changed but the host (the URL in argv[1]). Runs in .venv-strands
(strands pins mcp<2.2; the suite pins 2.3.0). Prints the answer, the messages and any
exception as JSON."""

from __future__ import annotations

import json
import sys

from strands import Agent, tool
from strands.models.ollama import OllamaModel


@tool  # type: ignore[untyped-decorator]  # strands is not in the venv mypy runs in
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return {"北京": "25度", "上海": "22度", "Paris": "18 °C"}.get(city, "unknown city")


def main() -> None:
    model = OllamaModel(sys.argv[1], model_id="llama3.2")
    agent = Agent(model=model, tools=[get_weather], callback_handler=None)
    outcome: dict[str, object] = {}
    try:
        result = agent(sys.argv[2])
        outcome["answer"] = str(result).strip()
        outcome["stop_reason"] = result.stop_reason
    except Exception as error:  # what ended the run: printed for the test to read
        outcome["error"] = f"{type(error).__name__}: {error}"
    outcome["messages"] = agent.messages
    print(json.dumps(outcome, default=str))


if __name__ == "__main__":
    main()
