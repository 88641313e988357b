"""Ollama answers read back into neutral terms (`mockllm record`): one ChatResponse (or
GenerateResponse), or a stream of them, one a line; the object with `done: true` ends it
and carries `done_reason` and the counts. Arguments arrive as objects, so they are kept as
compact JSON; a line `{"error": ...}` is an in-band error."""

from __future__ import annotations

from typing import Any

from mockllm.core.encoding import compact_json
from mockllm.core.heard import HeardCall, HeardError
from mockllm.core.scenario import Finish
from mockllm.providers.base import Answers

FINISH: dict[str, Finish] = {"stop": "stop", "length": "length"}


class OllamaAnswers(Answers):
    def body(self, data: Any) -> None:
        if isinstance(data, dict):
            self.on(None, data)

    def on(self, kind: str | None, payload: dict[str, Any]) -> None:
        heard = self.heard
        if "error" in payload:
            heard.error = self.error(payload)
            return
        heard.model = _str(payload.get("model")) or heard.model
        message = payload.get("message")
        said = message if isinstance(message, dict) else payload  # generate: `response`
        text = said.get("content") if said is message else payload.get("response")
        if isinstance(text, str):
            heard.text += text
        if isinstance(said.get("thinking"), str) and said["thinking"]:
            heard.reasoning = (heard.reasoning or "") + said["thinking"]
        for call in said.get("tool_calls") or ():
            if isinstance(call, dict):
                heard.calls.append(_call(call))
        if payload.get("done") is True:
            self._done(payload)

    def _done(self, payload: dict[str, Any]) -> None:
        heard = self.heard
        heard.complete = True
        reason = payload.get("done_reason")
        finish = FINISH.get(reason) if isinstance(reason, str) else "stop"
        if finish is None:
            heard.drop(f"done_reason {reason!r} (kept as the default)")
        elif finish == "stop" and heard.calls:
            finish = "tool_calls"  # Ollama says stop after calls too
        heard.finish = finish
        heard.read_usage(payload, "prompt_eval_count", "eval_count")

    def error(self, data: Any) -> HeardError:
        """`{"error": "..."}`: Ollama's errors carry no type."""
        error = data.get("error") if isinstance(data, dict) else None
        return HeardError(None, error if isinstance(error, str) else None)


def _call(call: dict[str, Any]) -> HeardCall:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    arguments = function.get("arguments")
    text = arguments if isinstance(arguments, str) else compact_json(arguments or {})
    return HeardCall(str(function.get("name") or ""), text, str(call.get("id") or ""))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
