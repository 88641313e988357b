"""strands-agents' default `Agent()` (BedrockModel over ConverseStream) runs a tool loop
against mockllm with nothing changed but the endpoint (`AWS_ENDPOINT_URL_BEDROCK_RUNTIME`)
and dummy credentials (SigV4 is not checked).

strands-agents pins mcp<2.2 and mockllm pins the SDK's 2.3.0, so the agent runs in a
virtualenv of its own (`.venv-strands`, which `make test` makes from
tests/frameworks/strands/requirements.txt) as a subprocess that prints how its run ended;
the log is read here, from the shared server."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from tests.support import ROOT, ServerProcess

PYTHON = ROOT / ".venv-strands" / "bin" / "python"
AGENT = ROOT / "tests" / "frameworks" / "strands" / "bedrock_agent.py"


def run(server: ServerProcess, scenario: str, session: str) -> dict[str, Any]:
    assert PYTHON.exists(), f"{PYTHON} is missing: `make test` makes it (Makefile, STRANDS)"
    env = {
        **os.environ,
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": f"{server.url}/s/{scenario}/{session}",
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "dummy",
        "AWS_REGION": "us-east-1",
        # Nothing of the machine's own AWS setup: no profile, no instance metadata.
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
        "OTEL_SDK_DISABLED": "true",
    }
    env.pop("PYTHONPATH", None)  # the agent's venv has no mockllm: it only talks HTTP
    done = subprocess.run(
        [str(PYTHON), str(AGENT)], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return outcome


def test_the_default_agent_closes_a_tool_loop(server: ServerProcess, session: str) -> None:
    outcome = run(server, "weather-single", session)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["answer"] == "It is 18 °C and sunny in Paris."
    assert outcome["stop_reason"] == "end_turn"
    use = outcome["messages"][1]["content"][0]["toolUse"]
    result = outcome["messages"][2]["content"][0]["toolResult"]
    assert (use["name"], use["input"]) == ("get_weather", {"city": "Paris"})
    assert result["toolUseId"] == use["toolUseId"] and result["status"] == "success"
    entries = server.requests(session=session)
    assert [(e["api"], e["stream"], e["turn"]) for e in entries] == [
        ("bedrock-converse", True, 0),
        ("bedrock-converse", True, 1),
    ]
    # The default model is an inference profile id: it is in the path, as Bedrock has it.
    assert entries[0]["path"].endswith(f"/model/{outcome['model']}/converse-stream")
    assert all(e["violations"] == [] and e["expectation_failures"] == [] for e in entries)
    assert all(e["headers"]["authorization"].startswith("[redacted") for e in entries)


def test_a_mid_stream_error_ends_the_run_with_bedrock_s_exception(
    server: ServerProcess, session: str
) -> None:
    """fault-stream-error: a modelStreamErrorException frame after three events; strands
    does not retry it and the run ends with botocore's EventStreamError, as against AWS."""
    outcome = run(server, "fault-stream-error", session)
    assert "modelStreamErrorException" in outcome["error"]
    assert "answer" not in outcome
