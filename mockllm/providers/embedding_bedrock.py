"""Embeddings on Amazon Bedrock's InvokeModel (`POST /model/{modelId}/invoke`), for the two
embedding families whose bodies are simple: Amazon Titan Text Embeddings (`inputText`;
v2 takes `dimensions` 256, 512 or 1024) and Cohere Embed (`texts`, `input_type`). Errors
in Bedrock's shape (`{"message"}`, `x-amzn-ErrorType`), by the Bedrock wire's adapter."""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from mockllm.core import embeddings
from mockllm.core.embedding_rules import Asked
from mockllm.errors import RequestError

# docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html and
# model-parameters-embed-v3.html: "1024 (default), 512, 256"; 0 to 96 texts a call, 0 to
# 2048 characters each
TITAN_V2_DIMENSIONS = (256, 512, 1024)
TITAN_MAX_TOKENS = 8192
COHERE_MAX_TEXTS = 96
COHERE_MAX_CHARS = 2048


def is_embedding_model(model: str) -> bool:
    return "titan-embed-text" in model or "cohere.embed" in model


def bedrock_request(body: object, model: str) -> Asked:
    if not isinstance(body, dict):
        raise _invalid("Malformed input request, please reformat your input and try again.")
    if "cohere.embed" in model:
        return _cohere(body, model)
    text = body.get("inputText")
    if not isinstance(text, str) or not text:
        raise _invalid("Malformed input request: #: required key [inputText] not found")
    if embeddings.tokens(text) > TITAN_MAX_TOKENS:
        raise bedrock_over_limit()
    dims = 1536 if "v1" in model else 1024  # Titan Embeddings G1: 1536
    asked = body.get("dimensions")
    if asked is not None:
        if "v1" in model or asked not in TITAN_V2_DIMENSIONS:
            shown = str(asked)[:20]
            raise _invalid(
                f"Malformed input request: #/dimensions: {shown} is not a valid enum value"
            )
        dims = asked
    return Asked(model, (text,), (embeddings.tokens(text),), dims)


def _cohere(body: dict[str, object], model: str) -> Asked:
    texts = body.get("texts")
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):  # 0 to 96
        raise _invalid("Malformed input request: #/texts: expected type: JSONArray of strings")
    if len(texts) > COHERE_MAX_TEXTS:
        found = f"expected maximum item count: {COHERE_MAX_TEXTS}, found: {len(texts)}"
        raise _invalid(f"Malformed input request: #/texts: {found}")
    if any(len(t) > COHERE_MAX_CHARS for t in texts):
        raise bedrock_over_limit()
    return Asked(model, tuple(texts), tuple(embeddings.tokens(t) for t in texts), 1024)


def bedrock_over_limit() -> RequestError:
    return _invalid("Input is too long for requested model.")


def _invalid(message: str) -> RequestError:
    return RequestError(400, message, error_type="ValidationException")


def bedrock_body(asked: Asked, vectors: Sequence[bytes], body: object) -> bytes:
    values = [embeddings.unpack(v) for v in vectors]
    if "cohere.embed" in asked.model:
        by_type = isinstance(body, dict) and bool(body.get("embedding_types"))
        return orjson.dumps(
            {
                "id": embeddings.packed("\n".join(asked.texts), 4).hex(),  # stable
                "texts": list(asked.texts),
                "embeddings": {"float": values} if by_type else values,
                "response_type": "embeddings_by_type" if by_type else "embeddings_floats",
            }
        )
    out: dict[str, object] = {"embedding": values[0], "inputTextTokenCount": asked.tokens[0]}
    if "v1" not in asked.model:  # v2 always adds embeddingsByType
        out["embeddingsByType"] = {"float": values[0]}
    return orjson.dumps(out)
