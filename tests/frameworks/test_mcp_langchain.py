"""LangChain's MCP adapters (`langchain-mcp-adapters`, `MultiServerMCPClient`) feeding a
`create_agent` agent whose model is mockllm (langchain-openai), the tools mockllm's
scripted MCP server (docs/mcp.md): the loop closes, and three tool-side faults with what
LangChain does with them.

The adapters require `mcp<2` and mockllm pins the SDK's 2.x, so the agent runs in a
virtualenv of its own (`.venv-langchain-mcp`, which `make test` makes from
tests/frameworks/langchain_mcp/requirements.txt) as a subprocess: an mcp 1.x client against
mockllm's 2.x server, which is how such a harness meets it. The script prints what the
run ended with; the log and the verdict are read here, from the shared server.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from mockllm import Client, Session
from tests.support import ROOT, ServerProcess

from .test_mcp_agents import SCENARIO

PYTHON = ROOT / ".venv-langchain-mcp" / "bin" / "python"
AGENT = ROOT / "tests" / "frameworks" / "langchain_mcp" / "agent.py"
# One more scripted result: a tool error as a result (`isError: true`), not a JSON-RPC error.
ERROR_RESULT = '          - {when: {order_id: X1}, text: "no such order X1", is_error: true}\n'
LANGCHAIN = SCENARIO.replace("name: agents-mcp", "name: langchain-mcp").replace(
    "turns:\n", ERROR_RESULT + "turns:\n", 1
)


def with_order(order: str) -> str:
    """The scenario with the model asking for another order (and no expectation on its result)."""
    return (
        LANGCHAIN.replace("name: langchain-mcp", f"name: langchain-mcp-{order.lower()}")
        .replace("arguments: {order_id: A1}", f"arguments: {{order_id: {order}}}")
        .replace("  - expect: {tool_results: [{from_mcp: true}]}\n    reply:", "  - reply:")
    )


@pytest.fixture
def mock(server: ServerProcess, session: str) -> Session:
    client = Client(server.url)
    for text in (LANGCHAIN, with_order("E1"), with_order("S1"), with_order("X1")):
        client.add_scenario(text)
    return client.session(session)


def run(mock: Session, scenario: str, *options: str) -> dict[str, Any]:
    """The agent's run in its own virtualenv: its answer (or what ended it) and messages."""
    assert PYTHON.exists(), f"{PYTHON} is missing: `make test` makes it (Makefile, LANGCHAIN_MCP)"
    command = [str(PYTHON), str(AGENT), mock.url(scenario), mock.mcp_url(scenario, "orders")]
    done = subprocess.run(
        [*command, *options], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(done.stdout)
    assert outcome.pop("network_attempts") == [], "the agent tried to reach the network"
    return outcome


def model_requests(mock: Session) -> list[Any]:
    return [e for e in mock.requests() if e.api != "mcp"]


def test_the_loop_closes(mock: Session) -> None:
    outcome = run(mock, "langchain-mcp")
    assert outcome["tools"] == ["lookup_order"]  # the adapters offer the bare tool name
    assert outcome["answer"] == "Your order A1 shipped on 2026-11-30."
    tool = outcome["messages"][2]
    assert (tool["type"], tool["status"]) == ("tool", "success")
    assert tool["content"][0]["text"] == "Order A1: shipped on 2026-11-30"
    mock.assert_tool_executed("lookup_order", server="orders", arguments={"order_id": "A1"})
    mock.assert_mcp_loop_closed()
    mock.assert_clean_verdict()
    # The adapters open an MCP session per use: one to list the tools, one for the call.
    methods = [e.raw["mcp"].get("method") for e in mock.requests() if e.api == "mcp"]
    assert methods.count("initialize") == 2, methods


def test_an_error_result_goes_back_to_the_model_as_a_tool_error(mock: Session) -> None:
    outcome = run(mock, "langchain-mcp-x1")
    assert outcome["answer"] == "Your order A1 shipped on 2026-11-30."  # the script's text
    tool = outcome["messages"][2]
    # handle_tool_errors (the default): an isError result is a ToolMessage with status
    # "error" carrying the tool's own text, so the model hears of the failure.
    assert (tool["status"], tool["content"][0]["text"]) == ("error", "no such order X1")
    [request] = [e for e in model_requests(mock) if e.tool_results]
    assert "no such order X1" in request.tool_results[0].content
    assert all(c.ok for c in mock.verdict().checks), mock.verdict()


def test_a_json_rpc_error_ends_the_run(mock: Session) -> None:
    outcome = run(mock, "langchain-mcp-e1")
    # Not handled as a tool error: the SDK's McpError escapes the agent, the run ends and
    # the model is never told (one model request, the one that asked for the tool).
    assert outcome["error"] == {"type": "McpError", "text": "database is down"}
    assert len(model_requests(mock)) == 1
    verdict = {c.name: c for c in mock.verdict().checks}
    assert verdict["mcp_calls_executed"].ok, verdict["mcp_calls_executed"].message
    assert verdict["mcp_results_fed_back"].ok  # nothing fed back is nothing fabricated


def test_a_slow_tool_past_the_sessions_timeout_ends_the_run(mock: Session) -> None:
    outcome = run(mock, "langchain-mcp-s1", "--timeout", "0.5")
    error = outcome["error"]
    # The client's timeout ends its session (a DELETE) while the call still waits in its
    # delay; the mcp SDK then answers that call's POST with a 500 ("Session terminated
    # before the request completed"), and the adapters' mcp 1.x client raises that from its
    # task group when it lands before the group is torn down. Which of the two the agent
    # sees is a race inside the client (CI saw both); either way the run ends on the timeout.
    if error["type"] == "ExceptionGroup":
        assert error["inner"]["type"] == "HTTPStatusError", error
        assert "500 Internal Server Error" in error["inner"]["text"], error
    else:
        assert error == {
            "type": "McpError",
            "text": "Timed out while waiting for response to ClientRequest. Waited 0.5 seconds.",
        }
    assert len(model_requests(mock)) == 1
    [call] = [
        e for e in mock.requests() if e.api == "mcp" and e.raw["mcp"].get("method") == "tools/call"
    ]
    assert call.raw["mcp"]["fault"] == "delay 3000 ms"
