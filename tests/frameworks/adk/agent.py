"""Google ADK's Agent on Vertex AI with one tool, run against mockllm: Vertex is chosen by
GOOGLE_GENAI_USE_VERTEXAI=TRUE with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, and
the endpoint by the model's `base_url` (MOCKLLM_VERTEX_URL here). The project, location
and an OAuth token also go to google-genai's Client (`client_kwargs`): given only a
base_url, google-genai takes it for an API gateway and posts every request to the bare
base URL (google/adk-python #2560), and without credentials it asks google-auth for
application default credentials, which are not there offline. Runs in .venv-adk (ADK
requires google-genai<3; the suite pins 3.6.1). Prints the answer, the calls, the results
and any exception as JSON. argv: the prompt, and "sse" to stream; ADK_ATTEMPTS turns
google-genai's retries on."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from google.adk.agents import Agent, RunConfig
from google.adk.agents.run_config import StreamingMode
from google.adk.models import Gemini
from google.adk.runners import InMemoryRunner
from google.genai import types
from google.oauth2.credentials import Credentials


def get_weather(city: str) -> str:
    """Current weather in a city."""
    return {"Paris": "18 °C and sunny", "北京": "25度", "上海": "22度"}.get(city, "unknown city")


async def main() -> None:
    prompt = sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?"
    stream = len(sys.argv) > 2 and sys.argv[2] == "sse"
    attempts = os.environ.get("ADK_ATTEMPTS")  # google-genai's retries: off unless given
    retries = (
        types.HttpRetryOptions(attempts=int(attempts), initial_delay=0.05) if attempts else None
    )
    model = Gemini(
        model="gemini-2.5-flash",
        base_url=os.environ["MOCKLLM_VERTEX_URL"],
        client_kwargs={
            "project": os.environ["GOOGLE_CLOUD_PROJECT"],
            "location": os.environ["GOOGLE_CLOUD_LOCATION"],
            "credentials": Credentials(token="ya29.mock-token"),  # type: ignore[no-untyped-call]
        },
        retry_options=retries,
    )
    agent = Agent(name="weather", model=model, instruction="Answer.", tools=[get_weather])
    runner = InMemoryRunner(agent=agent)
    mode = StreamingMode.SSE if stream else StreamingMode.NONE
    outcome: dict[str, object] = {"calls": [], "results": []}
    try:
        events = await runner.run_debug(
            prompt, run_config=RunConfig(streaming_mode=mode), quiet=True
        )
        for event in (e for e in events if not e.partial):
            for call in event.get_function_calls():
                outcome["calls"].append({"name": call.name, "args": call.args})  # type: ignore[attr-defined]
            for result in event.get_function_responses():
                outcome["results"].append(result.response)  # type: ignore[attr-defined]
        finals = [e for e in events if e.is_final_response() and e.content and not e.partial]
        parts = finals[-1].content.parts if finals else []
        outcome["answer"] = "".join(p.text or "" for p in parts or [])
    except Exception as error:  # what ended the run: printed for the test to read
        outcome["error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(outcome, default=str, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main())
