"""Wire-format adapters. Built-in ones register exactly as a third-party one would."""

from __future__ import annotations

from .base import Adapter, Event, Parsed
from .openai_chat import ChatCompletions

ADAPTERS: dict[str, Adapter] = {}


def register(adapter: Adapter) -> None:
    ADAPTERS[adapter.api] = adapter


def by_family(family: str) -> Adapter:
    return next(a for a in ADAPTERS.values() if a.family == family)


register(ChatCompletions())

__all__ = ["ADAPTERS", "Adapter", "Event", "Parsed", "by_family", "register"]
