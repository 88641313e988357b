"""Google ADK's Agent on Vertex AI (GOOGLE_GENAI_USE_VERTEXAI=TRUE, GOOGLE_CLOUD_PROJECT,
GOOGLE_CLOUD_LOCATION, the model's base_url at mockllm) closes a tool loop with parallel
calls, streamed (StreamingMode.SSE) and not, and meets a 429 as on Vertex: without retries
its run ends with ADK's _ResourceExhaustedError, with google-genai's retries on it gets
through.

google-adk 2.13.0 requires google-genai<3 and the suite pins 3.6.1, so the agent runs in a
virtualenv of its own (`.venv-adk`, which `make test` makes from
tests/frameworks/adk/requirements.txt) as a subprocess that prints how its run ended; the
log is read here, from the shared server."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from tests.support import ROOT, ServerProcess

PYTHON = ROOT / ".venv-adk" / "bin" / "python"
AGENT = ROOT / "tests" / "frameworks" / "adk" / "agent.py"
PLACE = "/v1beta1/projects/mock-project/locations/us-central1/publishers/google/models/"


def run(
    server: ServerProcess, scenario: str, session: str, prompt: str, stream: bool, **env: str
) -> dict[str, Any]:
    assert PYTHON.exists(), f"{PYTHON} is missing: `make test` makes it (Makefile, ADK)"
    environment = {
        **os.environ,
        "GOOGLE_GENAI_USE_VERTEXAI": "TRUE",
        "GOOGLE_CLOUD_PROJECT": "mock-project",
        "GOOGLE_CLOUD_LOCATION": "us-central1",
        "MOCKLLM_VERTEX_URL": f"{server.url}/s/{scenario}/{session}",
        # Nothing of the machine's own Google setup: no ADC file, no metadata server.
        "GOOGLE_APPLICATION_CREDENTIALS": os.devnull,
        "NO_GCE_CHECK": "True",
        "OTEL_SDK_DISABLED": "true",
        **env,
    }
    environment.pop("PYTHONPATH", None)  # the agent's venv has no mockllm: it only talks HTTP
    argv = [str(PYTHON), str(AGENT), prompt, "sse" if stream else "none"]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=120, env=environment, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return outcome


@pytest.mark.parametrize("stream", [False, True])
def test_the_agent_closes_a_parallel_tool_loop(
    server: ServerProcess, session: str, stream: bool
) -> None:
    name = f"{session}-{stream}"
    outcome = run(server, "weather-parallel", name, "北京和上海?", stream)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["calls"] == [
        {"name": "get_weather", "args": {"city": "北京"}},
        {"name": "get_weather", "args": {"city": "上海"}},
    ]
    assert outcome["results"] == [{"result": "25度"}, {"result": "22度"}]
    assert outcome["answer"] == "北京多云25℃，上海小雨22℃。"
    entries = server.requests(session=name)
    assert [(e["api"], e["stream"], e["turn"]) for e in entries] == [
        ("vertex-gemini", stream, 0),
        ("vertex-gemini", stream, 1),
    ]
    method = "streamGenerateContent" if stream else "generateContent"
    assert all(e["path"].endswith(f"{PLACE}gemini-2.5-flash:{method}") for e in entries)
    assert all(e["violations"] == [] and e["expectation_failures"] == [] for e in entries)
    assert all(e["headers"]["authorization"].startswith("[redacted") for e in entries)


def test_a_429_ends_the_run_unless_retries_are_on(server: ServerProcess, session: str) -> None:
    """rate-limited: two 429s in Vertex's words, then the call. ADK's default client has no
    retries; with google-genai's (three attempts) the run goes on to the tool."""
    bare = run(server, "rate-limited", f"{session}-bare", "Paris?", False)
    assert bare["error"].startswith("_ResourceExhaustedError")
    assert "vertex-ai/generative-ai/docs/error-code-429" in bare["error"]
    kept = run(server, "rate-limited", f"{session}-kept", "Paris?", False, ADK_ATTEMPTS="3")
    assert "error" not in kept, kept.get("error")
    assert kept["calls"] == [{"name": "get_weather", "args": {"city": "Paris"}}]
    assert kept["answer"] == "It is 18 °C and sunny in Paris."
    statuses = [e["response"]["status"] for e in server.requests(session=f"{session}-kept")]
    assert statuses == [429, 429, 200, 200]


def test_the_documented_recipe_is_the_agent_the_suite_runs() -> None:
    """docs/frameworks.md's ADK recipe: every line of it is in agent.py, which the tests
    above run (the recipe cannot run in the suite's venv, whose google-genai is 3.x)."""
    doc = (ROOT / "docs" / "frameworks.md").read_text()
    recipe = doc.split("# recipe: adk-vertex", 1)[1].split("```", 1)[0]
    source = AGENT.read_text()
    lines = [line.split("  #")[0].strip() for line in recipe.splitlines()[1:]]
    missing = [line for line in lines if line and line not in source]
    assert not missing, missing
