"""Kimi on Moonshot's OpenAI-compatible API (docs/flavours.md#kimi).

Call ids are `functions.NAME:IDX`, IDX counting the conversation's calls; the thinking
models send `reasoning_content`, which must come back on every assistant message with
tool calls (rule K1); a stream's usage rides in its last chunk's choice."""

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
    counts,
    drop,
    explicit_id,
    map_chunks,
    thinking_type,
)

# kimi-k2-thinking*, and the K2.5-and-later models, which think unless told not to.
_THINKS = re.compile(r"thinking|kimi-k(2\.[5-9]|[3-9])")


class Kimi(Flavour):
    name = "kimi"
    fault_table: ClassVar[Mapping[int, tuple[str, str, str | None]]] = {
        429: (
            "rate_limit_reached_error",
            "Your account org-mockllm request reached organization max RPM: 3, please try "
            "again after 1 seconds",
            None,
        ),
        500: ("server_error", "The server had an error while processing your request.", None),
        503: (
            "engine_overloaded_error",
            "The engine is currently overloaded, please try again later",
            None,
        ),
    }

    def thinking(self, body: Mapping[str, Any]) -> bool:
        kind = thinking_type(body)
        if kind is not None:
            return kind == "enabled"
        return bool(_THINKS.search(str(body.get("model", ""))))

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        # Positional, as Kimi's own are (functions.NAME:IDX, IDX counting the conversation's
        # calls): a retried turn gets the same ids from the real API too, so `attempt` is unused.
        own = explicit_id(scenario, turn, index)
        if own is not None:
            return own
        earlier = 0  # IDX counts every call of the conversation so far
        for t in range(turn):
            served = scenario.turn(t)
            earlier += len(served.reply.tool_calls) if served else 0
        served = scenario.turn(turn)
        calls = served.reply.tool_calls if served else ()
        name = calls[index].name if index < len(calls) else "call"
        return f"functions.{name}:{earlier + index}"

    def completion_id(self, resolved: Resolved) -> str:
        return _id(resolved)

    def body(self, obj: dict[str, Any], resolved: Resolved, parsed: Parsed) -> dict[str, Any]:
        choice = obj["choices"][0]
        drop(choice["message"], "refusal", "annotations")
        drop(choice, "logprobs")
        obj["usage"] = counts(resolved)
        return drop(obj, "service_tier", "system_fingerprint")

    def stream(self, events: list[Event], resolved: Resolved, parsed: Parsed) -> list[Event]:
        def change(obj: dict[str, Any], part: str) -> dict[str, Any] | None:
            if not obj["choices"]:
                return None  # no separate usage chunk: it rides on the finish chunk
            choice = obj["choices"][0]
            drop(choice["delta"], "refusal")
            drop(choice, "logprobs")
            if choice.get("finish_reason") is not None:
                choice["usage"] = counts(resolved)
            return drop(obj, "service_tier", "system_fingerprint", "usage")

        return map_chunks(events, change)

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        kind, _, _ = self.fault_texts(error.status)
        wanted = error.error_type or ("invalid_request_error" if error.status < 500 else kind)
        return dumps({"error": {"message": error.message, "type": wanted}})


def _id(resolved: Resolved) -> str:
    return derive("chatcmpl-", 24, "kimi", resolved.scenario.name, resolved.turn, alphabet=HEX)
