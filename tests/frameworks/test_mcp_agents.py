"""The OpenAI Agents SDK's MCP servers (`MCPServerStreamableHttp`, `MCPServerStdio`) against
mockllm's scripted MCP server, the model played by mockllm too (docs/mcp.md): the loop
closes, and two tool-side faults with what the SDK does with them."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import openai
import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

from mockllm import Client, Session
from tests.support import ServerProcess

HIDDEN = "An error occurred while running the tool. Please try again."
SCENARIO = """\
name: agents-mcp
mcp_servers:
  orders:
    tools:
      - name: lookup_order
        description: Look an order up by its id
        input_schema:
          type: object
          properties: {order_id: {type: string}}
          required: [order_id]
        results:
          - {when: {order_id: A1}, text: "Order A1: shipped on 2026-11-30"}
          - {when: {order_id: E1}, fault: {error: {code: -32000, message: "database is down"}}}
          - {when: {order_id: S1}, text: "late", fault: {delay_ms: 3000}}
turns:
  - reply:
      tool_calls: [{name: {mcp: orders/lookup_order}, arguments: {order_id: A1}}]
  - expect: {tool_results: [{from_mcp: true}]}
    reply: {text: "Your order A1 shipped on 2026-11-30."}
"""


def with_order(order: str) -> str:
    """The scenario with the model asking for another order (and no expectation on its result)."""
    return (
        SCENARIO.replace("name: agents-mcp", f"name: agents-mcp-{order.lower()}")
        .replace("arguments: {order_id: A1}", f"arguments: {{order_id: {order}}}")
        .replace("  - expect: {tool_results: [{from_mcp: true}]}\n    reply:", "  - reply:")
    )


@pytest.fixture
def mock(server: ServerProcess, session: str) -> Session:
    client = Client(server.url)
    for text in (SCENARIO, with_order("E1"), with_order("S1")):
        client.add_scenario(text)
    return client.session(session)


async def ask(mock: Session, scenario: str, mcp: Any) -> str:
    llm = openai.AsyncOpenAI(base_url=mock.url(scenario), api_key="test", max_retries=0)
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=llm)
    try:
        async with mcp:
            agent = Agent(
                name="clerk", instructions="Use the tools.", model=model, mcp_servers=[mcp]
            )
            return str((await Runner.run(agent, "Where is my order?")).final_output)
    finally:
        await llm.close()


def http(mock: Session, scenario: str, timeout: float = 30) -> MCPServerStreamableHttp:
    return MCPServerStreamableHttp(
        {"url": mock.mcp_url(scenario, "orders")}, client_session_timeout_seconds=timeout
    )


def test_the_loop_closes_over_streamable_http(mock: Session) -> None:
    answer = asyncio.run(asyncio.wait_for(ask(mock, "agents-mcp", http(mock, "agents-mcp")), 90))
    assert answer == "Your order A1 shipped on 2026-11-30."
    mock.assert_tool_executed("lookup_order", server="orders", arguments={"order_id": "A1"})
    mock.assert_mcp_loop_closed()
    mock.assert_clean_verdict()


def test_the_loop_closes_over_stdio(mock: Session, server: ServerProcess, tmp_path: Path) -> None:
    (tmp_path / "agents.yaml").write_text(SCENARIO)
    stdio = MCPServerStdio(
        {
            "command": sys.executable,
            "args": [
                "-m",
                "mockllm",
                "mcp",
                "agents-mcp",
                "orders",
                "--scenarios",
                str(tmp_path),
                "--url",
                server.url,
                "--session",
                mock.name,
            ],
        },
        client_session_timeout_seconds=30,
    )
    answer = asyncio.run(asyncio.wait_for(ask(mock, "agents-mcp", stdio), 90))
    assert answer == "Your order A1 shipped on 2026-11-30."
    mock.assert_mcp_loop_closed()


def test_a_json_rpc_error_is_fed_back_as_the_tools_error(mock: Session) -> None:
    answer = asyncio.run(
        asyncio.wait_for(ask(mock, "agents-mcp-e1", http(mock, "agents-mcp-e1")), 90)
    )
    assert answer == "Your order A1 shipped on 2026-11-30."  # the script's text: it ignores errors
    [request] = [e for e in mock.requests() if e.api != "mcp" and e.tool_results]
    # The SDK hides the tool's error behind a fixed text; that still says "error".
    assert request.tool_results[0].content == HIDDEN
    verdict = {c.name: c for c in mock.verdict().checks}
    assert verdict["mcp_calls_executed"].ok
    assert verdict["mcp_results_fed_back"].ok, verdict["mcp_results_fed_back"].message


def test_a_slow_tool_meets_the_sessions_timeout(mock: Session) -> None:
    answer = asyncio.run(
        asyncio.wait_for(ask(mock, "agents-mcp-s1", http(mock, "agents-mcp-s1", 1)), 90)
    )
    assert answer == "Your order A1 shipped on 2026-11-30."  # the script goes on regardless
    [request] = [e for e in mock.requests() if e.api != "mcp" and e.tool_results]
    # The SDK gives up after its 1 s and says so to the model: no result was made up.
    assert request.tool_results[0].content == HIDDEN
    assert all(c.ok for c in mock.verdict().checks), mock.verdict()
    [call] = [
        e for e in mock.requests() if e.api == "mcp" and e.raw["mcp"].get("method") == "tools/call"
    ]
    assert call.raw["mcp"]["fault"] == "delay 3000 ms"
