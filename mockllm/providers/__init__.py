"""Wire-format adapters. Built-in ones register exactly as a third-party one would."""

from __future__ import annotations

from .anthropic import Messages
from .base import Adapter, Event, Parsed
from .openai_chat import ChatCompletions
from .openai_responses import Responses

ADAPTERS: dict[str, type[Adapter]] = {}


def register(adapter: type[Adapter]) -> type[Adapter]:
    """Make a wire format available to every server started afterwards."""
    ADAPTERS[adapter.api] = adapter
    return adapter


register(ChatCompletions)
register(Responses)
register(Messages)

__all__ = ["ADAPTERS", "Adapter", "Event", "Parsed", "register"]
