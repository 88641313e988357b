"""AutoGen 0.7's AssistantAgent (autogen-agentchat, autogen-ext's model clients), run and
streamed (`model_client_stream`), looping through tools and reflecting on their results.
It runs in .venv-autogen (tests/frameworks/autogen/requirements.txt), every cell of a wire
in one process; the log and the verdict are read here, from the shared server.

Version trap (docs/frameworks.md): autogen-ext 0.7.5's AnthropicChatCompletionClient
passes `temperature` where anthropic 2.x no longer takes it, so it fails before any
request; the cell records it and fails once a release fixes it."""

from __future__ import annotations

import pytest

from tests.support import ROOT, ServerProcess

from .matrix import PARALLEL_TEXT, Expect, FrameworkError, check_cells, fails

PYTHON = ROOT / ".venv-autogen" / "bin" / "python"
AGENT = ROOT / "tests" / "frameworks" / "autogen" / "agent.py"
PARIS = "It is 18 °C and sunny in Paris."


def expected(wire: str) -> dict[tuple[str, bool], Expect]:
    cells = {}
    for stream in (False, True):
        if wire == "anthropic":  # the version trap: no request is made
            trap = Expect(
                raises=FrameworkError,
                message="unexpected keyword argument 'temperature'",
                failed=fails("requests_made"),
            )
            cells["weather-parallel", stream] = trap
            continue
        cells["weather-parallel", stream] = Expect(text=PARALLEL_TEXT)
        # The parse error goes back as the call's result, and the model retries.
        cells["malformed-arguments", stream] = Expect(
            text=PARIS, fed_back="^Error: Unterminated string"
        )
        cells["stream-cut", stream] = Expect(raises=FrameworkError, message="APIConnectionError")
    return cells


@pytest.mark.matrix
@pytest.mark.parametrize("wire", ["openai-chat", "anthropic"])
def test_autogen(server: ServerProcess, wire: str) -> None:
    check_cells(server.url, PYTHON, AGENT, wire, expected(wire))
