"""The embeddings routes under hostile bodies, in-process (serving/embedding_routes.py):
never a 5xx, always the provider's error shape, every request logged readably, bounded by
the limits (thousands of inputs, huge token ids, inputs past the token limit)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.loading.loader import load_text
from mockllm.serving.server import build_app
from tests.unit.asgi import post

APP = build_app([load_text("name: hello\nturns:\n  - reply: {text: hi}\n")])
OPENAI = "/v1/embeddings"
GEMINI = "/v1beta/models/text-embedding-004:batchEmbedContents"
OLLAMA = "/api/embed"
BEDROCK = "/model/amazon.titan-embed-text-v2:0/invoke"
COHERE = "/model/cohere.embed-english-v3/invoke"
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
INPUTS = st.one_of(
    JSON,
    st.text(max_size=40),
    st.lists(st.text(max_size=10), max_size=6),
    st.lists(st.integers(), max_size=6),
    st.lists(st.lists(st.integers(min_value=-(2**70), max_value=2**70), max_size=4), max_size=4),
)
OPENAI_BODIES = st.fixed_dictionaries(
    {"model": st.sampled_from(["text-embedding-3-small", "text-embedding-ada-002", ""]),
     "input": INPUTS},
    optional={"dimensions": JSON | st.integers(), "encoding_format": JSON | st.sampled_from(["float", "base64"])},
)  # fmt: skip
GEMINI_BODIES = st.fixed_dictionaries(
    {"requests": st.lists(st.fixed_dictionaries({"content": JSON | st.just({"parts": [{"text": "x"}]})},
     optional={"outputDimensionality": JSON}), max_size=4) | JSON}
)  # fmt: skip


OLLAMA_BODIES = st.fixed_dictionaries(
    {"model": st.sampled_from(["nomic-embed-text", "all-minilm:latest", ""]), "input": INPUTS},
    optional={"dimensions": JSON, "truncate": JSON},
)


BEDROCK_BODIES = st.fixed_dictionaries(
    {}, optional={"inputText": JSON, "dimensions": JSON, "texts": INPUTS, "input_type": JSON}
)


def _ask(path: str, body: bytes) -> tuple[int, Any]:
    coroutine = post(APP, path, body)
    try:  # it never suspends (the memory log writes at once): done in one step
        coroutine.send(None)
    except StopIteration as done:
        status, out = done.value
        return status, json.loads(out)
    raise AssertionError("the embeddings route suspended")


def _logged_last() -> dict[str, Any]:
    *_, entry = APP.journal.entries()
    return entry.to_json()


def _error_shaped(path: str, status: int, answer: Any) -> bool:
    if path in (BEDROCK, COHERE):
        return isinstance(answer.get("message"), str)
    error = answer["error"]
    if path == OPENAI:
        return isinstance(error["message"], str) and "type" in error and "param" in error
    if path == OLLAMA:
        return isinstance(error, str) and set(answer) == {"error"}
    return error["code"] == status and isinstance(error["status"], str)


@settings(max_examples=150)
@given(
    case=st.one_of(
        OPENAI_BODIES.map(lambda b: (OPENAI, json.dumps(b).encode())),
        GEMINI_BODIES.map(lambda b: (GEMINI, json.dumps(b).encode())),
        st.binary(max_size=60).map(lambda b: (OPENAI, b)),
        st.binary(max_size=60).map(lambda b: (GEMINI, b)),
        OLLAMA_BODIES.map(lambda b: (OLLAMA, json.dumps(b).encode())),
        st.binary(max_size=60).map(lambda b: (OLLAMA, b)),
        BEDROCK_BODIES.map(lambda b: (BEDROCK, json.dumps(b).encode())),
        BEDROCK_BODIES.map(lambda b: (COHERE, json.dumps(b).encode())),
        st.binary(max_size=60).map(lambda b: (BEDROCK, b)),
    )
)
def test_hostile_bodies_get_the_providers_error_never_a_5xx(case: tuple[str, bytes]) -> None:
    path, body = case
    status, answer = _ask(path, body)
    assert status < 500, answer
    if status == 200:
        assert {"data", "embeddings", "embedding"} & set(answer)
    else:
        assert status == 400 and _error_shaped(path, status, answer), answer
    logged = _logged_last()
    assert logged["api"].endswith("-embeddings")
    assert logged["side"]["name"] == "embeddings" and logged["turn"] is None


def test_the_limits_are_the_providers_and_mockllms() -> None:
    cases = [
        (OPENAI, {"model": "text-embedding-3-small", "input": ["x"] * 5000}, "2048 or less"),
        (OPENAI, {"model": "text-embedding-3-small", "input": [[10**30]]}, "'$.input' is invalid"),
        (OPENAI, {"model": "text-embedding-3-small", "input": ["w " * 8000] * 80},
         "max 300000 tokens per request"),
        (OPENAI, {"model": "text-embedding-3-large", "input": ["x"] * 2048},
         "more numbers than one response carries"),
        (GEMINI, {"requests": [{"content": {"parts": [{"text": "x"}]}}] * 1000},
         "at most 100 requests"),
        (GEMINI, {"requests": [{"content": {"parts": [{"text": "w " * 5000}]}}]},
         "exceeds the maximum number of tokens allowed (2048)"),
        (OLLAMA, {"model": "all-minilm", "input": ["x"] * 3000}, "at most 2048 inputs"),
        (OLLAMA, {"model": "all-minilm", "input": "w " * 20000, "truncate": False},
         "the input length exceeds the context length"),
    ]  # fmt: skip
    for path, body, says in cases:
        status, answer = _ask(path, json.dumps(body).encode())
        error = answer["error"]
        message = error if isinstance(error, str) else error["message"]
        assert status == 400 and says in message, (says, answer)
    # ... and it still serves
    status, answer = _ask(OPENAI, b'{"model": "text-embedding-3-small", "input": "ok"}')
    assert status == 200 and len(answer["data"][0]["embedding"]) == 1536
