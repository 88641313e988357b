"""Hostile tool-search bodies (issue 38, 7): requests that offer a tool search and deferred
tools and carry a search in their history (Anthropic's server_tool_use /
tool_search_tool_result / tool_reference blocks, Claude Code's ToolSearch, Responses'
tool_search_call / tool_search_output items, client and hosted), each with up to two parts
replaced by generated values (hypothesis, derandomized), against a scenario whose reply
searches (`search_tools`). Over real HTTP to a real `mockllm serve --log`: never a 5xx nor
a cut connection, a 4xx in the provider's error shape, one log entry per request, the log
file strictly parseable, and the server still answers a good search afterwards."""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.e2e.hostile.test_hostile import FUZZ, SCHEMA, values
from tests.support import ServerProcess, json_paths, replaced, running_server

SCENARIO = """\
name: searching
validation: warn
turns:
  - reply:
      search_tools: weather
      tool_calls: [{name: get_weather, arguments: {city: Paris}}]
  - reply: {text: done}
    repeat: true
"""


def _deferred(name: str) -> dict[str, Any]:
    return {"name": name, "description": name, "input_schema": SCHEMA, "defer_loading": True}


SERVER_SEARCH: dict[str, Any] = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 100,
    "messages": [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_1",
                    "name": "tool_search_tool_regex",
                    "input": {"pattern": "weather"},
                },
                {
                    "type": "tool_search_tool_result",
                    "tool_use_id": "srvtoolu_1",
                    "content": {
                        "type": "tool_search_tool_search_result",
                        "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}],
                    },
                },
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}],
        },
    ],
    "tools": [
        {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
        _deferred("get_weather"),
        _deferred("get_time"),
    ],
}
CLIENT_SEARCH: dict[str, Any] = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 100,
    "messages": [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": {"query": "w"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "tool_reference", "tool_name": "get_weather"}],
                }
            ],
        },
    ],
    "tools": [{"name": "ToolSearch", "input_schema": SCHEMA}, _deferred("get_weather")],
}
WEATHER = {"type": "function", "name": "get_weather", "parameters": SCHEMA, "defer_loading": True}
RESPONSES_SEARCH: dict[str, Any] = {
    "model": "gpt-5.5",
    "input": [
        {"role": "user", "content": "weather?"},
        {
            "type": "tool_search_call",
            "call_id": "call_s",
            "execution": "client",
            "arguments": {"query": "weather"},
        },
        {
            "type": "tool_search_output",
            "call_id": "call_s",
            "execution": "client",
            "tools": [
                {"type": "namespace", "name": "mcp__w", "description": "", "tools": [WEATHER]}
            ],
        },
        {
            "type": "tool_search_call",
            "execution": "server",
            "arguments": {"query": "time"},
        },
        {"type": "tool_search_output", "execution": "server", "tools": [WEATHER]},
    ],
    "tools": [{"type": "tool_search", "execution": "client"}, WEATHER],
}
BODIES = {
    "anthropic-server": ("v1/messages", SERVER_SEARCH),
    "anthropic-client": ("v1/messages", CLIENT_SEARCH),
    "responses": ("v1/responses", RESPONSES_SEARCH),
}


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> bytes:
    """The body (with its history, or the first request alone) with up to two parts
    replaced by generated values."""
    body = copy.deepcopy(base) | {"stream": draw(st.booleans())}
    history = "input" if "input" in body else "messages"
    if draw(st.booleans()):
        body[history] = body[history][:1]
    for _ in range(draw(st.integers(0, 2))):
        path = draw(st.sampled_from(json_paths(body)))
        body = replaced(body, path, draw(values))
    return json.dumps(body).encode()


@pytest.fixture(scope="module")
def search_server() -> Iterator[ServerProcess]:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "searching.yaml").write_text(SCENARIO)
        with running_server(scenarios=(Path(tmp),)) as server:
            yield server
            _after_all(server)


def _after_all(server: ServerProcess) -> None:
    lines = server.log_file.read_text("utf-8").splitlines()
    entries = [json.loads(line) for line in lines]  # every entry parses
    assert [e["server_error"] for e in entries if e["server_error"]] == []
    good = httpx.post(
        f"{server.url}/s/searching/after/v1/messages",
        headers={"anthropic-version": "2023-06-01"},
        json={**SERVER_SEARCH, "messages": SERVER_SEARCH["messages"][:1]},
    )
    assert good.status_code == 200, good.text
    kinds = [b["type"] for b in good.json()["content"]]
    assert kinds == ["server_tool_use", "tool_search_tool_result", "tool_use"]


@pytest.mark.parametrize("case", list(BODIES))
def test_hostile_tool_search_bodies_get_an_answer_and_a_log_line(
    search_server: ServerProcess, case: str
) -> None:
    route, base = BODIES[case]
    sent = 0
    with httpx.Client(base_url=search_server.url, timeout=30) as http:

        @FUZZ
        @given(mutated(base))
        def run(body: bytes) -> None:
            nonlocal sent
            sent += 1
            path = f"/s/searching/{case}-{sent}/{route}"
            headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
            with http.stream("POST", path, content=body, headers=headers) as r:
                data = r.read()  # a cut connection raises here
            assert r.status_code < 500, data[:300]
            if r.status_code >= 400:
                assert r.headers["content-type"].startswith("application/json")
                error = json.loads(data)["error"]
                assert isinstance(error["message"], str) and isinstance(error["type"], str)
            session = path.split("/")[3]
            assert len(search_server.requests(session=session)) == 1

        run()
