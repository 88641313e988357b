"""Hostile JSON-RPC messages for the MCP routes' property tests: the stdio and HTTP ones
(tests/e2e/mcp/test_mcp_hostile.py) and the direct path's (tests/unit/serving/
test_mcp_direct.py). Here, not in a test module: the unit tier runs on every Python
version without the provider SDKs the e2e modules import."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.support.hypothesis_profiles import examples

FUZZ = settings(
    max_examples=examples(50),
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
METHODS = [
    "initialize",
    "tools/list",
    "tools/call",
    "resources/read",
    "prompts/get",
    "ping",
    "notifications/initialized",
    "nope/nope",
    "",
]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def messages(draw: Any) -> bytes:
    """A JSON-RPC message bent out of shape, or bytes that are no JSON at all."""
    shape = draw(st.sampled_from(["message", "garbage", "json"]))
    if shape == "garbage":
        garbage: bytes = draw(st.binary(max_size=200))
        return garbage
    if shape == "json":
        return json.dumps(draw(JSON)).encode()
    message: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "1.0", 2]))}
    message["method"] = draw(st.sampled_from(METHODS) | st.text(max_size=10))
    if draw(st.booleans()):
        message["id"] = draw(
            st.integers() | st.text(max_size=5) | st.none() | st.floats(allow_nan=False)
        )
    if draw(st.booleans()):
        message["params"] = draw(
            st.fixed_dictionaries(
                {"name": st.sampled_from(["lookup_order", "x", ""]) | JSON, "arguments": JSON}
            )
            | JSON
        )
    return json.dumps(message).encode()
