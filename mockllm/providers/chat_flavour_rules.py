"""The history rules of the Chat Completions flavours other than DeepSeek's (whose live in
openai_chat_rules.py), with each provider's own texts (docs/validation.md). They join the
Chat rules, so `--validation warn|off` and a scenario's `validation:` apply to them too."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from mockllm.core.validation import Raised, RuleContext, items
from mockllm.providers.flavours import FLAVOURS
from mockllm.providers.flavours.mistral import MISTRAL_ID_CODE
from mockllm.providers.openai_chat_rules import RULES

__all__ = ["RULES"]


@RULES.rule(
    "Q1", "qwen.thinking_requires_stream", needs=("enable_thinking", "model"), flavors=("qwen",)
)
def _qwen_thinking_without_stream(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    if ctx.flavor == "qwen" and body.get("stream") is not True and FLAVOURS["qwen"].thinking(body):
        message = "parameter.enable_thinking must be set to false for non-streaming calls"
        yield message, None, "invalid_parameter_error"


@RULES.rule("K1", "kimi.reasoning_content_missing", flavors=("kimi",))
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


_MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")


@RULES.rule("M1", "mistral.tool_call_id_format", flavors=("mistral",))
def _mistral_tool_call_id(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    """Mistral refuses a history whose call ids are not 9 letters or digits: the ids another
    provider (or the harness) made, replayed as they were (docs/validation.md, M1)."""
    if ctx.flavor != "mistral":
        return
    for _, m in items(body.get("messages")):
        ids = [c.get("id") for _, c in items(m.get("tool_calls"))]
        if m.get("role") == "tool":
            ids.append(m.get("tool_call_id"))
        for found in ids:
            if found is not None and not (isinstance(found, str) and _MISTRAL_ID.fullmatch(found)):
                message = f"Tool call id was {found} but must be a-z, A-Z, 0-9, with a length of 9."
                yield message, None, MISTRAL_ID_CODE
                return
