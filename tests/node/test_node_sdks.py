"""The official Node SDKs (`openai`, `@anthropic-ai/sdk`, `@google/genai`) parse mockllm on all four APIs,
their stream helpers agree with the non-streamed replies, and a tool round trip completes."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from mockllm import load_paths
from tests.support import BUNDLED, ROOT, ServerProcess
from tests.support.drivers import DRIVERS, Walker

NODE_DIR = ROOT / "tests" / "node"
RESULTS = ["25度", "22度"]


def node_walk(server: ServerProcess, api: str, session: str, mode: str) -> dict[str, Any]:
    base = f"{server.url}/s/weather-parallel/{session}"
    base += "" if api in ("anthropic", "gemini") else "/v1"
    command = ["node", "drive.mjs", api, base, mode, "北京和上海?", *RESULTS]
    done = subprocess.run(command, cwd=NODE_DIR, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def python_walk(server: ServerProcess, api: str, session: str) -> list[dict[str, Any]]:
    """The same round trip through the Python SDK: the reference the Node SDK must match."""
    scenario = next(s for s in load_paths([BUNDLED]) if s.name == "weather-parallel")
    driver = DRIVERS[api](server, scenario.name, session)
    try:
        walker = Walker(scenario, driver)
        views = []
        for _ in scenario.turns:
            view = driver.create(walker.request())
            views.append(
                {"text": view.text, "calls": [list(c) for c in view.calls], "finish": view.finish}
            )
            walker.advance(view)
        return views
    finally:
        driver.close()


@pytest.mark.parametrize("api", sorted(DRIVERS))
def test_node_sdk_round_trip_create_and_stream(
    server: ServerProcess, session: str, api: str
) -> None:
    created = node_walk(server, api, f"{session}-create", "create")["turns"]
    streamed = node_walk(server, api, f"{session}-stream", "stream")["turns"]
    assert streamed == created
    assert created == python_walk(server, api, f"{session}-py")
    assert created[0]["finish"] == "tool_calls" and len(created[0]["calls"]) == 2
    assert created[1] == {"text": "北京多云25℃，上海小雨22℃。", "calls": [], "finish": "stop"}
    # the final request carried both results back, paired with their call ids
    results = server.last(f"{session}-stream")["tool_results"]
    # Gemini sends no ids: results pair with calls by name and position (turnT.callI)
    ids = [f"turn0.call{i}" if api == "gemini" else c[0] for i, c in enumerate(created[0]["calls"])]
    assert [(r["call_id"], r["content"]) for r in results] == list(zip(ids, RESULTS, strict=True))
