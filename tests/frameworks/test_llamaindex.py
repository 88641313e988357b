"""LlamaIndex 0.14's FunctionAgent and ReActAgent (llama-index-core's agent workflows) on
llama-index-llms-openai (Chat), -google-genai (Gemini, `http_options` base URL) and
-anthropic, run and streamed (the agent's `streaming`, its events drained). It runs in
.venv-llamaindex (tests/frameworks/llamaindex/requirements.txt), every cell of a wire in
one process; the log and the verdict are read here, from the shared server.

Findings for its users (docs/frameworks.md): FunctionAgent runs the tool on cut JSON
(`city=None`) instead of feeding the parse error back; on Gemini streamed it ends a
MALFORMED_FUNCTION_CALL run with the text "None"; ReActAgent offers no tools (its calls
are text), so a scenario that expects them refuses its request; and
llama-index-llms-anthropic 0.12.3 fails on anthropic 2.x before any request (a version
trap: the cell records it and fails once a release fixes it)."""

from __future__ import annotations

import pytest

from mockllm import Client
from tests.support import ROOT, ServerProcess, session_id

from .matrix import PARALLEL_TEXT, Cell, Expect, FrameworkError, check_cells, fails, run_children

PYTHON = ROOT / ".venv-llamaindex" / "bin" / "python"
AGENT = ROOT / "tests" / "frameworks" / "llamaindex" / "agent.py"
PARIS = "It is 18 °C and sunny in Paris."
NOT_OFFERED = Expect(
    raises=FrameworkError,
    message="expected tools get_weather to be offered, got none",
    failed=fails("expectations_met"),
)
TRAP = Expect(
    raises=FrameworkError, message="Cannot instantiate typing.Union", failed=fails("requests_made")
)
CUT = "Connection error|incomplete chunked read|payload is not completed"


def expected(wire: str) -> dict[tuple[str, bool], Expect]:
    cells = {}
    for stream in (False, True):
        for scenario in ("weather-parallel", "malformed-arguments", "stream-cut"):
            if wire == "react/openai-chat":
                cells[scenario, stream] = NOT_OFFERED
            elif wire == "function/anthropic":
                cells[scenario, stream] = TRAP
        if wire.startswith("function/") and wire != "function/anthropic":
            cells["weather-parallel", stream] = Expect(text=PARALLEL_TEXT)
            cells["stream-cut", stream] = Expect(raises=FrameworkError, message=CUT)
    if wire == "function/openai-chat":
        for stream in (False, True):  # the tool ran on the cut JSON's missing city
            cells["malformed-arguments", stream] = Expect(
                text=PARIS, fed_back="no weather for None", failed=fails("errors_fed_back")
            )
    if wire == "function/gemini":
        cells["malformed-arguments", False] = Expect(
            raises=FrameworkError, message="terminated early: MALFORMED_FUNCTION_CALL"
        )
        cells["malformed-arguments", True] = Expect(text="None")
    return cells


WIRES = ["function/openai-chat", "function/gemini", "function/anthropic", "react/openai-chat"]


@pytest.mark.matrix
@pytest.mark.parametrize("wire", WIRES)
def test_llamaindex(server: ServerProcess, wire: str) -> None:
    check_cells(server.url, PYTHON, AGENT, wire, expected(wire))


# ReActAgent's calls are text in its own format, read back by its parser: the scenario
# scripts that text, and the tool's answer comes back as an `Observation:`.
def react(action_input: str) -> dict[str, object]:
    call = f"Thought: I need the weather.\nAction: get_weather\nAction Input: {action_input}"
    answer = "Thought: I can answer without using any more tools.\nAnswer: It is 18 °C in Paris."
    return {"turns": [{"reply": {"text": call}}, {"reply": {"text": answer}}]}


REACT = {
    # the tool's answer is the next request's observation
    "react-weather": (react('{"city": "Paris"}'), "Observation: 18 °C"),
    # cut JSON: its parser's error goes back as a user message, and the run goes on
    "react-cut-json": (react('{"city": "Par'), "Error while parsing the output"),
}


@pytest.mark.matrix
def test_react_agent_reads_its_text_calls(server: ServerProcess) -> None:
    client = Client(server.url)
    cases = [(name, stream) for name in REACT for stream in (False, True)]
    sessions = [client.session(session_id(f"react-{name}-{stream}")) for name, stream in cases]
    cells: list[Cell] = []
    for (name, stream), mock in zip(cases, sessions, strict=True):
        scenario = mock.add_scenario({"name": name, **REACT[name][0]})
        cells.append(("react/openai-chat", stream, mock.url(scenario), "Weather in Paris?"))
    outcomes = run_children(PYTHON, AGENT, cells)
    for (name, _), mock, outcome in zip(cases, sessions, outcomes, strict=True):
        assert outcome == "It is 18 °C in Paris.", mock.transcript()
        second = mock.requests()[1].request["messages"]
        assert REACT[name][1] in str(second), mock.transcript()
        assert all(c.status != "failed" for c in mock.verdict().checks), mock.transcript()
