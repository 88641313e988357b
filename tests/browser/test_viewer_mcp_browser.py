"""The viewer shows the MCP loop (docs/mcp.md, docs/viewer.md) in a real headless Chromium:
a real harness (the OpenAI SDK for the model, the `mcp` SDK's client for the tool) runs a
model → MCP tool → model loop against a real server, and the page — live and as the static
report — shows the model's call, the MCP call it led to with what the tool returned, and
the request that sent the result back, in that order; a harness that makes the result up
shows no MCP call and a failed verdict."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement

from mockllm import Client, Session
from mockllm.viewer.page import report_page
from tests.support import ServerProcess, running_server
from tests.support.browser import Viewer, chromium, missing

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))

RESULT = "Order A1: shipped on 2026-11-30"
SCENARIO = """\
name: viewer-mcp
mcp_servers:
  orders:
    tools:
      - name: lookup_order
        input_schema: {type: object, properties: {order_id: {type: string}}}
        results: [{when: {order_id: A1}, text: "Order A1: shipped on 2026-11-30"}]
turns:
  - reply:
      tool_calls: [{name: {mcp: orders/lookup_order}, arguments: {order_id: A1}}]
  - reply: {text: "Your order A1 shipped on 2026-11-30."}
"""


async def harness(mock: Session, run_the_tool: bool) -> str:
    """Offers the MCP tools as mcp__orders__NAME, runs each call on the MCP server (or, the
    faulty one, makes its result up), and sends the result back."""
    llm = openai.OpenAI(base_url=mock.url("viewer-mcp"), api_key="test", max_retries=0)
    async with (
        streamable_http_client(mock.mcp_url("viewer-mcp", "orders")) as (read, write),
        ClientSession(read, write) as mcp,
    ):
        await mcp.initialize()
        tools: list[Any] = [
            {
                "type": "function",
                "function": {"name": f"mcp__orders__{t.name}", "parameters": t.input_schema},
            }
            for t in (await mcp.list_tools()).tools
        ]
        messages: list[Any] = [{"role": "user", "content": "Where is my order A1?"}]
        while True:
            reply = (
                llm.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
                .choices[0]
                .message
            )
            messages.append(reply.model_dump(exclude_none=True))
            if not reply.tool_calls:
                return reply.content or ""
            for call in reply.tool_calls:
                text = RESULT
                if run_the_tool:
                    name = call.function.name.removeprefix("mcp__orders__")
                    done = await mcp.call_tool(name, json.loads(call.function.arguments))
                    text = "".join(c.text for c in done.content if c.type == "text")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def server() -> Iterator[ServerProcess]:
    """A server of the test's own. The live viewer loads the whole log, and on the worker's
    shared server, after the rest of the suite, new sessions did not appear in its list
    within the wait (seen in two full runs, not alone; the closing note of 2026-12-05)."""
    with running_server("--max-body", "1MB") as own:
        yield own


@pytest.fixture
def runs(server: ServerProcess, session: str) -> tuple[Session, Session]:
    """The same loop twice: a correct harness, and one that fabricates the tool's result."""
    client = Client(server.url)
    client.add_scenario(SCENARIO)
    correct, fabricated = client.session(session + "-ran"), client.session(session + "-made-up")
    for mock, ran in ((correct, True), (fabricated, False)):
        answer = asyncio.run(asyncio.wait_for(harness(mock, ran), 60))
        assert answer == "Your order A1 shipped on 2026-11-30."
    return correct, fabricated


def articles(detail: WebElement) -> list[tuple[str, str]]:
    """The session's entries as shown, top to bottom: (kind, text)."""
    found = []
    for a in detail.find_elements(By.CSS_SELECTOR, "ol.requests article.entry"):
        classes = str(a.get_attribute("class")).split()
        found.append(("mcp" if "mcp" in classes else "model", a.text))
    return found


def sees_the_loop_in_order(viewer: Viewer, correct: Session) -> None:
    detail = viewer.pick(correct.name)
    shown = articles(detail)
    first = next(i for i, (k, t) in enumerate(shown) if k == "model")
    call = next(i for i, (k, t) in enumerate(shown) if "harness called" in t)
    second = next(i for i, (k, t) in enumerate(shown) if k == "model" and i > first)
    assert first < call < second, shown  # the model asked, the tool ran, the result went back
    assert shown[first][1].splitlines()[0] == "Request 1"  # MCP messages are not model requests
    assert shown[second][1].splitlines()[0] == "Request 2"
    assert 'harness called lookup_order({"order_id":"A1"})' in shown[call][1]
    assert f"→ returned: {RESULT}" in shown[call][1]
    assert "TOOL RESULT for" in shown[second][1] and RESULT in shown[second][1]
    # The model's call says where it ran: the MCP message's log sequence number.
    [row] = detail.find_elements(By.CSS_SELECTOR, ".call-row")
    seq = detail.find_elements(By.CSS_SELECTOR, "article.mcp-call")[0].get_attribute("data-seq")
    ran = row.find_element(By.CLASS_NAME, "mcp-ran").text
    assert ran == f"ran on MCP orders as lookup_order in #{seq}"
    assert row.find_element(By.CLASS_NAME, "result-side").text.splitlines()[-1] == RESULT
    meta = detail.find_element(By.CSS_SELECTOR, "p.meta").text
    mcp = sum(1 for kind, _ in shown if kind == "mcp")
    assert meta == f"scenario viewer-mcp · 2 requests · {mcp} MCP messages"
    assert "verdict: pass" in detail.find_element(By.CSS_SELECTOR, "section.verdict").text.lower()


def sees_the_made_up_result(viewer: Viewer, fabricated: Session) -> None:
    detail = viewer.pick(fabricated.name)
    assert not [t for _, t in articles(detail) if "harness called" in t]
    [row] = detail.find_elements(By.CSS_SELECTOR, ".call-row")
    assert not row.find_elements(By.CLASS_NAME, "mcp-ran")
    assert RESULT in row.find_element(By.CLASS_NAME, "result-side").text  # the exact text, unrun
    verdict = detail.find_element(By.CSS_SELECTOR, "section.verdict").text.lower()
    assert "verdict: fail" in verdict and "mcp_calls_executed" in verdict


def test_the_live_viewer_shows_the_mcp_loop(
    runs: tuple[Session, Session], server: ServerProcess, browser: WebDriver
) -> None:
    correct, fabricated = runs
    viewer = Viewer(browser).open(f"{server.url}/_mockllm/ui#{correct.name}")
    sees_the_loop_in_order(viewer, correct)
    sees_the_made_up_result(viewer, fabricated)


def test_the_static_report_shows_the_mcp_loop(
    runs: tuple[Session, Session], server: ServerProcess, browser: WebDriver, tmp_path: Path
) -> None:
    correct, fabricated = runs
    entries = [*server.requests(session=correct.name), *server.requests(session=fabricated.name)]
    page = tmp_path / "report.html"
    page.write_text(report_page(entries), "utf-8")
    viewer = Viewer(browser).open(page.as_uri())
    assert viewer.names() == [fabricated.name, correct.name]  # the failing session first
    sees_the_loop_in_order(viewer, correct)
    sees_the_made_up_result(viewer, fabricated)
