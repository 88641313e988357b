"""OpenAI Agents JS and Mastra with the AI SDK 5 providers (tests/frameworks/agentsjs, Node
test runner), which start their own server with the Node client: every cell must pass, and
none may be lost. Node 20 runs Mastra 0.24 (Mastra 1.x needs Node 22.13)."""

from __future__ import annotations

import pytest

from tests.support import ROOT, node_test_counts, run_node_tests

AGENTS_JS = ROOT / "tests" / "frameworks" / "agentsjs"


@pytest.mark.matrix
def test_agents_js_and_mastra_pass() -> None:
    output = run_node_tests(AGENTS_JS, "node", "--test", "--test-reporter=tap", ".")
    # Agents JS on 2 wires and Mastra on 4, run and streamed, 3 scenarios each
    assert node_test_counts(output) == (36, 0), output
