"""DeepSeek: its wire shape is rendered by providers/openai_chat.py (`flavor: deepseek`,
kept there since it came first); this names its thinking mode for the rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockllm.providers.flavours.base import Flavour, thinking_type


class DeepSeek(Flavour):
    name = "deepseek"

    def thinking(self, body: Mapping[str, Any]) -> bool:
        """Asked for, or a reasoning model that was not told not to."""
        kind = thinking_type(body)
        if kind is not None:
            return kind == "enabled"
        model = str(body.get("model", ""))
        return "reasoner" in model or model.startswith("deepseek-v4")
