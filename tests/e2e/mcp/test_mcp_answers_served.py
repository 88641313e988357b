"""`assert_all_mcp_answers_served` (issue 34): every result a scripted MCP server scripts
answered a `tools/call`, as aimock's MCP fakes fail on unconsumed entries. Through a real
`mockllm serve` and the official `mcp` SDK's client over streamable HTTP, both sides: an
agent that stops after one call fails it, naming the results it never used; one that goes
the whole way passes. Asked for, like `assert_all_turns_served`: not a verdict check."""

from __future__ import annotations

import asyncio

import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mockllm.testing.client import Client
from tests.support import ServerProcess

SCENARIO = """
name: shelf-answers
mcp_servers:
  shelf:
    tools:
      - name: stock
        results:
          - when: {sku: special}
            text: "special: 1 left"
          - text: "12 in stock"
          - text: "11 in stock"
      - name: restock
        results:
          - text: "ordered"
turns:
  - reply: {text: done}
"""


async def _calls(
    server: ServerProcess, session: str, calls: list[tuple[str, dict[str, str]]]
) -> None:
    url = f"{server.url}/s/shelf-answers/{session}/mcp/shelf"
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        await mcp.list_tools()
        for name, arguments in calls:
            await mcp.call_tool(name, arguments)


@pytest.fixture
def scenario(server: ServerProcess) -> None:
    Client(server.url).add_scenario(SCENARIO)


def test_an_agent_that_stops_early_leaves_scripted_results_unused(
    server: ServerProcess, session: str, scenario: None
) -> None:
    asyncio.run(_calls(server, session, [("stock", {"sku": "x"})]))
    mock = Client(server.url).session(session)
    with pytest.raises(AssertionError) as caught:
        mock.assert_all_mcp_answers_served()
    text = str(caught.value)
    assert "shelf.stock: 2 of 3 scripted results never answered a call (result 0, 2)" in text
    assert "shelf.restock: 1 of 1 scripted results never answered a call (result 0)" in text
    calls = [e.raw["mcp"] for e in mock.logged() if (e.raw.get("mcp") or {}).get("answer") == 1]
    assert calls and calls[0]["scripted"] == {"stock": 3}  # the log says which, of how many


def test_an_agent_that_uses_every_scripted_result_passes(
    server: ServerProcess, session: str, scenario: None
) -> None:
    calls = [
        ("stock", {"sku": "x"}),
        ("stock", {"sku": "special"}),
        ("stock", {"sku": "y"}),
        ("restock", {}),
    ]
    asyncio.run(_calls(server, session, calls))
    mock = Client(server.url).session(session)
    mock.assert_all_mcp_answers_served()
    answer = server.http.post(
        "/_mockllm/check", params={"session": session}, json={"check": "all_mcp_answers_served"}
    )
    assert answer.json() == {"ok": True}
