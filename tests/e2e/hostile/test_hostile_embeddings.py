"""The embeddings routes (serving/embedding_routes.py) over real HTTP under hostile bodies
and hostile sizes: never a 5xx, always the provider's error shape, the request logged and
readable, the server still serving (in-process: tests/unit/serving/test_embedding_routes.py)."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import ServerProcess

ROUTES = {
    "openai": "v1/embeddings",
    "gemini": "v1beta/models/gemini-embedding-001:batchEmbedContents",
    "ollama": "api/embed",
}
INPUT = st.one_of(
    st.text(max_size=30),
    st.lists(st.text(max_size=8), max_size=5),
    st.lists(st.integers(min_value=-(2**80), max_value=2**80), max_size=5),
    st.lists(st.lists(st.integers(min_value=-(2**80), max_value=2**80), max_size=3), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
BODIES = st.fixed_dictionaries(
    {"model": st.sampled_from(["text-embedding-3-small", "nomic-embed-text", ""]), "input": INPUT,
     "requests": st.lists(st.fixed_dictionaries({"content": st.fixed_dictionaries(
         {"parts": st.lists(st.fixed_dictionaries({"text": st.text(max_size=8)}), max_size=2)})}),
         max_size=3)},
    optional={"dimensions": st.integers(min_value=-5, max_value=5000) | st.text(max_size=3),
              "encoding_format": st.sampled_from(["float", "base64", "bits"])},
)  # fmt: skip


def _error_shaped(api: str, answer: Any) -> bool:
    error = answer["error"]
    if api == "ollama":
        return isinstance(error, str)
    if api == "gemini":
        return isinstance(error["message"], str) and isinstance(error["code"], int)
    return isinstance(error["message"], str) and "param" in error


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(api=st.sampled_from(sorted(ROUTES)), body=BODIES | st.binary(max_size=80))
def test_hostile_embedding_bodies_never_fail_the_server(
    server: ServerProcess, session: str, api: str, body: dict[str, Any] | bytes
) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"content-type": "application/json", "x-mockllm-session": session}
    r = httpx.post(f"{server.url}/{ROUTES[api]}", content=raw, headers=headers)
    assert r.status_code < 500, r.text
    assert r.status_code == 200 or _error_shaped(api, r.json()), r.text
    logged = server.http.get("/_mockllm/requests", params={"session": session}).json()
    assert logged[-1]["side"]["name"] == "embeddings" and logged[-1]["turn"] is None
    assert server.http.get("/_mockllm/health").status_code == 200


def test_thousands_of_inputs_and_huge_ids_are_bounded(server: ServerProcess) -> None:
    url = f"{server.url}/v1/embeddings"
    many = httpx.post(url, json={"model": "text-embedding-3-small", "input": ["x"] * 2049})
    assert many.status_code == 400 and "2048 or less" in many.json()["error"]["message"]
    huge = httpx.post(url, json={"model": "text-embedding-3-small", "input": [[10**400]]})
    assert huge.status_code == 400
    # 2048 inputs of 1536: the most one request carries, answered whole
    most = httpx.post(
        url,
        json={
            "model": "text-embedding-3-small",
            "input": ["x"] * 2048,
            "encoding_format": "base64",
        },
        timeout=60,
    )
    assert most.status_code == 200 and len(most.json()["data"]) == 2048
    assert httpx.get(f"{server.url}/_mockllm/health").status_code == 200
