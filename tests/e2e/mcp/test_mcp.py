"""Scripted MCP servers (docs/mcp.md), through a real `mockllm serve`, the official OpenAI
SDK on the model side and the official `mcp` SDK's client on the tool side, over both
transports: the loop closed by a correct harness, and broken by one that fabricates a
result, drops one, or calls a tool nobody asked for."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from mockllm.testing.client import Client
from tests.support import ROOT, ServerProcess

DOC = (ROOT / "docs" / "mcp.md").read_text()
pytest_plugins = ["pytester"]


def block(language: str, name: str) -> str:
    """The doc's ```language file=name block."""
    return DOC.split(f"```{language} file={name}\n", 1)[1].split("```", 1)[0]


@pytest.fixture(scope="module")
def scenarios(server: ServerProcess) -> None:
    for name in ("orders.yaml", "faults.yaml"):
        answer = server.http.post(
            "/_mockllm/scenarios",
            content=block("yaml", name),
            headers={"content-type": "application/yaml"},
        )
        assert answer.status_code in (200, 201), answer.text


Session = Callable[[], Any]


@asynccontextmanager
async def over_http(server: ServerProcess, session: str) -> AsyncIterator[ClientSession]:
    url = f"{server.url}/s/orders-loop/{session}/mcp/orders"
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        yield mcp


@asynccontextmanager
async def over_stdio(
    server: ServerProcess, session: str, tmp: Path
) -> AsyncIterator[ClientSession]:
    (tmp / "orders.yaml").write_text(block("yaml", "orders.yaml"))
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "mockllm",
            "mcp",
            "orders-loop",
            "orders",
            "--scenarios",
            str(tmp),
            "--url",
            server.url,
            "--session",
            session,
        ],
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        yield mcp


async def harness(
    server: ServerProcess, session: str, mcp: ClientSession, how: str = "correct"
) -> str | openai.BadRequestError:
    """The doc's agent loop, with a way of getting it wrong: `fabricate` answers the call
    without running the tool (with the tool's very text), `drop` runs it and sends back
    something else, `extra` also runs a tool the model never asked for."""
    llm = openai.OpenAI(
        base_url=f"{server.url}/s/orders-loop/{session}/v1", api_key="sk-test", max_retries=0
    )
    listed = (await mcp.list_tools()).tools
    tools = [
        {
            "type": "function",
            "function": {"name": f"mcp__orders__{t.name}", "parameters": t.input_schema},
        }
        for t in listed
    ]
    messages: list[Any] = [{"role": "user", "content": "Where is my order A1?"}]
    while True:
        try:
            reply = (
                llm.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
                .choices[0]
                .message
            )
        except openai.BadRequestError as refused:
            return refused
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content or ""
        for call in reply.tool_calls:
            name = call.function.name.removeprefix("mcp__orders__")
            if how == "fabricate":
                text = "Order A1: shipped on 2026-11-30"
            else:
                result = await mcp.call_tool(name, json.loads(call.function.arguments))
                text = "\n".join(c.text for c in result.content if c.type == "text")
                if how == "drop":
                    text = "I looked it up."
                if how == "extra":
                    await mcp.call_tool(name, {"order_id": "Z9"})
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


def verdict(server: ServerProcess, session: str) -> dict[str, dict[str, Any]]:
    data = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    return {c["name"]: c for c in data["checks"]}


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


# --- the loop, over streamable HTTP -------------------------------------------------------


@pytest.mark.usefixtures("scenarios")
def test_a_correct_harness_closes_the_loop(server: ServerProcess, session: str) -> None:
    async def go() -> Any:
        async with over_http(server, session) as mcp:
            return await harness(server, session, mcp)

    assert run(go()) == "Your order A1 shipped on 2026-11-30."
    checks = verdict(server, session)
    loop = {k: v for k, v in checks.items() if k.startswith("mcp_")}
    assert set(loop) == {
        "mcp_calls_executed",
        "mcp_results_fed_back",
        "mcp_calls_asked",
        "mcp_answer_after_tool",
    }
    assert all(c["ok"] for c in checks.values()), checks
    client = Client(server.url).session(session)
    client.assert_tool_executed("lookup_order", server="orders", arguments={"order_id": "A1"})
    client.assert_mcp_loop_closed()
    client.assert_clean_verdict()
    client.assert_model_calls(exactly=2)  # MCP messages are not model calls
    text = client.transcript()
    assert 'harness called lookup_order({"order_id": "A1"})' in text
    assert "→ returned: Order A1: shipped on 2026-11-30" in text
    assert text.index("calls mcp__orders__lookup_order") < text.index("harness called")
    assert text.index("harness called") < text.index("tool result for")


@pytest.mark.usefixtures("scenarios")
def test_a_harness_that_fabricates_the_result_fails(server: ServerProcess, session: str) -> None:
    async def go() -> Any:
        async with over_http(server, session) as mcp:
            return await harness(server, session, mcp, "fabricate")

    # The made-up text is the tool's very own: the model side alone cannot tell.
    assert run(go()) == "Your order A1 shipped on 2026-11-30."
    checks = verdict(server, session)
    assert checks["calls_answered"]["ok"]
    assert not checks["mcp_calls_executed"]["ok"]
    assert (
        "answered it, but the tool never ran before that" in checks["mcp_calls_executed"]["message"]
    )
    assert not checks["mcp_answer_after_tool"]["ok"]
    client = Client(server.url).session(session)
    with pytest.raises(AssertionError, match="MCP tool orders/lookup_order was not executed"):
        client.assert_tool_executed("lookup_order", server="orders")
    with pytest.raises(AssertionError, match="the MCP loop failed 2 checks"):
        client.assert_mcp_loop_closed()


@pytest.mark.usefixtures("scenarios")
def test_a_harness_that_drops_the_result_fails(server: ServerProcess, session: str) -> None:
    async def go() -> Any:
        async with over_http(server, session) as mcp:
            return await harness(server, session, mcp, "drop")

    refused = run(go())
    assert isinstance(refused, openai.BadRequestError)
    assert "expected what the MCP tool returned ('Order A1: shipped on 2026-11-30')" in str(refused)
    checks = verdict(server, session)
    assert checks["mcp_calls_executed"]["ok"]
    assert not checks["mcp_results_fed_back"]["ok"]
    assert (
        "'I looked it up.', not what the tool returned" in checks["mcp_results_fed_back"]["message"]
    )


@pytest.mark.usefixtures("scenarios")
def test_a_harness_that_calls_an_unasked_tool_fails(server: ServerProcess, session: str) -> None:
    async def go() -> Any:
        async with over_http(server, session) as mcp:
            return await harness(server, session, mcp, "extra")

    assert run(go()) == "Your order A1 shipped on 2026-11-30."
    checks = verdict(server, session)
    assert checks["mcp_calls_executed"]["ok"]
    assert not checks["mcp_calls_asked"]["ok"]
    assert (
        'orders/lookup_order({"order_id": "Z9"}), which no model call asked for'
        in (checks["mcp_calls_asked"]["message"])
    )


# --- the loop, over stdio ---------------------------------------------------------------


@pytest.mark.usefixtures("scenarios")
def test_stdio_joins_the_servers_log(server: ServerProcess, session: str, tmp_path: Path) -> None:
    async def go() -> Any:
        async with over_stdio(server, session, tmp_path) as mcp:
            return await harness(server, session, mcp)

    assert run(go()) == "Your order A1 shipped on 2026-11-30."
    entries = server.requests(session=session)
    kinds = [(e["api"], (e.get("mcp") or {}).get("method")) for e in entries]
    # the client sends tools/list without waiting on its notification (which has no answer),
    # so the two may reach the log in either order (seen once in a fresh-clone make test)
    assert kinds[0] == ("mcp", "initialize")
    assert sorted(kinds[1:3]) == [("mcp", "notifications/initialized"), ("mcp", "tools/list")]
    assert kinds[3:] == [
        ("openai-chat", None),
        ("mcp", "tools/call"),
        ("openai-chat", None),
    ]
    assert entries[4]["mcp"]["transport"] == "stdio"
    assert all(c["ok"] for c in verdict(server, session).values())


@pytest.mark.usefixtures("scenarios")
def test_stdio_fabrication_fails_too(server: ServerProcess, session: str, tmp_path: Path) -> None:
    async def go() -> Any:
        async with over_stdio(server, session, tmp_path) as mcp:
            return await harness(server, session, mcp, "fabricate")

    run(go())
    assert not verdict(server, session)["mcp_calls_executed"]["ok"]


def test_stdio_writes_its_own_log_file(tmp_path: Path) -> None:
    (tmp_path / "orders.yaml").write_text(block("yaml", "orders.yaml"))
    log = tmp_path / "mcp.jsonl"

    async def go() -> Any:
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                "-m",
                "mockllm",
                "mcp",
                "orders-loop",
                "orders",
                "--scenarios",
                str(tmp_path / "orders.yaml"),
                "--log",
                str(log),
            ],
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
            await mcp.initialize()
            return await mcp.call_tool("lookup_order", {"order_id": "A1"})

    result = run(go())
    assert result.content[0].text == "Order A1: shipped on 2026-11-30"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    calls = [e["mcp"] for e in lines if e["mcp"].get("method") == "tools/call"]
    calls[0].pop("id")  # the client's numbering
    assert calls == [
        {
            "server": "orders",
            "transport": "stdio",
            "method": "tools/call",
            "tool": "lookup_order",
            "arguments": {"order_id": "A1"},
            "answer": 0,  # the first of the tool's two scripted results answered it
            "scripted": {"lookup_order": 2},
            "result": {"text": "Order A1: shipped on 2026-11-30", "is_error": False},
        }
    ]


# --- the doc's harness and test, run as written --------------------------------------------


def test_the_docs_test_passes_under_the_plugin(pytester: pytest.Pytester) -> None:
    for name in ("orders.yaml",):
        pytester.makefile(".yaml", **{name.removesuffix(".yaml"): block("yaml", name)})
    pytester.makepyfile(agent=block("python", "agent.py"))
    pytester.makepyfile(test_agent=block("python", "test_agent.py"))
    result = pytester.runpytest_subprocess("-p", "mockllm", "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=1)


def test_the_docs_test_fails_a_fabricating_agent(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", orders=block("yaml", "orders.yaml"))
    agent = block("python", "agent.py")
    broken = (
        agent.replace(
            "result = await mcp.call_tool(name, json.loads(call.function.arguments))",
            "result = await mcp.call_tool(name, {'order_id': 'A1'}) if False else None",
        )
        .replace(
            'text = "\\n".join(c.text for c in result.content if c.type == "text")',
            'text = "Order A1: shipped on 2026-11-30"',
        )
        .replace('error = "ERROR: " if result.is_error else ""', 'error = ""')
    )
    assert broken != agent
    pytester.makepyfile(agent=broken)
    pytester.makepyfile(test_agent=block("python", "test_agent.py"))
    result = pytester.runpytest_subprocess("-p", "mockllm", "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*MCP tool orders/lookup_order was not executed*"])


def test_the_docs_transcript_is_what_a_session_shows(server: ServerProcess, session: str) -> None:
    shown = DOC.split("```text\n", 1)[1].split("```", 1)[0]
    assert "mcp (log seq 5) · server orders · harness called lookup_order" in shown
    server.http.post(
        "/_mockllm/scenarios",
        content=block("yaml", "orders.yaml"),
        headers={"content-type": "application/yaml"},
    )

    async def go() -> Any:
        async with over_http(server, session) as mcp:
            return await harness(server, session, mcp)

    run(go())
    text = Client(server.url).session(session).transcript()

    # The doc elides ids, the session and where the session's log starts.
    def normal(lines: str) -> list[str]:
        cut = [line.split(" id=call_")[0].split("for call_")[0] for line in lines.splitlines()]
        return [re.sub(r"log seq \d+", "log seq N", line) for line in cut[1:]]

    assert normal(text) == normal(shown)


def test_every_yaml_block_of_the_doc_loads() -> None:
    from mockllm.loading.loader import load_text

    names = [load_text(block("yaml", n)).name for n in ("orders.yaml", "faults.yaml")]
    assert names == ["orders-loop", "orders-faults"]


def test_the_mcp_route_without_the_scenario_is_a_json_rpc_404(server: ServerProcess) -> None:
    r = httpx.post(
        f"{server.url}/s/no-such/mcp/orders", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
    )
    assert r.status_code == 404
    assert r.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32602, "message": "mockllm: no scenario 'no-such'"},
    }


@pytest.mark.usefixtures("scenarios")
def test_report_judges_the_loop_from_the_log_file(server: ServerProcess, session: str) -> None:
    """`mockllm report LOGFILE` has no scenarios: the tools/list answers in the log say which
    model calls name an MCP tool."""

    async def go() -> Any:
        async with over_http(server, session) as mcp:
            return await harness(server, session, mcp, "fabricate")

    run(go())
    assert server.log_file is not None
    done = subprocess.run(
        [sys.executable, "-m", "mockllm", "report", str(server.log_file), "--session", session],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "mcp_calls_executed" in done.stdout
    assert "the tool never ran before that" in done.stdout
