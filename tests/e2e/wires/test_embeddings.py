"""Embeddings through real HTTP and the official SDKs (docs/embeddings.md): the openai SDK
in both encodings (its default is base64, decoded as float32 by the SDK), google-genai's
embed_content, each provider's 400s, the scenario's `embeddings:` rules, and the log: an
embeddings request is a side request with its own api, never a turn."""

from __future__ import annotations

import base64
import json
import math
import os
import struct
import subprocess
import sys
from typing import Any

import boto3
import httpx
import ollama
import openai
import pytest
from botocore.config import Config
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from mockllm import Session
from mockllm.core import embeddings
from tests.support import ServerProcess

DOCS = [
    "Refunds are issued within 30 days of purchase to the original payment method.",
    "Reset your password from the account settings page using the emailed reset link.",
    "Our warehouse ships orders Monday to Friday; express shipping arrives next day.",
]
QUERIES = [
    ("how many days until my refund is issued", 0),
    ("I forgot my password, how do I reset it", 1),
    ("does express shipping arrive the next day", 2),
]
SCENARIO = """
name: embed-rules
turns:
  - reply: {text: the agent's answer}
embeddings:
  vectors:
    - {text: pinned text, vector: [0.6, 0.8, 0.0]}
  similar:
    - [how do I get my money back, "Refunds are issued within 30 days of purchase to the original payment method."]
  faults:
    - {match: {contains: rate me}, http: {status: 429, headers: {retry-after-ms: 1}}}
    - {match: {contains: wrong size}, dimensions: 7}
    - {match: {contains: too long}, over_limit: true}
"""


def _openai(server: ServerProcess, session: str, scenario: str | None = None) -> openai.OpenAI:
    prefix = f"/s/{scenario}/{session}" if scenario else ""
    headers = {} if scenario else {"x-mockllm-session": session}
    return openai.OpenAI(
        base_url=f"{server.url}{prefix}/v1", api_key="k", max_retries=0, default_headers=headers
    )


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _values(embedding: list[float] | str) -> list[float]:
    """An explicit `encoding_format="base64"` leaves the SDK's string as it came; only the
    default (omitted: the SDK asks base64 itself) is decoded for the caller."""
    if isinstance(embedding, str):
        raw = base64.b64decode(embedding)
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    return embedding


def _rank(query: list[float], docs: list[list[float]]) -> int:
    return max(range(len(docs)), key=lambda i: _cos(query, docs[i]))


@pytest.mark.parametrize("encoding", ["base64", "float", None])
def test_openai_sdk_decodes_unit_vectors_that_rank_the_closest_document_first(
    server: ServerProcess, session: str, encoding: str | None
) -> None:
    client = _openai(server, session)
    extra: dict[str, Any] = {} if encoding is None else {"encoding_format": encoding}
    docs = client.embeddings.create(model="text-embedding-3-small", input=DOCS, **extra)
    assert [d.index for d in docs.data] == [0, 1, 2]
    vectors = [_values(d.embedding) for d in docs.data]
    assert all(len(v) == 1536 and math.isclose(_cos(v, v), 1.0, abs_tol=1e-5) for v in vectors)
    assert docs.usage.prompt_tokens == docs.usage.total_tokens > 0
    for query, wanted in QUERIES:
        q = client.embeddings.create(model="text-embedding-3-small", input=query, **extra)
        assert _rank(_values(q.data[0].embedding), vectors) == wanted, query


def test_float_and_base64_carry_the_same_float32_numbers(
    server: ServerProcess, session: str
) -> None:
    body = {"model": "text-embedding-3-large", "input": ["same text"], "dimensions": 256}
    url = f"{server.url}/v1/embeddings"
    floats = httpx.post(url, json={**body, "encoding_format": "float"}).json()
    packed = httpx.post(url, json={**body, "encoding_format": "base64"}).json()
    raw = base64.b64decode(packed["data"][0]["embedding"])
    assert list(struct.unpack("<256f", raw)) == floats["data"][0]["embedding"]
    # Deterministic: the same request, the same bytes
    again = httpx.post(url, json={**body, "encoding_format": "float"})
    assert again.content == httpx.post(url, json={**body, "encoding_format": "float"}).content


def test_the_same_vector_in_a_process_of_another_hash_seed() -> None:
    code = "from mockllm.core import embeddings; print(embeddings.packed('refund policy', 8).hex())"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert other.stdout.strip() == embeddings.packed("refund policy", 8).hex()


def test_token_arrays_and_dimensions(server: ServerProcess, session: str) -> None:
    client = _openai(server, session)
    got = client.embeddings.create(
        model="text-embedding-3-small", input=[[1, 2, 3], [1, 2, 3], [9, 8]], dimensions=64
    )
    a, b, c = (d.embedding for d in got.data)
    assert len(a) == 64 and a == b and a != c
    assert got.usage.prompt_tokens == 8
    assert (
        len(client.embeddings.create(model="text-embedding-ada-002", input="x").data[0].embedding)
        == 1536
    )


@pytest.mark.parametrize(
    ("body", "says", "param"),
    [
        ({"input": ""}, "'$.input' is invalid", "input"),
        ({"input": []}, "'$.input' is invalid", "input"),
        ({"input": ["a", ""]}, "'$.input' is invalid", "input"),
        ({"input": [[1, -2]]}, "'$.input' is invalid", "input"),
        ({"input": [[2**40]]}, "'$.input' is invalid", "input"),
        ({"input": ["x"] * 2049}, "array length must be 2048 or less", "input"),
        ({"input": "word " * 7000}, "maximum context length is 8192 tokens", None),
        ({"input": "x", "dimensions": 0}, "greater than or equal to 1", "dimensions"),
        ({"input": "x", "dimensions": 1537}, "less than or equal to 1536", "dimensions"),
        ({"input": "x", "encoding_format": "int8"}, "Supported values", "encoding_format"),
    ],
)
def test_openai_refusals_are_the_sdks_bad_request(
    server: ServerProcess, session: str, body: dict[str, Any], says: str, param: str | None
) -> None:
    client = _openai(server, session)
    with pytest.raises(openai.BadRequestError) as raised:
        client.embeddings.create(model="text-embedding-3-small", **body)
    error = raised.value.body
    assert isinstance(error, dict) and says in error["message"], error
    assert error["type"] == "invalid_request_error" and error["param"] == param


def test_ada_002_takes_no_dimensions(server: ServerProcess, session: str) -> None:
    with pytest.raises(openai.BadRequestError, match="does not support specifying dimensions"):
        _openai(server, session).embeddings.create(
            model="text-embedding-ada-002", input="x", dimensions=8
        )


def _genai(server: ServerProcess, session: str, scenario: str = "") -> genai.Client:
    base = f"{server.url}/s/{scenario}/{session}" if scenario else server.url
    return genai.Client(api_key="k", http_options={"base_url": base})


def test_google_genai_embed_content(server: ServerProcess, session: str) -> None:
    client = _genai(server, session)
    docs = client.models.embed_content(model="gemini-embedding-001", contents=DOCS)
    assert docs.embeddings is not None
    vectors = [e.values or [] for e in docs.embeddings]
    assert [len(v) for v in vectors] == [3072] * 3
    for query, wanted in QUERIES:
        q = client.models.embed_content(
            model="gemini-embedding-001",
            contents=query,
            config=types.EmbedContentConfig(task_type="RETRIEVAL_QUERY"),
        )
        assert q.embeddings and _rank(q.embeddings[0].values or [], vectors) == wanted
    small = client.models.embed_content(
        model="text-embedding-004",
        contents="x",
        config=types.EmbedContentConfig(output_dimensionality=64),
    )
    assert small.embeddings and len(small.embeddings[0].values or []) == 64


def test_gemini_embed_content_route_and_refusals(server: ServerProcess) -> None:
    url = f"{server.url}/v1beta/models/text-embedding-004"
    one = httpx.post(f"{url}:embedContent", json={"content": {"parts": [{"text": "hi"}]}})
    assert len(one.json()["embedding"]["values"]) == 768
    many = {"requests": [{"content": {"parts": [{"text": "x"}]}}] * 101}
    r = httpx.post(f"{url}:batchEmbedContents", json=many)
    assert r.status_code == 400
    assert r.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert "at most 100 requests can be in one batch" in r.json()["error"]["message"]
    client = genai.Client(api_key="k", http_options={"base_url": server.url})
    with pytest.raises(genai_errors.ClientError) as raised:
        client.models.embed_content(model="text-embedding-004", contents="word " * 3000)
    assert raised.value.code == 400
    assert "exceeds the maximum number of tokens allowed (2048)" in str(raised.value.message)


def test_scenario_pins_vectors_and_neighbours(
    server: ServerProcess, session: str, mock: Session
) -> None:
    mock.add_scenario(SCENARIO)
    client = _openai(server, session, "embed-rules")
    pinned = client.embeddings.create(model="text-embedding-3-small", input="pinned text")
    assert pinned.data[0].embedding == pytest.approx([0.6, 0.8, 0.0])
    docs = [
        d.embedding
        for d in client.embeddings.create(model="text-embedding-3-small", input=DOCS).data
    ]
    # No word in common with the refunds document, and yet it ranks first: `similar`
    q = client.embeddings.create(model="text-embedding-3-small", input="how do I get my money back")
    assert _rank(q.data[0].embedding, docs) == 0
    assert _cos(q.data[0].embedding, docs[0]) > 0.98


def test_scenario_faults(server: ServerProcess, session: str, mock: Session) -> None:
    mock.add_scenario(SCENARIO)
    client = _openai(server, session, "embed-rules")
    with pytest.raises(openai.RateLimitError):
        client.embeddings.create(model="text-embedding-3-small", input=["fine", "rate me"])
    wrong = client.embeddings.create(model="text-embedding-3-small", input="wrong size please")
    assert len(wrong.data[0].embedding) == 7
    with pytest.raises(openai.BadRequestError, match="maximum context length"):
        client.embeddings.create(model="text-embedding-3-small", input="too long")
    retried = _openai(server, session, "embed-rules").with_options(max_retries=2)
    with pytest.raises(openai.RateLimitError):
        retried.embeddings.create(model="text-embedding-3-small", input="rate me")
    logged = [e for e in mock.requests() if e.api == "openai-embeddings"]
    assert [e.raw["response"]["status"] for e in logged[-3:]] == [
        429,
        429,
        429,
    ]  # the SDK retried, each logged


def test_embeddings_are_logged_as_side_requests_never_turns(
    server: ServerProcess, session: str, mock: Session
) -> None:
    mock.add_scenario(SCENARIO)
    client = _openai(server, session, "embed-rules")
    client.embeddings.create(model="text-embedding-3-small", input=DOCS)
    reply = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.choices[0].message.content == "the agent's answer"  # turn 0, not advanced
    entries = mock.requests()
    embed = next(e for e in entries if e.api == "openai-embeddings")
    assert embed.turn is None and embed.side is not None and embed.side["name"] == "embeddings"
    assert any("3 input(s)" in n for n in embed.raw["response"]["notes"])
    verdict = mock.verdict()
    assert verdict.ok and verdict.raw["side_requests"] == 1 and verdict.raw["requests"] == 1
    said = mock.transcript()
    assert "side request embeddings · openai-embeddings" in said and "← vectors (200)" in said


def test_the_ollama_client_embeds_and_ranks(server: ServerProcess, session: str) -> None:
    client = ollama.Client(host=server.url, headers={"x-mockllm-session": session})
    docs = client.embed(model="nomic-embed-text", input=DOCS)
    vectors = [list(v) for v in docs.embeddings]
    assert [len(v) for v in vectors] == [768] * 3 and docs.model == "nomic-embed-text"
    assert docs.prompt_eval_count and docs.total_duration
    for query, wanted in QUERIES:
        q = client.embed(model="nomic-embed-text:latest", input=query)
        assert _rank(list(q.embeddings[0]), vectors) == wanted, query
    assert (
        len(client.embed(model="mxbai-embed-large", input="x", dimensions=32).embeddings[0]) == 32
    )
    legacy = client.embeddings(model="all-minilm", prompt=DOCS[0])
    assert len(legacy.embedding) == 384
    # truncate: true (Ollama's default) cuts a long input; false gets Ollama's 400
    assert client.embed(model="all-minilm", input="word " * 9000).embeddings
    with pytest.raises(ollama.ResponseError) as raised:
        client.embed(model="all-minilm", input="word " * 9000, truncate=False)
    assert raised.value.status_code == 400
    assert raised.value.error == "the input length exceeds the context length"


def test_scenario_faults_on_ollama_and_gemini(
    server: ServerProcess, session: str, mock: Session
) -> None:
    mock.add_scenario(SCENARIO)
    headers = {"x-mockllm-session": session, "x-mockllm-scenario": "embed-rules"}
    client = ollama.Client(host=server.url, headers=headers)
    with pytest.raises(ollama.ResponseError) as raised:
        client.embed(model="nomic-embed-text", input=["rate me"])
    assert raised.value.status_code == 429
    with pytest.raises(ollama.ResponseError, match="exceeds the context length"):
        client.embed(model="nomic-embed-text", input="too long")
    assert len(client.embed(model="nomic-embed-text", input="wrong size").embeddings[0]) == 7
    gemini = _genai(server, session, "embed-rules")
    with pytest.raises(genai_errors.ClientError) as failed:
        gemini.models.embed_content(model="gemini-embedding-001", contents="rate me")
    assert failed.value.code == 429 and failed.value.status == "RESOURCE_EXHAUSTED"
    apis = {e.api for e in mock.requests()}
    assert apis == {"ollama-embeddings", "gemini-embeddings"}


def _bedrock(server: ServerProcess, session: str) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=f"{server.url}/s/embed-rules/{session}",
        region_name="us-east-1",
        aws_access_key_id="k",
        aws_secret_access_key="k",
        config=Config(retries={"max_attempts": 1}),
    )


def _invoke(client: Any, model: str, body: dict[str, Any]) -> Any:
    return json.loads(client.invoke_model(modelId=model, body=json.dumps(body))["body"].read())


def test_bedrock_titan_and_cohere_through_boto3(
    server: ServerProcess, session: str, mock: Session
) -> None:
    mock.add_scenario(SCENARIO)
    client = _bedrock(server, session)
    titan = "amazon.titan-embed-text-v2:0"
    docs = [_invoke(client, titan, {"inputText": d})["embedding"] for d in DOCS]
    assert [len(v) for v in docs] == [1024] * 3
    for query, wanted in QUERIES:
        answer = _invoke(client, titan, {"inputText": query})
        assert answer["embeddingsByType"]["float"] == answer["embedding"]
        assert _rank(answer["embedding"], docs) == wanted
    assert len(_invoke(client, titan, {"inputText": "x", "dimensions": 256})["embedding"]) == 256
    assert (
        len(_invoke(client, "amazon.titan-embed-text-v1", {"inputText": "x"})["embedding"]) == 1536
    )
    cohere = _invoke(
        client, "cohere.embed-english-v3", {"texts": DOCS, "input_type": "search_document"}
    )
    assert cohere["response_type"] == "embeddings_floats" and len(cohere["embeddings"]) == 3
    with pytest.raises(client.exceptions.ValidationException, match="not a valid enum value"):
        _invoke(client, titan, {"inputText": "x", "dimensions": 300})
    with pytest.raises(client.exceptions.ThrottlingException):
        _invoke(client, titan, {"inputText": "rate me"})
    logged = {e.api for e in mock.requests()}
    assert logged == {"bedrock-embeddings"}


def test_a_base_url_with_v1_twice_is_told_how_to_fix_it(server: ServerProcess) -> None:
    client = openai.OpenAI(base_url=f"{server.url}/v1/v1", api_key="k", max_retries=0)
    with pytest.raises(openai.NotFoundError, match="append /embeddings to their base URL"):
        client.embeddings.create(model="text-embedding-3-small", input="x")
