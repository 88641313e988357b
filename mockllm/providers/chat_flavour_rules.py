"""The history rules of the Chat Completions flavours other than DeepSeek's (whose live in
openai_chat_rules.py), with each provider's own texts (docs/validation.md). They join the
Chat rules, so `--validation warn|off` and a scenario's `validation:` apply to them too."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mockllm.core.validation import Raised, RuleContext, items
from mockllm.providers.flavours import FLAVOURS
from mockllm.providers.openai_chat_rules import RULES

__all__ = ["RULES"]


@RULES.rule("Q1", "qwen.thinking_requires_stream", needs=("enable_thinking", "model"))
def _qwen_thinking_without_stream(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    if ctx.flavor == "qwen" and body.get("stream") is not True and FLAVOURS["qwen"].thinking(body):
        message = "parameter.enable_thinking must be set to false for non-streaming calls"
        yield message, None, "invalid_parameter_error"


@RULES.rule("K1", "kimi.reasoning_content_missing")
def _kimi_reasoning_missing(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    if ctx.flavor != "kimi" or not FLAVOURS["kimi"].thinking(body):
        return
    for i, m in items(body.get("messages")):
        if (
            m.get("role") == "assistant"
            and m.get("tool_calls")
            and not isinstance(m.get("reasoning_content"), str)
        ):
            message = (
                "thinking is enabled but reasoning_content is missing in assistant tool call "
                f"message at index {i}"
            )
            yield message, None, None
            return
