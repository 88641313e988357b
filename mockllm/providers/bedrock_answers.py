"""Amazon Bedrock's answers read back into neutral terms (`mockllm record`): a Converse body,
or ConverseStream's events; InvokeModel's Anthropic body, or its `chunk` events, each an
Anthropic stream event in base64. The stream's messages come split from the binary event
stream (`core.eventstream.Frames`): each one's `:event-type` (or `:exception-type`, for an
in-band error) and its JSON payload."""

from __future__ import annotations

import base64
import json
from typing import Any

from mockllm.core.encoding import compact_json
from mockllm.core.heard import HeardCall, HeardError
from mockllm.core.scenario import Finish
from mockllm.providers.anthropic_answers import MessagesAnswers
from mockllm.providers.base import Answers

FINISH: dict[str, Finish] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "content_filtered": "content_filter",
    "guardrail_intervened": "content_filter",
}


class ConverseAnswers(Answers):
    def __init__(self) -> None:
        super().__init__()
        self._calls: dict[int, HeardCall] = {}  # contentBlockIndex → its toolUse

    def body(self, data: Any) -> None:
        heard = self.heard
        heard.complete = True
        message = (data.get("output") or {}).get("message") or {}
        for block in message.get("content") or ():
            self._block(block)
        self._stop(data.get("stopReason"))
        heard.read_usage(data.get("usage"), "inputTokens", "outputTokens")

    def event(self, name: str | None, data: str) -> None:
        payload = json.loads(data)
        if isinstance(payload, dict):
            self.on(name, payload)

    def on(self, kind: str | None, payload: dict[str, Any]) -> None:
        heard = self.heard
        if kind == "contentBlockStart":
            use = (payload.get("start") or {}).get("toolUse")
            if isinstance(use, dict):
                call = HeardCall(str(use.get("name", "")), "", str(use.get("toolUseId", "")))
                heard.calls.append(call)
                self._calls[payload.get("contentBlockIndex", -1)] = call
        elif kind == "contentBlockDelta":
            self._delta(payload.get("contentBlockIndex", -1), payload.get("delta") or {})
        elif kind == "contentBlockStop":
            stopped = self._calls.get(payload.get("contentBlockIndex", -1))
            if stopped is not None and not stopped.arguments:
                stopped.arguments = "{}"  # no input fragments: an empty input
        elif kind == "messageStop":
            self._stop(payload.get("stopReason"))
        elif kind == "metadata":
            heard.read_usage(payload.get("usage"), "inputTokens", "outputTokens")
            heard.complete = True  # the stream's last event
        elif kind is not None and kind.endswith("Exception"):  # an in-band error
            heard.error = HeardError(kind, _message(payload))

    def error(self, data: Any) -> HeardError:
        return HeardError(None, _message(data))

    def _block(self, block: Any) -> None:
        heard = self.heard
        if not isinstance(block, dict):
            return
        if "text" in block:
            heard.text += str(block["text"])
        elif isinstance(block.get("toolUse"), dict):
            use = block["toolUse"]
            name, use_id = str(use.get("name", "")), str(use.get("toolUseId", ""))
            heard.calls.append(HeardCall(name, compact_json(use.get("input", {})), use_id))
        elif isinstance(block.get("reasoningContent"), dict):
            text = (block["reasoningContent"].get("reasoningText") or {}).get("text") or ""
            heard.reasoning = (heard.reasoning or "") + text
        else:
            heard.drop(f"content blocks of type {next(iter(block), '?')}")

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        heard = self.heard
        if "text" in delta:
            heard.text += str(delta["text"])
        elif isinstance(delta.get("toolUse"), dict) and index in self._calls:
            self._calls[index].arguments += str(delta["toolUse"].get("input") or "")
        elif isinstance(delta.get("reasoningContent"), dict):
            text = delta["reasoningContent"].get("text")
            if text:
                heard.reasoning = (heard.reasoning or "") + str(text)

    def _stop(self, reason: Any) -> None:
        if reason is None:
            return
        finish = FINISH.get(str(reason))
        if finish is None:
            self.heard.drop(f"stopReason {reason!r} (kept as the default)")
        self.heard.finish = finish


class InvokeAnswers(MessagesAnswers):
    """InvokeModel's body is Anthropic's; its stream wraps each Anthropic event, base64, in
    the `bytes` of a `chunk` event."""

    def event(self, name: str | None, data: str) -> None:
        payload = json.loads(data)
        if not isinstance(payload, dict):
            return
        if name == "chunk":
            inner = json.loads(base64.b64decode(str(payload.get("bytes", ""))))
            if isinstance(inner, dict):
                kind = inner.get("type")
                self.on(kind if isinstance(kind, str) else None, inner)
        elif name is not None and name.endswith("Exception"):
            self.heard.error = HeardError(name, _message(payload))

    def error(self, data: Any) -> HeardError:
        if isinstance(data, dict) and "error" not in data:  # Bedrock's own `{"message": …}`
            return HeardError(None, _message(data))
        return super().error(data)


def _message(data: Any) -> str | None:
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, str) else None
