"""strands-agents' Agent on its OpenAI Responses model (issue 38), stateless and with
`stateful=True`: chained by `previous_response_id`, it still sends the run's items again
(the user message, the assistant's text, each `function_call` without its `id`, the
outputs). The API appends them to the stored conversation and accepts them; mockllm reads
the repeat once, so the second request is turn 1, not a divergence.

strands' `openai` extra pins mcp 2.1 and an older openai than the suite, so the agent runs
in a virtualenv of its own (`.venv-strands`, from tests/frameworks/strands/requirements.txt)
as a subprocess; the log and the verdict are read here, from the shared server."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from mockllm import Session
from tests.support import ROOT

from .matrix import PARALLEL_TEXT, PROMPTS

PYTHON = ROOT / ".venv-strands" / "bin" / "python"
AGENT = ROOT / "tests" / "frameworks" / "strands" / "agent.py"


def run(mock: Session, scenario: str, *options: str) -> dict[str, Any]:
    assert PYTHON.exists(), f"{PYTHON} is missing: `make test` makes it (Makefile, STRANDS)"
    command = [str(PYTHON), str(AGENT), mock.url(scenario), PROMPTS[scenario], *options]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(done.stdout)
    return outcome


@pytest.mark.parametrize("stateful", [False, True])
def test_parallel_calls_round_trip(mock: Session, stateful: bool) -> None:
    outcome = run(mock, "weather-parallel", *(["--stateful"] if stateful else []))
    assert outcome == {"text": PARALLEL_TEXT}, mock.transcript()
    first, second = mock.requests()
    assert [first.turn, second.turn] == [0, 1] and not second.violations
    chained = second.request.get("previous_response_id")
    assert first.response is not None and (chained is not None) == stateful
    if stateful:
        assert f'"id":"{chained}"' in first.response.body  # the first response, streamed
    sent = [i.get("type", "message") for i in second.request["input"]]
    assert sent.count("function_call") == 2  # sent again, even when chained
    assert all(c.status != "failed" for c in mock.verdict().checks)
