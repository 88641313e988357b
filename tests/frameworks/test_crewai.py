"""CrewAI 1.x: an Agent with a Task, kicked off by a Crew, on its native OpenAI, Anthropic
and Gemini providers, run and streamed (the LLM's `stream`). CrewAI's pins conflict with
the suite's (an older openai, anthropic 0.x, mcp 1.x), so it runs in .venv-crewai
(tests/frameworks/crewai/requirements.txt), every cell of a wire in one process, with its
telemetry off; the log and the verdict are read here, from the shared server.

Findings for its users (docs/frameworks.md): its Gemini provider ignores `base_url` (the
base URL goes in `client_params={"http_options": {"base_url": …}}`); on a cut stream it
sends the request again and finishes; on Anthropic it asks `count_tokens` before each
request (side requests, docs/scenarios.md); on Anthropic a tool's failure goes back without
`is_error` (the scenario's expectation refuses it, and the crew retries the whole task
three times); on Gemini a MALFORMED_FUNCTION_CALL (no parts) is retried, then raised. Its tool schemas
declare a parameter with a default (`unit="celsius"`) required, on every wire; on Gemini,
which does not hold the model to the schema, it then runs a call without `unit` and the
verdict's `errors_fed_back` names it."""

from __future__ import annotations

import pytest

from tests.support import ROOT, ServerProcess

from .matrix import PARALLEL_TEXT, Expect, FrameworkError, check_cells, fails

PYTHON = ROOT / ".venv-crewai" / "bin" / "python"
AGENT = ROOT / "tests" / "frameworks" / "crewai" / "agent.py"
PARIS = "It is 18 °C and sunny in Paris."
MALFORMED = {
    "openai-chat": Expect(text=PARIS, fed_back="^Error: Failed to parse tool arguments as JSON"),
    "anthropic": Expect(
        raises=FrameworkError,
        message="expected is_error true, got false",
        fed_back="arguments validation failed",
        is_error=False,
        failed=fails("errors_fed_back", "expectations_met"),
    ),
    "gemini": Expect(raises=FrameworkError, message="Invalid response from LLM call - None"),
}


# CrewAI's streamed Responses handler drops the calls: the run ends on the reply's text.
DROPPED = fails("calls_answered", "errors_fed_back")
RESPONSES = {
    ("weather-parallel", False): Expect(text=PARALLEL_TEXT),
    ("weather-parallel", True): Expect(text="我先查一下。", failed=fails("calls_answered")),
    ("malformed-arguments", False): Expect(
        text=PARIS, fed_back="^Error: Failed to parse tool arguments as JSON"
    ),
    ("malformed-arguments", True): Expect(
        raises=FrameworkError, message="Invalid response from LLM call - None", failed=DROPPED
    ),
    ("stream-cut", False): Expect(text=PARIS, fed_back="18 °C"),
    ("stream-cut", True): Expect(
        raises=FrameworkError,
        message="Invalid response from LLM call - None",
        failed=fails("calls_answered"),
    ),
}
# auto_chain=True: the dropped call is still in the chained response, so the API's 400.
NO_OUTPUT = "No tool output found for function call"
CHAINED = {
    **RESPONSES,
    ("malformed-arguments", True): Expect(
        raises=FrameworkError, message=NO_OUTPUT, failed=DROPPED | fails("requests_accepted")
    ),
    ("stream-cut", True): Expect(
        raises=FrameworkError,
        message=NO_OUTPUT,
        failed=fails("calls_answered", "requests_accepted"),
    ),
}


def expected(wire: str) -> dict[tuple[str, bool], Expect]:
    if wire.startswith("openai-responses"):
        return CHAINED if wire.endswith("/chained") else RESPONSES
    cells = {}
    for stream in (False, True):
        cells["weather-parallel", stream] = Expect(text=PARALLEL_TEXT)
        if wire == "gemini":  # `unit` declared required (its default dropped), calls run without
            cells["weather-parallel", stream] = Expect(
                text=PARALLEL_TEXT, failed=fails("errors_fed_back")
            )
        cells["malformed-arguments", stream] = MALFORMED[wire]
        # The cut request is sent again (the SDK's own retry), and the run finishes.
        cells["stream-cut", stream] = Expect(
            text=PARIS, fed_back="18 °C", is_error=None if wire == "openai-chat" else False
        )
    return cells


@pytest.mark.matrix
@pytest.mark.parametrize(
    "wire", ["openai-chat", "openai-responses", "openai-responses/chained", "anthropic", "gemini"]
)
def test_crewai(server: ServerProcess, wire: str) -> None:
    check_cells(server.url, PYTHON, AGENT, wire, expected(wire))
