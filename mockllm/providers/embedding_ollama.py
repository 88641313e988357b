"""Ollama's embeddings: `POST /api/embed` (`input` a string or strings, `truncate`,
`dimensions`) and the older `POST /api/embeddings` (`prompt`), answered as Ollama does
(docs/embeddings.md), errors as `{"error": "…"}`. The chat side of Ollama is another
wire's; this answers only its embeddings."""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from mockllm.core import embeddings
from mockllm.core.embedding_rules import Asked
from mockllm.errors import RequestError
from mockllm.providers.base import dumps
from mockllm.providers.openai_chat import ChatCompletions

# Ollama's context is the model's (`num_ctx`); mockllm takes 8192 tokens for every model.
OLLAMA_MAX_TOKENS = 8192
OVER_LIMIT = "the input length exceeds the context length"  # its 400 with truncate: false
MAX_INPUTS = 2048  # mockllm's bound: Ollama sets none


class OllamaShape(ChatCompletions):
    """Ollama's error body, `{"error": "…"}`, for the embeddings routes."""

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        return dumps({"error": error.message})

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        return "error", f"mockllm fault: HTTP {status}", None

    def invalid_json(self, detail: str) -> RequestError:
        return RequestError(400, "invalid character in JSON body: " + detail, kind="invalid_json")


def ollama_request(body: object, legacy: bool) -> Asked:
    """`/api/embed`'s body, or `/api/embeddings`' (`legacy`: one `prompt`)."""
    if not isinstance(body, dict):
        raise _400("invalid request body")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _400("model is required")
    value = body.get("prompt" if legacy else "input", "")
    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise _400("invalid input type")
    if len(texts) > MAX_INPUTS:
        raise _400(f"mockllm: at most {MAX_INPUTS} inputs a request")
    truncate = body.get("truncate", True) is not False
    texts = [_within(t, truncate) for t in texts]
    dims = _dimensions(model, body.get("dimensions"))
    return Asked(model, tuple(texts), tuple(embeddings.tokens(t) for t in texts), dims)


def _within(text: str, truncate: bool) -> str:
    if embeddings.tokens(text) <= OLLAMA_MAX_TOKENS:
        return text
    if not truncate:
        raise ollama_over_limit()
    return text[: OLLAMA_MAX_TOKENS * 4]  # Ollama's default: the input cut to the context


def _dimensions(model: str, value: object) -> int:
    native = embeddings.dimensions_of(model)
    if value is None:
        return native
    if type(value) is not int or not 1 <= value <= native:
        raise _400(f"dimensions must be between 1 and {native}")
    return value


def ollama_over_limit() -> RequestError:
    return _400(OVER_LIMIT)


def _400(message: str) -> RequestError:
    return RequestError(400, message)


def ollama_body(asked: Asked, vectors: Sequence[bytes], legacy: bool) -> bytes:
    values = [embeddings.unpack(v) for v in vectors]
    if legacy:
        return orjson.dumps({"embedding": values[0] if values else []})
    tokens = sum(asked.tokens)
    # Durations in ns, as Ollama reports them: made up but never 0, so rates can be computed
    timing = {"total_duration": 1_000_000 + 10_000 * tokens, "load_duration": 1_000_000}
    return orjson.dumps(
        {"model": asked.model, "embeddings": values, **timing, "prompt_eval_count": tokens}
    )
