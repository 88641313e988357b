"""The benchmark's two requests: the same bytes for every server.

Kept free of heavy imports: the floors import it, and their start-up time is measured.
"""

from __future__ import annotations

import json

TOOL_CALL = "bench-tool-call"  # non-stream: a reply with one tool call
STREAM = "bench-stream"  # stream: a text reply of exactly 50 SSE `data:` frames
STREAM_EVENTS = 50

_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def request_body(stream: bool) -> bytes:
    """An OpenAI Chat Completions request holding only a user message: always turn 0."""
    body: dict[str, object] = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": _TOOLS,
    }
    if stream:
        body["stream"] = True
    return json.dumps(body, separators=(",", ":")).encode()


def mockllm_path(scenario: str) -> str:
    return f"/s/{scenario}/v1/chat/completions"
