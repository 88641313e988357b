"""The embeddings wires: OpenAI's `POST /v1/embeddings` and Gemini's `:embedContent` and
`:batchEmbedContents`, each a parse (wire JSON → `Asked`, or the provider's 400) and a
render (vectors → the provider's body). docs/embeddings.md quotes the sources of each
limit and message.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import orjson

from mockllm.core import embeddings
from mockllm.core.embedding_rules import Asked
from mockllm.errors import RequestError

# OpenAI: "any array must be 2048 dimensions or less", 8192 tokens an input, 300,000 a
# request (the openai SDK's `embeddings.create` docstring).
OPENAI_MAX_INPUTS = 2048
OPENAI_MAX_TOKENS = 8192
OPENAI_MAX_REQUEST_TOKENS = 300_000
# Gemini: at most 100 requests a batch; 2048 input tokens (text-embedding-004,
# gemini-embedding-001).
GEMINI_MAX_INPUTS = 100
GEMINI_MAX_TOKENS = 2048
# mockllm's own bound on the numbers one response carries (inputs × dimensions): 2048
# inputs of 1536 floats, about 60 MB of JSON. Past it, a 400 that says so.
MAX_VALUES = OPENAI_MAX_INPUTS * 1536
MAX_TOKEN_ID = 2**32 - 1  # past any tokenizer's vocabulary; bounds the text a token array makes

_INVALID_INPUT = (
    "'$.input' is invalid. Please check the API reference: "
    "https://platform.openai.com/docs/api-reference."
)
# Models that take no `dimensions` (OpenAI: "Only supported in text-embedding-3 and later").
_FIXED = ("text-embedding-ada-002",)


def openai_request(body: object) -> tuple[Asked, str]:
    """The request and its `encoding_format` ('float' or 'base64')."""
    if not isinstance(body, dict):
        raise _openai_400("We could not parse the JSON body of your request.", None)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _openai_400("you must provide a model parameter", "model")
    texts, tokens = _openai_inputs(body.get("input"))
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        message = (
            f"Invalid value for 'encoding_format': {str(encoding)[:40]!r}. "
            "Supported values are: 'float' and 'base64'."
        )
        raise _openai_400(message, "encoding_format")
    dims = _openai_dimensions(model, body.get("dimensions"))
    asked = Asked(model, texts, tokens, dims)
    _bounded(asked, "input")
    return asked, encoding


def _openai_inputs(value: object) -> tuple[tuple[str, ...], tuple[int, ...]]:
    if isinstance(value, str):
        value = [value]
    elif isinstance(value, list) and value and all(_is_id(v) for v in value):
        value = [value]  # one token array
    if not isinstance(value, list) or not value:
        raise _openai_400(_INVALID_INPUT, "input")
    if len(value) > OPENAI_MAX_INPUTS:
        message = f"'$.input' is invalid: array length must be {OPENAI_MAX_INPUTS} or less."
        raise _openai_400(message, "input")
    texts, tokens = [], []
    for item in value:
        if isinstance(item, str) and item:
            texts.append(item)
            tokens.append(embeddings.tokens(item))
        elif isinstance(item, list) and item and all(_is_id(v) for v in item):
            texts.append(" ".join(map(str, item)))  # equal arrays, equal vectors
            tokens.append(len(item))
        else:  # an empty string, an empty array, a token that is no token id
            raise _openai_400(_INVALID_INPUT, "input")
    _openai_tokens(tokens)
    return tuple(texts), tuple(tokens)


def _is_id(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_TOKEN_ID


def _openai_tokens(tokens: Sequence[int]) -> None:
    if max(tokens) > OPENAI_MAX_TOKENS:
        raise openai_over_limit()
    if (total := sum(tokens)) > OPENAI_MAX_REQUEST_TOKENS:
        message = f"Requested {total} tokens, max {OPENAI_MAX_REQUEST_TOKENS} tokens per request"
        raise _openai_400(message, None, "max_tokens_per_request")


def openai_over_limit() -> RequestError:
    """OpenAI's 400 for an input past the model's limit (its wording since 2026)."""
    message = f"Invalid 'input': maximum context length is {OPENAI_MAX_TOKENS} tokens."
    return _openai_400(message, None)


def _openai_dimensions(model: str, value: object) -> int:
    native = embeddings.dimensions_of(model)
    if value is None:
        return native
    if model.startswith(_FIXED):
        raise _openai_400("This model does not support specifying dimensions.", None)
    if type(value) is not int or value < 1:
        shown = str(value)[:40]
        message = f"Invalid value for 'dimensions' = {shown}. Must be greater than or equal to 1."
        raise _openai_400(message, "dimensions")
    if value > native:
        message = (
            f"Invalid value for 'dimensions' = {value}. Must be less than or equal to {native}."
        )
        raise _openai_400(message, "dimensions")
    return value


def _openai_400(message: str, param: str | None, code: str | None = None) -> RequestError:
    return RequestError(400, message, param=param, code=code, error_type="invalid_request_error")


def openai_body(asked: Asked, vectors: Sequence[bytes], encoding: str) -> bytes:
    data = [
        {"object": "embedding", "index": i, "embedding": _encoded(v, encoding)}
        for i, v in enumerate(vectors)
    ]
    used = sum(asked.tokens)
    usage = {"prompt_tokens": used, "total_tokens": used}
    return orjson.dumps({"object": "list", "data": data, "model": asked.model, "usage": usage})


def _encoded(packed: bytes, encoding: str) -> list[float] | str:
    """`packed`: float32 little-endian, as OpenAI's are: base64 sends these bytes, float
    the same numbers."""
    if encoding == "base64":
        return base64.b64encode(packed).decode("ascii")
    return embeddings.unpack(packed)


# --- Gemini ---------------------------------------------------------------------------


def gemini_request(body: object, model: str, batch: bool) -> Asked:
    """`:embedContent` takes one `content`; `:batchEmbedContents` a list of `requests`,
    each an embedContent body (the google-genai SDK sends this one, even for one text)."""
    if not isinstance(body, dict):
        raise _gemini_400("Invalid JSON payload received.")
    if not batch:
        items = [body]
    elif not isinstance(body.get("requests"), list) or not body["requests"]:
        raise _gemini_400("* BatchEmbedContentsRequest.requests: must not be empty\n")
    else:
        items = body["requests"]
    if len(items) > GEMINI_MAX_INPUTS:
        message = (
            "* BatchEmbedContentsRequest.requests: at most "
            f"{GEMINI_MAX_INPUTS} requests can be in one batch\n"
        )
        raise _gemini_400(message)
    texts = tuple(_gemini_text(item, i) for i, item in enumerate(items))
    tokens = tuple(embeddings.tokens(t) for t in texts)
    if max(tokens) > GEMINI_MAX_TOKENS:
        raise gemini_over_limit(max(tokens))
    native = embeddings.dimensions_of(model)
    dims = {_gemini_dimensions(item, native) for item in items}
    if len(dims) > 1:
        raise _gemini_400("* BatchEmbedContentsRequest: every request must ask one dimension\n")
    asked = Asked(model, texts, tokens, dims.pop())
    _bounded(asked, "requests")
    return asked


def _gemini_text(item: object, index: int) -> str:
    content = item.get("content") if isinstance(item, dict) else None
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list) or not parts:
        raise _gemini_400(f"* BatchEmbedContentsRequest.requests[{index}].content: is required\n")
    texts = [p.get("text") for p in parts if isinstance(p, dict)]
    if not texts or not all(isinstance(t, str) for t in texts) or not "".join(texts):  # type: ignore[arg-type]
        raise _gemini_400("Request contains an invalid argument.")
    return "\n".join(texts)  # type: ignore[arg-type]


def _gemini_dimensions(item: dict[str, Any], native: int) -> int:
    value = item.get("outputDimensionality")
    if value is None:
        return native
    if type(value) is not int or not 1 <= value <= native:
        shown = str(value)[:40]
        raise _gemini_400(f"* outputDimensionality: {shown} is out of range [1, {native}]\n")
    return value


def gemini_over_limit(tokens: int) -> RequestError:
    """Gemini's 400 for an input past the model's token limit."""
    message = (
        f"The input token count ({tokens}) exceeds the maximum number of tokens allowed "
        f"({GEMINI_MAX_TOKENS})."
    )
    return _gemini_400(message)


def _gemini_400(message: str) -> RequestError:
    return RequestError(400, message, error_type="INVALID_ARGUMENT")


def gemini_body(vectors: Sequence[bytes], batch: bool) -> bytes:
    values = [{"values": _encoded(v, "float")} for v in vectors]
    return orjson.dumps({"embeddings": values} if batch else {"embedding": values[0]})


def _bounded(asked: Asked, param: str) -> None:
    if len(asked.texts) * asked.dims > MAX_VALUES:
        message = (
            f"mockllm: {len(asked.texts)} inputs of {asked.dims} dimensions are more numbers "
            f"than one response carries here ({MAX_VALUES}); send fewer inputs a request"
        )
        raise RequestError(400, message, param=param, code="mockllm_embedding_limit")
