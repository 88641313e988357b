"""pydantic-ai's MCP toolsets (`MCPToolset`, on FastMCP's client) with an agent whose model
is mockllm, the tools mockllm's scripted MCP server (docs/mcp.md): the loop closes, and
two tool-side faults with what pydantic-ai does with them."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from mockllm import Client, Session
from tests.support import ServerProcess

from .test_mcp_agents import SCENARIO, with_order


@pytest.fixture
def mock(server: ServerProcess, session: str) -> Session:
    client = Client(server.url)
    for text in (SCENARIO, with_order("E1"), with_order("S1")):
        client.add_scenario(text)
    return client.session(session)


async def ask(mock: Session, scenario: str, **options: Any) -> Any:
    llm = openai.AsyncOpenAI(base_url=mock.url(scenario), api_key="test", max_retries=0)
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(openai_client=llm))
    # The server's first MCP request starts the SDK's session manager: on a loaded
    # machine that can outlast FastMCP's default initialize timeout.
    toolset = MCPToolset(mock.mcp_url(scenario, "orders"), init_timeout=30, **options)
    agent = Agent(model, toolsets=[toolset])
    try:
        return (await agent.run("Where is my order?")).output
    except Exception as e:
        return e
    finally:
        await llm.close()


def fed_back(mock: Session) -> list[str]:
    return [r.content for e in mock.requests() if e.api != "mcp" for r in e.tool_results]


def test_the_loop_closes(mock: Session) -> None:
    answer = asyncio.run(asyncio.wait_for(ask(mock, "agents-mcp"), 90))
    assert answer == "Your order A1 shipped on 2026-11-30."
    mock.assert_tool_executed("lookup_order", server="orders", arguments={"order_id": "A1"})
    mock.assert_mcp_loop_closed()
    mock.assert_clean_verdict()


def test_a_json_rpc_error(mock: Session) -> None:
    outcome = asyncio.run(asyncio.wait_for(ask(mock, "agents-mcp-e1"), 90))
    assert outcome == "Your order A1 shipped on 2026-11-30."  # the script goes on regardless
    # pydantic-ai hands the model the error as JSON: the verdict reads it as an error.
    assert fed_back(mock) == ['{"error":"database is down"}']
    assert all(c.ok for c in mock.verdict().checks), mock.verdict()


def test_a_slow_tool(mock: Session) -> None:
    outcome = asyncio.run(asyncio.wait_for(ask(mock, "agents-mcp-s1", read_timeout=1.0), 90))
    assert outcome == "Your order A1 shipped on 2026-11-30."
    assert fed_back(mock) == ['{"error":"Request \'tools/call\' timed out"}']
    assert all(c.ok for c in mock.verdict().checks), mock.verdict()
