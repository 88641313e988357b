"""Wire-format adapters. Built-in ones register exactly as a third-party one would."""

from __future__ import annotations

from mockllm.core.validation import RuleSet
from mockllm.providers import (
    anthropic_rules,
    gemini_rules,
    openai_chat_rules,
    openai_responses_rules,
)
from mockllm.providers.anthropic import Messages
from mockllm.providers.base import Adapter, Parsed
from mockllm.providers.gemini import Gemini
from mockllm.providers.openai_chat import ChatCompletions
from mockllm.providers.openai_responses import Responses

ADAPTERS: dict[str, type[Adapter]] = {}


def register(adapter: type[Adapter], rules: RuleSet | None = None) -> type[Adapter]:
    """Make a wire format (and its history rules) available to every server started afterwards."""
    if rules is not None:
        adapter.rules = rules
    ADAPTERS[adapter.api] = adapter
    return adapter


register(ChatCompletions, openai_chat_rules.RULES)
register(Responses, openai_responses_rules.RULES)
register(Messages, anthropic_rules.RULES)
register(Gemini, gemini_rules.RULES)

__all__ = ["ADAPTERS", "Adapter", "Parsed", "register"]
