"""Mistral's Chat Completions (api.mistral.ai/v1), OpenAI-shaped (docs/flavours.md#mistral).

Call ids are exactly 9 letters or digits, and Mistral refuses a history whose ids are not
(rule M1, chat_flavour_rules.py); a streamed call arrives whole, in one chunk; ids of
completions are 32 hex; the usage rides on the finish chunk; errors are one flat object,
`{"object": "error", "message", "type", "param", "code"}`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mockllm.core.encoding import dumps
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.ids import HEX, derive
from mockllm.core.scenario import Scenario
from mockllm.errors import RequestError
from mockllm.providers.base import Parsed, scripted_id
from mockllm.providers.flavours.base import Flavour, cut_inside, drop, map_chunks, whole_calls

# Mistral's code for a malformed call id, which it sends as type `invalid_function_call`
# (mistralai/mistral-vibe#1075, editor-code-assistant/eca#233).
MISTRAL_ID_CODE = "3280"
_TYPES = {MISTRAL_ID_CODE: "invalid_function_call"}
_TOP = ("id", "object", "created", "model", "choices", "usage")


class Mistral(Flavour):
    name = "mistral"
    # (type, message, code) as Mistral's API words them.
    fault_table: ClassVar[Mapping[int, tuple[str, str, str | None]]] = {
        429: ("rate_limited", "Rate limit exceeded", "1300"),  # cline/cline#9085
    }

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        return scripted_id(scenario, turn, index, "", 9, attempt)  # [a-zA-Z0-9]{9}

    def completion_id(self, resolved: Resolved) -> str:
        return derive("", 32, "mistral", resolved.scenario.name, resolved.id_turn, alphabet=HEX)

    def body(self, obj: dict[str, Any], resolved: Resolved, parsed: Parsed) -> dict[str, Any]:
        for choice in obj["choices"]:
            message = choice["message"]
            drop(message, "refusal", "annotations")
            if message.get("content") is None:
                message["content"] = ""  # Mistral sends "" beside calls, never null
            for i, call in enumerate(message.get("tool_calls") or ()):
                call["index"] = i
            drop(choice, "logprobs")
        obj["usage"] = _usage(resolved)
        return _top(obj)

    def stream(self, events: list[Event], resolved: Resolved, parsed: Parsed) -> list[Event]:
        def change(obj: dict[str, Any], part: str) -> dict[str, Any] | None:
            if not obj["choices"]:
                return None  # the usage rides on the finish chunk
            choice = obj["choices"][0]
            delta = drop(choice["delta"], "refusal")
            if "content" in delta and delta["content"] is None:
                delta["content"] = ""  # Mistral's first chunk: role and "" content
            drop(choice, "logprobs")
            if choice.get("finish_reason") is not None:
                choice["delta"] = {"content": ""}
                obj["usage"] = _usage(resolved)
            else:
                obj.pop("usage", None)
            return _top(obj)

        return [cut_inside(e) for e in map_chunks(whole_calls(events), change)]

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        kind, _, code = self.fault_texts(error.status)
        default = _TYPES.get(error.code or "") or (
            "invalid_request_error" if error.status < 429 else kind
        )
        return dumps(
            {
                "object": "error",
                "message": error.message,
                "type": error.error_type or default,
                "param": error.param,
                "code": error.code or (code if error.status >= 429 else None),
            }
        )


def _usage(resolved: Resolved) -> dict[str, int]:
    """In Mistral's order: prompt, total, completion."""
    return {
        "prompt_tokens": resolved.input_tokens,
        "total_tokens": resolved.input_tokens + resolved.output_tokens,
        "completion_tokens": resolved.output_tokens,
    }


def _top(obj: dict[str, Any]) -> dict[str, Any]:
    drop(obj, "service_tier", "system_fingerprint")
    return {k: obj[k] for k in _TOP if k in obj}
