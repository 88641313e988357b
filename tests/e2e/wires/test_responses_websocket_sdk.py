"""The Responses API over WebSocket through openai-python's own client
(`client.responses.connect()`): a tool loop on one connection, read as its typed events.
Apart from tests/e2e/wires/test_responses_websocket.py so that file needs only `websockets`
and runs on every Python the package claims (`make pythons`, which has no SDKs)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from openai import OpenAI

from tests.support import ServerProcess

TOOLS: Any = [
    {
        "type": "function",
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
ASK: Any = [{"role": "user", "content": "weather in Paris?"}]


def test_the_openai_sdks_responses_websocket_runs_a_tool_loop(
    server: ServerProcess, session: str
) -> None:
    # openai-python's own WebSocket client (`client.responses.connect()`), its typed events
    with (
        OpenAI(
            base_url=f"{server.url}/s/weather-single/{session}/v1", api_key="test", max_retries=0
        ) as client,
        client.responses.connect() as conn,
    ):
        conn.send({"type": "response.create", "model": "gpt-5.5", "input": ASK, "tools": TOOLS})
        first = list(_until_completed(conn))
        done = first[-1].response
        call = done.output[0]
        assert call.type == "function_call" and call.name == "get_weather"
        result = {"type": "function_call_output", "call_id": call.call_id, "output": "18 °C"}
        conn.send(
            {
                "type": "response.create",
                "model": "gpt-5.5",
                "input": [result],
                "tools": TOOLS,
                "previous_response_id": done.id,
            }
        )
        second = list(_until_completed(conn))
    assert [e.type for e in first][:2] == ["response.created", "response.in_progress"]
    assert "18" in second[-1].response.output_text
    entries = server.requests(session=session)
    assert [e["headers"]["x-mockllm-transport"] for e in entries] == ["websocket"] * 2


def _until_completed(conn: Any) -> Iterator[Any]:
    for event in conn:
        yield event
        assert event.type != "error", event
        if event.type == "response.completed":
            return
