"""What Ollama's clients ask before (or besides) chatting: `GET /api/tags` (the local models;
LangChain's `validate_model_on_init` looks the model up there), `POST /api/show`,
`GET /api/ps`, `GET /api/version`, and `GET /` ("Ollama is running"). Shapes are
ollama/ollama's api/types.go (ListResponse, ShowResponse, ProcessResponse); answered
from the scenarios' models, never logged (they are no model request, as GET /v1/models)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mockllm.core.scenario import Scenario, TextMatch
from mockllm.providers.base import dumps
from mockllm.providers.ollama_render import CREATED_AT

# Listed whatever the scenarios say, so that a client checking its model finds it.
MODELS = ("llama3.2:latest", "qwen3:latest", "gpt-oss:20b", "mockllm:latest")
VERSION = "0.12.0"  # a version with tool call ids and `thinking` (mockllm sends both)
RUNNING = b"Ollama is running"
PROBES = frozenset({"api/tags", "api/version", "api/ps", "api/show"})
_DIGEST = "0" * 64


def _equal(match: TextMatch | None) -> str | None:
    return match.value if match is not None and match.how == "equals" else None


def scenario_models(scenarios: Iterable[Scenario]) -> list[str]:
    """The models the scenarios name exactly (turns' `expect.model`/`match.model`, side
    requests' `match.model`), with `:latest` where they name no tag, then MODELS."""
    found: list[str | None] = []
    for scenario in scenarios:
        for turn in scenario.turns:
            found += [_equal(turn.expect.model) if turn.expect else None]
            found += [_equal(turn.match.model) if turn.match else None]
        found += [_equal(side.match.model) for side in scenario.side_requests]
    named = [m if ":" in m else f"{m}:latest" for m in found if m]
    return list(dict.fromkeys([*named, *MODELS]))


def _details() -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": "mockllm",
        "families": ["mockllm"],
        "parameter_size": "0B",
        "quantization_level": "F16",
    }


def tags(models: list[str]) -> bytes:
    entries = [
        {
            "name": m,
            "model": m,
            "modified_at": CREATED_AT,
            "size": 0,
            "digest": _DIGEST,
            "details": _details(),
        }
        for m in models
    ]
    return dumps({"models": entries})


def running() -> bytes:
    """GET /api/ps: nothing is loaded (a mock has no memory to fill)."""
    return dumps({"models": []})


def show(model: str) -> bytes:
    """POST /api/show for any model: it can chat, call tools and think."""
    return dumps(
        {
            "modelfile": f"# served by mockllm\nFROM {model}\n",
            "template": "{{ .Prompt }}",
            "details": _details(),
            "model_info": {"general.architecture": "mockllm", "mockllm.context_length": 131072},
            "capabilities": ["completion", "tools", "thinking"],
            "modified_at": CREATED_AT,
        }
    )


def version() -> bytes:
    return dumps({"version": VERSION})
