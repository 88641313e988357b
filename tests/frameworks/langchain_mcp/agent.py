"""A LangChain agent whose tools come from an MCP server through `langchain-mcp-adapters`,
run in its own virtualenv (.venv-langchain-mcp, made by the Makefile from requirements.txt
beside this file): the adapters require `mcp<2`, and mockllm pins the SDK's 2.x.

    .venv-langchain-mcp/bin/python tests/frameworks/langchain_mcp/agent.py \
        MODEL_URL MCP_URL [--timeout SECONDS] [--no-handle-errors]

It prints one JSON object on stdout: the agent's answer (or the exception that ended the
run: its type and text) and the messages of the run, as LangChain holds them.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

# Before LangChain is imported: no LangSmith traces (as tests/frameworks/conftest.py does).
os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"

# The frameworks group's socket guard, loaded by path: this venv has no mockllm or tests
# package to import it from.
_GUARD = Path(__file__).resolve().parent.parent / "network_guard.py"
_spec = importlib.util.spec_from_file_location("network_guard", _GUARD)
assert _spec and _spec.loader
network_guard = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(network_guard)
network_guard.install()

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import BaseMessage  # noqa: E402
from langchain_mcp_adapters.client import MultiServerMCPClient  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402


def shown(message: BaseMessage) -> dict[str, Any]:
    return {
        "type": message.type,
        "content": message.content,
        "tool_calls": [
            {"name": c["name"], "args": c["args"]} for c in getattr(message, "tool_calls", [])
        ],
        "status": getattr(message, "status", None),
    }


async def run(model_url: str, mcp_url: str, timeout: float, handle_errors: bool) -> dict[str, Any]:
    client = MultiServerMCPClient(
        {
            "orders": {
                "transport": "streamable_http",
                "url": mcp_url,
                # The MCP session's own timeout per request. Not `sse_read_timeout`: with
                # mcp 1.x a read timeout on the call's SSE stream makes the client resume on
                # a GET stream the answer never comes to, and the run hangs (docs/mcp.md).
                "session_kwargs": {"read_timeout_seconds": timedelta(seconds=timeout)},
            }
        },
        handle_tool_errors=handle_errors,
    )
    tools = await client.get_tools()
    model = ChatOpenAI(model="gpt-4o-mini", base_url=model_url, api_key="test", max_retries=0)
    agent = create_agent(model, tools, system_prompt="Use the tools.")
    outcome: dict[str, Any] = {"tools": [t.name for t in tools]}
    try:
        state = await agent.ainvoke({"messages": [("user", "Where is my order?")]})
    except Exception as e:  # what ended the run is the finding
        outcome["error"] = {"type": type(e).__name__, "text": str(e)}
        for inner in getattr(e, "exceptions", ()):  # a TaskGroup's ExceptionGroup
            outcome["error"]["inner"] = {"type": type(inner).__name__, "text": str(inner)}
        return outcome
    messages = state["messages"]
    outcome["answer"] = messages[-1].content
    outcome["messages"] = [shown(m) for m in messages]
    return outcome


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("model_url")
    p.add_argument("mcp_url")
    p.add_argument("--timeout", type=float, default=30)
    p.add_argument("--no-handle-errors", action="store_true")
    args = p.parse_args()
    outcome = asyncio.run(
        run(args.model_url, args.mcp_url, args.timeout, not args.no_handle_errors)
    )
    outcome["network_attempts"] = network_guard.attempts
    json.dump(outcome, sys.stdout)


if __name__ == "__main__":
    main()
