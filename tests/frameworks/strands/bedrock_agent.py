"""strands-agents' default `Agent()` (a BedrockModel over ConverseStream) with one tool,
run against mockllm with nothing changed but the endpoint: boto3 reads it from
AWS_ENDPOINT_URL_BEDROCK_RUNTIME, which tests/frameworks/test_strands.py sets with dummy
credentials. Runs in .venv-strands (strands pins mcp<2.2; the suite pins 2.3.0). Prints the
answer, the messages and any exception as JSON."""

from __future__ import annotations

import json
import sys

from strands import Agent, tool


@tool  # type: ignore[untyped-decorator]  # strands is not in the venv mypy runs in
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return {"Paris": "18 °C and sunny"}.get(city, "unknown city")


def main() -> None:
    agent = Agent(tools=[get_weather], callback_handler=None)
    outcome: dict[str, object] = {"model": agent.model.config.get("model_id")}
    try:
        result = agent(sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?")
        outcome["answer"] = str(result).strip()
        outcome["stop_reason"] = result.stop_reason
    except Exception as error:  # what ended the run: printed for the test to read
        outcome["error"] = f"{type(error).__name__}: {error}"
    outcome["messages"] = agent.messages
    print(json.dumps(outcome, default=str))


if __name__ == "__main__":
    main()
