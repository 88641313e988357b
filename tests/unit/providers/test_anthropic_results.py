"""Anthropic tool results: a tool search's `tool_reference` blocks read as the tools they
hand over (Claude Code's `ToolSearch`), beside any text; anything else as before."""

from __future__ import annotations

from mockllm.providers.anthropic import Messages

ADAPTER = Messages()


def result_of(content: object) -> str:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 8,
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": content}]},
        ],
    }  # fmt: skip
    conversation = ADAPTER.parse(body).conversation
    content_read: str = conversation.latest_tool_results[0].content
    return content_read


def test_tool_references_read_as_the_tools_handed_over() -> None:
    refs = [{"type": "tool_reference", "tool_name": n} for n in ("mcp__shelf__find", "Read")]
    assert result_of(refs) == "tool_reference: mcp__shelf__find\ntool_reference: Read"
    text = [{"type": "text", "text": "Found 1"}, refs[0]]
    assert result_of(text) == "Found 1\ntool_reference: mcp__shelf__find"


def test_other_results_read_as_before() -> None:
    assert result_of("18 °C") == "18 °C"
    assert result_of([{"type": "tool_reference"}, {"type": "image"}]) == ""
