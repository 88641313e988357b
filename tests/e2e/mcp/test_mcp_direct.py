"""A `tools/call` answered past the SDK's transport (serving/mcp_direct.py) over real HTTP
to a real `mockllm serve`: the same bytes and headers as the SDK's own answer to the same
request (a session's first tools request is the SDK's; its later ones are not), and the
official `mcp` client's calls on one session, past the first, answered as scripted."""

from __future__ import annotations

import json
from typing import Any

import httpx
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.mcp.test_mcp import block, run
from tests.support import ServerProcess

ACCEPT = "application/json, text/event-stream"


def opened(http: httpx.Client, url: str) -> dict[str, str]:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}}  # fmt: skip
    r = http.post(url, json=init, headers={"accept": ACCEPT})
    assert r.status_code == 200, r.text
    headers = {"accept": ACCEPT, "mcp-session-id": r.headers["mcp-session-id"],
               "mcp-protocol-version": "2025-11-25"}  # fmt: skip
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert http.post(url, json=note, headers=headers).status_code == 202
    return headers


def answer(http: httpx.Client, url: str, headers: dict[str, str], message: Any) -> Any:
    r = http.post(url, content=json.dumps(message), headers={**headers,
                  "content-type": "application/json"})  # fmt: skip
    shown = [(k, v) for k, v in r.headers.multi_items() if k != "date"]
    shown = [(k, "SID" if v == headers["mcp-session-id"] else v) for k, v in shown]
    return r.status_code, shown, r.content


def orders_url(server: ServerProcess, session: str) -> str:
    """docs/mcp.md's orders scenario posted to `server`, and its MCP server's URL."""
    server.http.post("/_mockllm/scenarios", content=block("yaml", "orders.yaml"),
                     headers={"content-type": "application/yaml"})  # fmt: skip
    return f"{server.url}/s/orders-loop/{session}/mcp/orders"


def test_a_direct_answer_is_the_sdks_answer_byte_for_byte(
    server: ServerProcess, session: str
) -> None:
    url = orders_url(server, session)
    asks = [
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "lookup_order", "arguments": {"order_id": "A1"}}},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
         "params": {"name": "nope", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
    ]  # fmt: skip
    with httpx.Client(timeout=10) as http:
        sdk, direct = [], []
        for ask in asks:  # each the first tools request of its own session: the SDK's
            sdk.append(answer(http, url, opened(http, url), ask))
        established = opened(http, url)
        answer(http, url, established, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        for ask in asks:
            direct.append(answer(http, url, established, ask))
    assert direct == sdk
    assert json.loads(direct[0][2])["result"]["content"][0]["text"].startswith("Order A1")
    assert json.loads(direct[1][2])["error"]["code"] == -32602
    assert ("content-length", str(len(direct[0][2]))) in direct[0][1]


def test_many_calls_on_one_session_with_the_official_client(
    server: ServerProcess, session: str
) -> None:
    url = orders_url(server, session)

    async def calls() -> list[Any]:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as mcp:
            await mcp.initialize()
            got = [await mcp.call_tool("lookup_order", {"order_id": "A1"}) for _ in range(5)]
            got.append(await mcp.call_tool("lookup_order", {"order_id": "Z9"}))
            got.append(await mcp.list_tools())
            return got

    *results, listed = run(calls())
    assert [r.content[0].text for r in results[:5]] == ["Order A1: shipped on 2026-11-30"] * 5
    assert (results[5].is_error, results[5].content[0].text) == (True, "no such order")
    assert [t.name for t in listed.tools] == ["lookup_order"]
    entries = [e for e in server.requests(session=session) if e["api"] == "mcp"]
    called = [e for e in entries if e["mcp"].get("method") == "tools/call"]
    assert [e["response"]["status"] for e in called] == [200] * 6
    assert [e["mcp"].get("answer") for e in called] == [0] * 5 + [1]
