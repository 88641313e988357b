"""Anthropic Messages answers read back into neutral terms (`mockllm record`): content
blocks, or the stream's events; streamed tool input kept as the partial_json text."""

from __future__ import annotations

from typing import Any

from mockllm.core.encoding import compact_json
from mockllm.core.heard import HeardCall, HeardError
from mockllm.core.scenario import Finish
from mockllm.providers.base import Answers

FINISH: dict[str, Finish] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


class MessagesAnswers(Answers):
    def __init__(self) -> None:
        super().__init__()
        self._blocks: dict[int, Any] = {}  # index → "text", "thinking", a HeardCall, or None

    def body(self, data: Any) -> None:
        heard = self.heard
        heard.complete = True
        heard.response_id, heard.model = data.get("id"), data.get("model")
        for block in data.get("content") or ():
            self._block(block)
            if isinstance(block, dict) and block.get("type") == "tool_use":
                heard.calls[-1].arguments = compact_json(block.get("input", {}))  # no text form
        self._stop(data.get("stop_reason"))
        heard.read_usage(data.get("usage"))

    def on(self, kind: str | None, payload: dict[str, Any]) -> None:
        heard = self.heard
        if kind == "message_start":
            message = payload.get("message") or {}
            heard.response_id, heard.model = message.get("id"), message.get("model")
            heard.read_usage(message.get("usage"), output_key=None)  # output: 1 so far
        elif kind == "content_block_start":
            self._blocks[payload.get("index", -1)] = self._block(payload.get("content_block"))
        elif kind == "content_block_delta":
            self._delta(self._blocks.get(payload.get("index", -1)), payload.get("delta") or {})
        elif kind == "content_block_stop":
            block = self._blocks.get(payload.get("index", -1))
            if isinstance(block, HeardCall) and not block.arguments:
                block.arguments = "{}"  # no input fragments: the API's empty input
        elif kind == "message_delta":
            self._stop((payload.get("delta") or {}).get("stop_reason"))
            heard.read_usage(payload.get("usage"), input_key=None)
        elif kind == "message_stop":
            heard.complete = True
        elif kind == "error":
            heard.error = self.error(payload)

    def error(self, data: Any) -> HeardError:
        error = data.get("error") if isinstance(data, dict) else None
        if not isinstance(error, dict):
            return HeardError()
        message = error.get("message")
        return HeardError(error.get("type"), message if isinstance(message, str) else None)

    def _block(self, block: Any) -> Any:
        heard = self.heard
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            heard.text += block.get("text") or ""
            if block.get("citations"):
                heard.drop("citations")
            return "text"
        if kind == "thinking":
            heard.reasoning = (heard.reasoning or "") + (block.get("thinking") or "")
            return "thinking"
        if kind == "tool_use":
            call = HeardCall(str(block.get("name", "")), "", str(block.get("id", "")))
            heard.calls.append(call)
            return call
        heard.drop(f"content blocks of type {kind}")
        return None

    def _delta(self, block: Any, delta: dict[str, Any]) -> None:
        heard, kind = self.heard, delta.get("type")
        if kind == "text_delta":
            heard.text += delta.get("text") or ""
        elif kind == "thinking_delta":
            heard.reasoning = (heard.reasoning or "") + (delta.get("thinking") or "")
        elif kind == "input_json_delta" and isinstance(block, HeardCall):
            block.arguments += delta.get("partial_json") or ""
        elif kind == "citations_delta":
            heard.drop("citations")

    def _stop(self, reason: Any) -> None:
        if reason is None:
            return
        finish = FINISH.get(str(reason))
        if finish is None:
            self.heard.drop(f"stop_reason {reason!r} (kept as the default)")
        self.heard.finish = finish
