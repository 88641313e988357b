"""Qwen on DashScope / Model Studio, OpenAI-compatible mode (docs/flavours.md#qwen).

A streamed call arrives split: the first chunk carries its id and name with empty
arguments, the later ones the arguments with `"id": ""` and no name, so a client must key
the pieces on `index`. `enable_thinking` streams `reasoning_content` before the content,
and is refused without a stream."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from mockllm.core.encoding import dumps
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.ids import HEX, derive
from mockllm.core.scenario import Scenario
from mockllm.errors import RequestError
from mockllm.providers.base import Parsed
from mockllm.providers.flavours.base import (
    Flavour,
    drop,
    explicit_id,
    map_chunks,
    reorder,
    request_params,
    uuid_of,
)

# DashScope's key order, as its documented stream samples show it.
_TOP = ("choices", "object", "usage", "created", "system_fingerprint", "model", "id")
_CALL = ("function", "index", "id", "type")
# Open-source Qwen3 sizes (qwen3-32b, qwen3-235b-a22b) think unless told not to; qwq and
# the *-thinking models always do.
_THINKS = re.compile(r"qwen3-\d+b|qwq|thinking")


class Qwen(Flavour):
    name = "qwen"
    fault_table: ClassVar[Mapping[int, tuple[str, str, str | None]]] = {
        429: (
            "limit_requests",
            "Requests rate limit exceeded, please try again later.",
            "limit_requests",
        ),
        500: ("internal_error", "An internal error has occured, please try again later.", None),
        503: ("service_unavailable", "The service is temporarily unavailable.", None),
    }

    def thinking(self, body: Mapping[str, Any]) -> bool:
        asked = body.get("enable_thinking")
        if isinstance(asked, bool):
            return asked
        return bool(_THINKS.search(str(body.get("model", ""))))

    def shows_reasoning(self, parsed: Parsed) -> bool:
        return self.thinking(request_params(parsed))

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        own = explicit_id(scenario, turn, index)
        retry = () if attempt == 1 else (f"attempt {attempt}",)  # fresh ids per retry
        return own or derive("call_", 22, "qwen", scenario.name, turn, index, *retry, alphabet=HEX)

    def completion_id(self, resolved: Resolved) -> str:
        return "chatcmpl-" + uuid_of("qwen", resolved.scenario.name, resolved.turn)

    def body(self, obj: dict[str, Any], resolved: Resolved, parsed: Parsed) -> dict[str, Any]:
        message = obj["choices"][0]["message"]
        drop(message, "refusal", "annotations")
        return _top(obj)

    def stream(self, events: list[Event], resolved: Resolved, parsed: Parsed) -> list[Event]:
        def change(obj: dict[str, Any], part: str) -> dict[str, Any]:
            for choice in obj["choices"]:
                delta = choice["delta"]
                drop(delta, "refusal")
                calls = delta.get("tool_calls")
                if calls:  # later pieces carry an empty id (not none) and their type
                    delta["tool_calls"] = [
                        reorder({"id": "", "type": "function", **c}, _CALL) for c in calls
                    ]
            return _top(obj)

        return map_chunks(events, change)

    def request_id(self, *parts: object) -> str:
        return uuid_of("qwen-request", *parts)

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        kind, _, code = self.fault_texts(error.status)
        default = "invalid_parameter_error" if error.status == 400 else code or kind
        return dumps(
            {
                "error": {
                    "code": error.code or default,
                    "param": error.param,
                    "message": error.message,
                    "type": error.error_type
                    or ("invalid_request_error" if error.status < 500 else kind),
                },
                "id": "chatcmpl-" + request_id,
                "request_id": request_id,
            }
        )


def _top(obj: dict[str, Any]) -> dict[str, Any]:
    obj["system_fingerprint"] = None
    drop(obj, "service_tier")
    return reorder(obj, _TOP)
