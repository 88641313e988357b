"""Google ADK's LlmAgent, run by its InMemoryRunner, on its own Gemini model (`base_url`),
its AnthropicLlm (an AsyncAnthropic client) and LiteLlm (its documented path to OpenAI's
models), run and streamed (StreamingMode.SSE). ADK pins its own google-genai and LiteLLM,
so it runs in .venv-adk (tests/frameworks/adk/requirements.txt; matrix_agent.py) over every cell of a wire
at once; the log and the verdict are read here, from the shared server.

What ADK does on the failure modes is a finding for its users (docs/frameworks.md): it
stops on cut JSON (MALFORMED_FUNCTION_CALL) without retrying or feeding an error back, and
on Anthropic feeds a tool's failure back without `is_error`."""

from __future__ import annotations

import pytest

from tests.support import ROOT, ServerProcess

from .matrix import PARALLEL_TEXT, Expect, FrameworkError, check_cells, fails

PYTHON = ROOT / ".venv-adk" / "bin" / "python"
AGENT = ROOT / "tests" / "frameworks" / "adk" / "matrix_agent.py"
CUT = "not completed|incomplete chunked read|Connection error"
MALFORMED = {
    ("gemini", False): Expect(raises=FrameworkError, message="MALFORMED_FUNCTION_CALL"),
    ("gemini", True): Expect(raises=FrameworkError, message="MALFORMED_FUNCTION_CALL"),
    # The missing argument goes back as a plain result: the scenario expects is_error.
    ("anthropic", False): Expect(
        raises=FrameworkError,
        message="expected is_error true, got false",
        fed_back="mandatory input parameters are not present",
        is_error=False,
        failed=fails("errors_fed_back", "expectations_met"),
    ),
    ("anthropic", True): Expect(
        raises=FrameworkError,
        message="ValueError: Invalid JSON",
        failed=fails("calls_answered", "errors_fed_back"),
    ),
    ("openai-chat", False): Expect(
        raises=FrameworkError,
        message="MALFORMED_FUNCTION_CALL",
        failed=fails("calls_answered", "errors_fed_back"),
    ),
    ("openai-chat", True): Expect(
        raises=FrameworkError,
        message="MALFORMED_FUNCTION_CALL",
        failed=fails("calls_answered", "errors_fed_back"),
    ),
}


def expected(wire: str) -> dict[tuple[str, bool], Expect]:
    cells = {}
    for stream in (False, True):
        cells["weather-parallel", stream] = Expect(text=PARALLEL_TEXT)
        cells["malformed-arguments", stream] = MALFORMED[wire, stream]
        cells["stream-cut", stream] = Expect(raises=FrameworkError, message=CUT)
    return cells


@pytest.mark.matrix
@pytest.mark.parametrize("wire", ["gemini", "anthropic", "openai-chat"])
def test_adk(server: ServerProcess, wire: str) -> None:
    check_cells(server.url, PYTHON, AGENT, wire, expected(wire))
