"""The MCP row (issue 28, docs/mcp.md): server CPU per MCP `tools/call` against per model
request, on one `mockllm serve`, driven sequentially by the official clients (the `mcp`
SDK's streamable HTTP client; the OpenAI SDK). A figure of its own, not a `make bench`
table row: the MCP route answers through the SDK's session manager (an SSE stream per
call), which wrk cannot speak.

    python -m bench.mcp [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import openai
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bench.proc import cpu_seconds

SCENARIO = """\
name: bench-mcp
mcp_servers:
  orders:
    tools:
      - name: lookup_order
        input_schema: {type: object, properties: {order_id: {type: string}}}
        results: [{text: "Order A1: shipped"}]
turns:
  - reply: {tool_calls: [{name: {mcp: orders/lookup_order}, arguments: {order_id: A1}}]}
    repeat: true
"""


def serve(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    (tmp / "bench-mcp.yaml").write_text(SCENARIO)
    ready = tmp / "ready"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mockllm",
            "serve",
            "--port",
            "0",
            "--ready-file",
            str(ready),
            "--quiet",
            "--no-bundled",
            "--scenarios",
            str(tmp / "bench-mcp.yaml"),
        ],
    )
    deadline = time.monotonic() + 30
    while not ready.exists():
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError("mockllm serve did not start")
        time.sleep(0.05)
    return process, ready.read_text().strip()


async def mcp_calls(url: str, n: int, pid: int) -> float:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        for _ in range(20):  # warm
            await s.call_tool("lookup_order", {"order_id": "A1"})
        before = cpu_seconds(pid)
        for _ in range(n):
            await s.call_tool("lookup_order", {"order_id": "A1"})
        return (cpu_seconds(pid) - before) / n


def model_calls(url: str, n: int, pid: int) -> float:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "lookup_order",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            },
        }
    ]
    with openai.OpenAI(base_url=url, api_key="x", max_retries=0) as llm:
        ask = {"model": "gpt-4o", "messages": [{"role": "user", "content": "A1?"}], "tools": tools}
        for _ in range(20):
            llm.chat.completions.create(**ask)  # type: ignore[call-overload]
        before = cpu_seconds(pid)
        for _ in range(n):
            llm.chat.completions.create(**ask)  # type: ignore[call-overload]
        return (cpu_seconds(pid) - before) / n


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp")
    parser.add_argument("--calls", type=int, default=300)
    n = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as tmp:
        process, url = serve(Path(tmp))
        try:
            mcp = asyncio.run(mcp_calls(f"{url}/s/bench-mcp/b/mcp/orders", n, process.pid))
            model = model_calls(f"{url}/s/bench-mcp/b/v1", n, process.pid)
            httpx.get(f"{url}/_mockllm/health")
        finally:
            process.terminate()
            process.wait(10)
    print(f"server CPU per request, {n} sequential calls each (10 ms clock ticks):")
    print(f"  MCP tools/call (streamable HTTP, SSE): {mcp * 1e6:8.0f} µs")
    print(f"  model request (chat completions):      {model * 1e6:8.0f} µs")
    print(f"  ratio: {mcp / model if model else float('nan'):.1f}x")


if __name__ == "__main__":
    main()
