"""Chat Completions answers read back into neutral terms (`mockllm record`): the message or
the deltas, with DeepSeek's `reasoning_content`; arguments kept as the wire's string."""

from __future__ import annotations

import json
from typing import Any

from mockllm.core.heard import HeardCall, HeardError
from mockllm.core.scenario import Finish
from mockllm.providers.base import Answers

FINISH: dict[str, Finish] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}
REASONING_FIELDS = ("reasoning_content", "reasoning")  # DeepSeek; some compatible servers


def openai_error(data: Any) -> HeardError:
    """`{"error": {"message", "type", "code"}}`, the shape of both OpenAI APIs."""
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return HeardError()
    code = error.get("code")
    return HeardError(
        _str(error.get("type")), _str(error.get("message")), None if code is None else str(code)
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class ChatAnswers(Answers):
    def body(self, data: Any) -> None:
        heard = self.heard
        heard.complete = True
        heard.model = _str(data.get("model"))
        choices = data.get("choices") or []
        if len(choices) > 1:
            heard.drop("choices beyond the first (n > 1)")
        if choices:
            message = choices[0].get("message") or {}
            heard.text = message.get("content") or ""
            for key in REASONING_FIELDS:
                if isinstance(message.get(key), str):
                    heard.reasoning = message[key]
                    break
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                heard.calls.append(
                    HeardCall(
                        str(function.get("name", "")),
                        str(function.get("arguments", "")),
                        str(call.get("id", "")),
                    )
                )
            self._extras(message)
            self._finish(choices[0].get("finish_reason"))
        self.heard.read_usage(data.get("usage"), "prompt_tokens", "completion_tokens")

    def event(self, name: str | None, data: str) -> None:
        heard = self.heard
        if data.strip() == "[DONE]":
            heard.complete = True
            return
        chunk = json.loads(data)
        if not isinstance(chunk, dict):
            return
        if "error" in chunk:
            heard.error = openai_error(chunk)
            return
        heard.model = _str(chunk.get("model")) or heard.model
        heard.read_usage(chunk.get("usage"), "prompt_tokens", "completion_tokens")
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                heard.drop("choices beyond the first (n > 1)")
                continue
            delta = choice.get("delta") or {}
            heard.text += delta.get("content") or ""
            for key in REASONING_FIELDS:
                if isinstance(delta.get(key), str):
                    heard.reasoning = (heard.reasoning or "") + delta[key]
                    break
            for part in delta.get("tool_calls") or ():
                self._call_delta(part)
            self._extras(delta)
            if choice.get("finish_reason") is not None:
                self._finish(choice["finish_reason"])

    def error(self, data: Any) -> HeardError:
        return openai_error(data)

    def _call_delta(self, part: dict[str, Any]) -> None:
        """Accumulate as the SDK does: the call at `index`, its strings concatenated."""
        calls = self.heard.calls
        index = part.get("index", len(calls))
        while len(calls) <= index:
            calls.append(HeardCall())
        call = calls[index]
        function = part.get("function") or {}
        call.id += part.get("id") or ""
        call.name += function.get("name") or ""
        call.arguments += function.get("arguments") or ""

    def _extras(self, message: dict[str, Any]) -> None:
        if message.get("refusal"):
            self.heard.drop("a refusal message (the refusal field)")
        for key in ("audio", "annotations", "function_call"):
            if message.get(key):
                self.heard.drop(f"the message's {key}")

    def _finish(self, reason: Any) -> None:
        finish = FINISH.get(str(reason))
        if finish is None:
            self.heard.drop(f"finish_reason {reason!r} (kept as the default)")
        self.heard.finish = finish
