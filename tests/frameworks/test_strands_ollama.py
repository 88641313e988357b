"""strands-agents' `OllamaModel` (the `ollama` client's AsyncClient, always streamed) runs a
tool loop with parallel calls against mockllm with nothing changed but the host. It sends
each result as `{role: tool, content}` with neither `tool_name` nor `tool_call_id`, so
mockllm pairs them by position, as Ollama's template reads them.

It runs in `.venv-strands` (strands pins mcp<2.2), as a subprocess that prints how its run
ended; the log is read here, from the shared server."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from tests.support import ROOT, ServerProcess

PYTHON = ROOT / ".venv-strands" / "bin" / "python"
AGENT = ROOT / "tests" / "frameworks" / "strands" / "ollama_agent.py"


def run(server: ServerProcess, scenario: str, session: str, prompt: str) -> dict[str, Any]:
    assert PYTHON.exists(), f"{PYTHON} is missing: `make test` makes it (Makefile, STRANDS)"
    env = {**os.environ, "OTEL_SDK_DISABLED": "true"}
    env.pop("PYTHONPATH", None)  # the agent's venv has no mockllm: it only talks HTTP
    host = f"{server.url}/s/{scenario}/{session}"
    done = subprocess.run(
        [str(PYTHON), str(AGENT), host, prompt],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return outcome


def test_ollama_model_closes_a_parallel_tool_loop(server: ServerProcess, session: str) -> None:
    outcome = run(server, "weather-parallel", session, "北京和上海?")
    assert "error" not in outcome, outcome.get("error")
    assert outcome["answer"] == "北京多云25℃，上海小雨22℃。"
    uses = [b["toolUse"] for b in outcome["messages"][1]["content"] if "toolUse" in b]
    assert [u["input"] for u in uses] == [{"city": "北京"}, {"city": "上海"}]
    entries = server.requests(session=session)
    assert [(e["api"], e["stream"], e["turn"]) for e in entries] == [
        ("ollama", True, 0),
        ("ollama", True, 1),
    ]
    results = entries[1]["tool_results"]
    assert [(r["call_id"], r["content"], r["paired"]) for r in results] == [
        ("turn0.call0", "25度", "by position"),
        ("turn0.call1", "22度", "by position"),
    ]
    assert all(e["violations"] == [] and e["expectation_failures"] == [] for e in entries)


def test_a_mid_stream_error_line_ends_the_run(server: ServerProcess, session: str) -> None:
    """fault-stream-error: an `{"error"}` line after three; the ollama client raises
    ResponseError and strands does not retry it."""
    outcome = run(server, "fault-stream-error", session, "Paris?")
    assert outcome["error"].startswith("ResponseError")
    assert "answer" not in outcome
