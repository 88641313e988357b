"""The token-counting routes agent CLIs call beside their turns (serving/side_routes.py),
under hostile bodies: never a 5xx, always the provider's error shape, the server serving."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import ServerProcess

ROUTES = {
    "anthropic": "v1/messages/count_tokens",
    "gemini": "v1beta/models/gemini-2.5-flash:countTokens",
    "vertex-gemini": "v1beta1/projects/p/locations/l/publishers/google/models/m:countTokens",
    "vertex-anthropic": "v1/projects/p/locations/l/publishers/anthropic/models/count-tokens:rawPredict",
}
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
MESSAGES = st.fixed_dictionaries(
    {"model": st.text(max_size=8), "messages": JSON, "system": JSON},
    optional={"anthropic_version": st.text(max_size=12)},
) | st.fixed_dictionaries({"contents": JSON})
BODIES = (
    st.binary(max_size=200)
    | JSON.map(lambda v: json.dumps(v).encode())
    | MESSAGES.map(lambda v: json.dumps(v).encode())
)


def _error_shaped(api: str, body: Any) -> bool:
    if api.endswith("anthropic"):
        return body["type"] == "error" and isinstance(body["error"]["message"], str)
    return isinstance(body["error"]["message"], str) and isinstance(body["error"]["code"], int)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(api=st.sampled_from(sorted(ROUTES)), body=BODIES)
def test_hostile_count_tokens_bodies_never_fail_the_server(
    server: ServerProcess, api: str, body: bytes
) -> None:
    r = httpx.post(
        f"{server.url}/{ROUTES[api]}",
        content=body,
        headers={"content-type": "application/json", "anthropic-version": "2023-06-01"},
    )
    assert r.status_code < 500, r.text
    answer = r.json()
    if r.status_code == 200:
        tokens = answer["input_tokens"] if api.endswith("anthropic") else answer["totalTokens"]
        assert isinstance(tokens, int) and tokens >= 0
    else:
        assert _error_shaped(api, answer), answer
    assert server.http.get("/_mockllm/health").status_code == 200
