"""Ollama's history rules (docs/validation.md, Ollama). Ollama is lenient: it renders any
role and any pairing through the model's template, and refuses a history only where its
JSON decoding does. Each text is the server's own, quoted from public reports."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mockllm.core.validation import Raised, RuleContext, RuleSet, items

RULES = RuleSet()
# What Ollama's ordered map (api.ToolCallFunctionArguments) says when `arguments` is not an
# object: a harness that replays OpenAI's JSON-string arguments (openclaw/openclaw#50749).
NOT_AN_OBJECT = "Value looks like object, but can't find closing '}' symbol"


@RULES.rule("O1", "ollama.tool_arguments_not_object", needs=("messages",))
def _arguments_not_object(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, message in items(body.get("messages")):
        for j, call in items(message.get("tool_calls")):
            function = call.get("function")
            if isinstance(function, dict) and "arguments" in function:
                found = function["arguments"]
                if found is not None and not isinstance(found, dict):
                    where = f"messages[{i}].tool_calls[{j}].function.arguments"
                    yield NOT_AN_OBJECT, where, None
                    return
