"""`mockllm mcp` over stdio logged like HTTP (docs/mcp.md): a call whose fault hangs or
drops it is in the server's log from the moment it was asked, so the verdict judges a
harness over stdio as over HTTP, through the official `mcp` SDK's stdio client and the
OpenAI SDK against a real `mockllm serve`; and every line is answered (a line that is not
JSON, a number past the limit, an id already in flight), through a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.e2e.mcp.test_mcp import run
from tests.support import ServerProcess

SCENARIO = """\
name: stuck-orders
mcp_servers:
  orders:
    tools:
      - name: lookup_order
        input_schema:
          type: object
          properties: {order_id: {type: string}}
        results: [{fault: {FAULT: true}}]
turns:
  - reply:
      tool_calls:
        - name: {mcp: orders/lookup_order}
          arguments: {order_id: A1}
  - reply: {text: "The order system did not answer; try again later."}
"""
FAULTS = ["hang", "drop"]


@pytest.fixture
def scenario(server: ServerProcess, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    fault = request.param
    text = SCENARIO.replace("FAULT", fault).replace("stuck-orders", f"stuck-orders-{fault}")
    path = tmp_path / "stuck.yaml"
    path.write_text(text)
    answer = server.http.post(
        "/_mockllm/scenarios", content=text, headers={"content-type": "application/yaml"}
    )
    assert answer.status_code in (200, 201), answer.text
    return path


def stdio(path: Path, name: str, *more: str) -> StdioServerParameters:
    args = ["-m", "mockllm", "mcp", name, "orders", "--scenarios", str(path), *more]
    return StdioServerParameters(command=sys.executable, args=[*args, "--max-stall", "30"])


async def call_over_stdio(params: StdioServerParameters, arguments: dict[str, Any]) -> str:
    """The harness's tool step: run the tool; a timeout or a lost process is an error."""
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
            await mcp.initialize()
            result = await mcp.call_tool("lookup_order", arguments, read_timeout_seconds=1.0)
            return "\n".join(c.text for c in result.content if c.type == "text")
    except Exception as e:  # the SDK's timeout, or the process gone mid-call
        return f"Error: the tool failed: {type(e).__name__}"


async def harness(server: ServerProcess, session: str, name: str, params: Any, how: str) -> str:
    llm = openai.OpenAI(
        base_url=f"{server.url}/s/{name}/{session}/v1", api_key="sk-test", max_retries=0
    )
    tools = [{"type": "function", "function": {"name": "mcp__orders__lookup_order"}}]
    messages: list[Any] = [{"role": "user", "content": "Where is my order A1?"}]
    while True:
        reply = llm.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content or ""
        for call in message.tool_calls:
            if how == "fabricate":
                text = "Order A1: shipped on 2026-11-30"
            else:
                text = await call_over_stdio(params, json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


def checks(server: ServerProcess, session: str) -> dict[str, dict[str, Any]]:
    data = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    return {c["name"]: c for c in data["checks"]}


@pytest.mark.parametrize("scenario", FAULTS, indirect=True)
def test_a_correct_harness_passes_when_the_call_hangs_or_drops(
    server: ServerProcess, session: str, scenario: Path, tmp_path: Path
) -> None:
    name = scenario.read_text().split("\n", 1)[0].removeprefix("name: ")
    log = tmp_path / "mcp.jsonl"
    params = stdio(scenario, name, "--url", server.url, "--session", session, "--log", str(log))
    answer = run(harness(server, session, name, params, "correct"))
    assert answer == "The order system did not answer; try again later."
    verdict = checks(server, session)
    assert verdict["mcp_calls_executed"]["ok"], verdict["mcp_calls_executed"]
    assert verdict["mcp_answer_after_tool"]["ok"], verdict["mcp_answer_after_tool"]
    assert all(c["ok"] for c in verdict.values()), (
        [c for c in verdict.values() if not c["ok"]],
        [
            (e["seq"], e["api"], e.get("mcp"), e["response"])
            for e in server.requests(session=session)
        ],
    )
    entries = server.requests(session=session)
    call = next(e for e in entries if (e.get("mcp") or {}).get("method") == "tools/call")
    model = [e["seq"] for e in entries if e["api"] == "openai-chat"]
    assert model[0] < call["seq"] < model[1]  # numbered when asked, as over HTTP
    assert call["mcp"]["tool"] == "lookup_order" and call["mcp"]["arguments"] == {"order_id": "A1"}
    assert call["mcp"]["fault"] == ("never answers" if "hang" in name else "connection dropped")
    assert call["mcp"]["unfinished"].startswith("cancelled" if "hang" in name else "drop fault")
    assert call["response"]["status"] == 200  # closed: the process said how it ended
    written = [json.loads(line)["mcp"] for line in log.read_text().splitlines()]
    called = [m for m in written if m["method"] == "tools/call"]  # and in its own --log
    assert [m["unfinished"] for m in called] == [call["mcp"]["unfinished"]]


@pytest.mark.parametrize("scenario", FAULTS, indirect=True)
def test_a_fabricating_harness_fails_when_the_call_hangs_or_drops(
    server: ServerProcess, session: str, scenario: Path
) -> None:
    name = scenario.read_text().split("\n", 1)[0].removeprefix("name: ")
    params = stdio(scenario, name, "--url", server.url, "--session", session)
    run(harness(server, session, name, params, "fabricate"))
    verdict = checks(server, session)
    assert not verdict["mcp_calls_executed"]["ok"]
    assert "the tool never ran before that" in verdict["mcp_calls_executed"]["message"]
    assert not verdict["mcp_answer_after_tool"]["ok"]


# --- every line answered, through a real subprocess -------------------------------------


class Lines:
    """`mockllm mcp` as a subprocess, spoken to line by line."""

    def __init__(self, path: Path, name: str, *more: str) -> None:
        args = [sys.executable, "-m", "mockllm", "mcp", name, "orders", "--scenarios", str(path)]
        self.process = subprocess.Popen(
            [*args, *more], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.send(b'{"jsonrpc":"2.0","id":"init","method":"initialize","params":' + INIT + b"}")
        assert self.answer()["id"] == "init"
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The next line out (the test's own timeout bounds a server that never answers)."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, self.close()
        found: dict[str, Any] = json.loads(line)
        return found

    def until(self, request_id: Any) -> list[dict[str, Any]]:
        """Every answer up to and including the one to `request_id`."""
        seen = [self.answer()]
        while seen[-1].get("id") != request_id:
            seen.append(self.answer())
        return seen

    def close(self) -> str:
        """Stop it: what it said on stderr."""
        stdin, stdout, stderr = self.process.stdin, self.process.stdout, self.process.stderr
        assert stdin is not None and stdout is not None and stderr is not None
        stdin.close()
        self.process.wait(10)
        said = stderr.read().decode()
        stdout.close()
        stderr.close()
        return said


INIT = json.dumps(
    {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "lines", "version": "1"},
    }
).encode()
ORDERS = """\
name: orders-lines
mcp_servers:
  orders:
    tools:
      - name: lookup_order
        results: [{text: "Order A1: shipped"}]
      - name: stuck_lookup
        results: [{fault: {hang: true}}]
turns:
  - reply: {text: "tools only"}
"""
HOSTILE_BODIES = {
    "not json": b"not json",
    "a 5,000-digit number": b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":'
    + b"9" * 5000
    + b"}}",
    "not JSON-RPC": b'{"jsonrpc":"2.0","id":1}',
}


@pytest.fixture
def orders(tmp_path: Path, server: ServerProcess) -> Path:
    path = tmp_path / "orders.yaml"
    path.write_text(ORDERS)
    answer = server.http.post(
        "/_mockllm/scenarios", content=ORDERS, headers={"content-type": "application/yaml"}
    )
    assert answer.status_code in (200, 201), answer.text
    return path


@pytest.mark.parametrize("what", list(HOSTILE_BODIES))
def test_a_line_stdio_cannot_read_gets_the_answer_http_gives(
    server: ServerProcess, session: str, orders: Path, tmp_path: Path, what: str
) -> None:
    body = HOSTILE_BODIES[what]
    over_http = server.http.post(
        f"/s/orders-lines/{session}/mcp/orders",
        content=body,
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        },
    ).json()
    log = tmp_path / "lines.jsonl"
    lines = Lines(orders, "orders-lines", "--log", str(log))
    lines.send(body)
    lines.send(b'{"jsonrpc":"2.0","id":"after","method":"ping"}')
    seen = lines.until("after")
    lines.close()
    assert seen[0] == over_http, (seen, over_http)
    assert seen[0]["error"]["code"] == (-32602 if what == "not JSON-RPC" else -32700)
    assert seen[-1] == {"jsonrpc": "2.0", "id": "after", "result": {}}  # still serving
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    refused = next(e for e in logged if "error" in e["mcp"] and "method" not in e["mcp"])
    assert refused["mcp"]["error"]["code"] == seen[0]["error"]["code"]
    assert refused["request"] in (body.decode(), {"jsonrpc": "2.0", "id": 1})


def test_an_id_already_in_flight_gets_an_error_not_a_hang(orders: Path) -> None:
    lines = Lines(orders, "orders-lines", "--max-stall", "1")
    stuck = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"stuck_lookup"}}'
    lines.send(stuck)
    lines.send(b'{"jsonrpc":"2.0","id":7,"method":"ping"}')
    first = lines.answer()
    assert first["id"] == 7 and first["error"]["code"] == -32600
    assert "id 7 is already in flight" in first["error"]["message"]
    second = lines.answer()  # the first request is still answered, after --max-stall
    assert second["id"] == 7 and "hung for --max-stall 1 s" in second["error"]["message"]
    lines.send(b'{"jsonrpc":"2.0","id":7,"method":"ping"}')  # answered: the id is free again
    assert lines.answer() == {"jsonrpc": "2.0", "id": 7, "result": {}}
    lines.close()


def test_a_line_over_max_body_is_refused_and_the_next_served(orders: Path) -> None:
    lines = Lines(orders, "orders-lines", "--max-body", "1000")
    lines.send(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"y" * 5000 + b'"}}')
    lines.send(b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
    seen = lines.until(2)
    assert seen[0]["error"]["code"] == -32600
    assert "a line of more than 1000 bytes (--max-body)" in seen[0]["error"]["message"]
    assert seen[-1]["result"] == {}
    lines.close()
