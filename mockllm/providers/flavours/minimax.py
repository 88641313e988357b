"""MiniMax (M2 family), OpenAI-compatible (docs/flavours.md#minimax).

The model's thinking is written inside `content` as `<think>…</think>` and must be kept in
the history; `reasoning_split: true` moves it to `reasoning_details` instead."""

from __future__ import annotations

from typing import Any

from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.providers.base import Parsed
from mockllm.providers.flavours.base import Flavour, drop, map_chunks, request_params

OPEN, CLOSE = "<think>\n", "\n</think>\n\n"


def detail(text: str) -> dict[str, Any]:
    """One `reasoning_details` entry, as MiniMax sends it."""
    return {
        "type": "reasoning.text",
        "id": "reasoning-text-1",
        "format": "MiniMax-response-v1",
        "index": 0,
        "text": text,
    }


class MiniMax(Flavour):
    name = "minimax"

    def body(self, obj: dict[str, Any], resolved: Resolved, parsed: Parsed) -> dict[str, Any]:
        message = obj["choices"][0]["message"]
        drop(message, "refusal", "annotations")
        reasoning = message.pop("reasoning_content", None)
        if reasoning is not None:
            if _split(parsed):
                message["reasoning_details"] = [detail(reasoning)]
            else:
                message["content"] = OPEN + reasoning + CLOSE + (message.get("content") or "")
        return drop(obj, "service_tier")

    def stream(self, events: list[Event], resolved: Resolved, parsed: Parsed) -> list[Event]:
        split = _split(parsed)
        last = max((i for i, e in enumerate(events) if e.part == "reasoning"), default=-1)
        first = next((i for i, e in enumerate(events) if e.part == "reasoning"), -1)
        position = iter(range(len(events)))

        def change(obj: dict[str, Any], part: str) -> dict[str, Any]:
            at = next(position)
            for choice in obj["choices"]:
                delta = choice["delta"]
                drop(delta, "refusal")
                piece = delta.pop("reasoning_content", None)
                if isinstance(piece, str) and part == "reasoning":
                    if split:
                        delta["reasoning_details"] = [detail(piece)]
                    else:
                        opened = OPEN if at == first else ""
                        delta["content"] = opened + piece + (CLOSE if at == last else "")
            return drop(obj, "service_tier")

        return map_chunks(events, change)


def _split(parsed: Parsed) -> bool:
    return request_params(parsed).get("reasoning_split") is True
