"""The Chat Completions flavours (docs/flavours.md): one small module per provider, each a
`Flavour` whose hooks reshape what the Chat adapter renders."""

from __future__ import annotations

from mockllm.providers.flavours.azure import Azure
from mockllm.providers.flavours.base import PARAMS, Flavour
from mockllm.providers.flavours.deepseek import DeepSeek
from mockllm.providers.flavours.doubao import Doubao
from mockllm.providers.flavours.glm import Glm
from mockllm.providers.flavours.kimi import Kimi
from mockllm.providers.flavours.minimax import MiniMax
from mockllm.providers.flavours.mistral import Mistral
from mockllm.providers.flavours.qwen import Qwen

FLAVOURS: dict[str, Flavour] = {
    f.name: f
    for f in (
        Flavour(),
        DeepSeek(),
        Qwen(),
        Kimi(),
        Glm(),
        Doubao(),
        MiniMax(),
        Mistral(),
        Azure(),
    )
}

__all__ = ["FLAVOURS", "PARAMS", "Flavour"]
