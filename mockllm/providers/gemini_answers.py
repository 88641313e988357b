"""Gemini answers read back into neutral terms (`mockllm record`): the first candidate's
parts, whole or chunk by chunk. A stream has no terminator event: the chunk that carries a
`finishReason` ends it. Arguments arrive as objects, so they are kept as compact JSON."""

from __future__ import annotations

from typing import Any

from mockllm.core.encoding import compact_json
from mockllm.core.heard import HeardCall, HeardError
from mockllm.core.scenario import Finish
from mockllm.providers.base import Answers

FINISH: dict[str, Finish] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
}
# The model could not form a call (or ran out of tokens before any content): the API sends
# the reason and no content. mockllm answers that way for a call whose arguments are not a
# JSON object, so such an answer is kept as one: its replay is the same empty candidate.
MALFORMED = "MALFORMED_FUNCTION_CALL"
UNFORMED = {MALFORMED: "malformed_function_call", "MAX_TOKENS": "cut_function_call"}


class GeminiAnswers(Answers):
    def __init__(self) -> None:
        super().__init__()
        self._content = False  # any part arrived

    def body(self, data: Any) -> None:
        self.on(None, data)
        self.heard.complete = True

    def on(self, kind: str | None, payload: dict[str, Any]) -> None:
        """One whole response or one stream chunk: both are a GenerateContentResponse."""
        heard = self.heard
        if isinstance(payload.get("error"), dict):
            heard.error = self.error(payload)
            return
        heard.response_id = _str(payload.get("responseId")) or heard.response_id
        heard.model = _str(payload.get("modelVersion")) or heard.model
        candidates = payload.get("candidates") or []
        if len(candidates) > 1:
            heard.drop("candidates beyond the first (candidateCount > 1)")
        if candidates and isinstance(candidates[0], dict):
            self._candidate(candidates[0])
        self._usage(payload.get("usageMetadata"))

    def error(self, data: Any) -> HeardError:
        """`{"error": {"code", "message", "status"}}`: the status names the kind."""
        error = data.get("error") if isinstance(data, dict) else None
        if not isinstance(error, dict):
            return HeardError()
        return HeardError(_str(error.get("status")), _str(error.get("message")))

    def _candidate(self, candidate: dict[str, Any]) -> None:
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts or ():
            if isinstance(part, dict):
                self._content = True
                self._part(part)
        reason = candidate.get("finishReason")
        if isinstance(reason, str):
            self._finish(reason, candidate.get("finishMessage"))

    def _part(self, part: dict[str, Any]) -> None:
        heard = self.heard
        call = part.get("functionCall")
        if isinstance(call, dict):
            arguments = call.get("args")
            heard.calls.append(
                HeardCall(
                    str(call.get("name", "")),
                    compact_json(arguments if arguments is not None else {}),
                    str(call.get("id") or ""),
                )
            )
        elif isinstance(part.get("text"), str):
            if part.get("thought"):
                heard.reasoning = (heard.reasoning or "") + part["text"]
            else:
                heard.text += part["text"]
        elif not part.keys() <= {"thoughtSignature"}:
            heard.drop(f"parts holding {', '.join(sorted(part))}")

    def _finish(self, reason: str, message: Any) -> None:
        heard = self.heard
        heard.complete = True  # the chunk with a finish reason is the stream's last
        if reason in UNFORMED and not self._content:
            said = message if isinstance(message, str) else ""
            heard.calls.append(HeardCall(UNFORMED[reason], said))
            heard.finish = "tool_calls" if reason == MALFORMED else "length"
            return
        finish = FINISH.get(reason)
        if finish is None:
            heard.drop(f"finishReason {reason!r} (kept as the default)")
        elif finish == "stop" and heard.calls:
            finish = "tool_calls"  # the API says STOP after calls too
        heard.finish = finish

    def _usage(self, usage: Any) -> None:
        """Gemini counts thoughts apart from the candidates; a scenario's output has both."""
        if not isinstance(usage, dict):
            return
        heard = self.heard
        if isinstance(usage.get("promptTokenCount"), int):
            heard.input_tokens = usage["promptTokenCount"]
        counts = [usage.get(k) for k in ("candidatesTokenCount", "thoughtsTokenCount")]
        if any(isinstance(c, int) for c in counts):
            heard.output_tokens = sum(c for c in counts if isinstance(c, int))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
