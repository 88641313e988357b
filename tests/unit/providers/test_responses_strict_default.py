"""Responses' `strict` defaults to true: a tool without it is strict when its schema is one
strict mode takes (openai_responses._strict); whatever the tool, the answer is a bool and an
explicit `strict` wins."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mockllm.providers.openai_responses import _strict

READY = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_a_strict_ready_schema_without_strict_is_strict() -> None:
    assert _strict({"name": "f", "parameters": READY}) is True
    assert _strict({"name": "f", "parameters": READY, "strict": False}) is False


def test_a_schema_strict_mode_would_not_take_is_not() -> None:
    assert _strict({"name": "f", "parameters": {**READY, "required": []}}) is False
    assert _strict({"name": "f", "parameters": {**READY, "additionalProperties": True}}) is False
    assert _strict({"name": "f"}) is False


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(
    st.dictionaries(
        st.sampled_from(["strict", "parameters", "name"]) | st.text(max_size=5), JSON, max_size=4
    )
)
def test_any_tool_gives_a_bool_and_an_explicit_strict_wins(tool: dict[str, Any]) -> None:
    result = _strict(tool)
    assert isinstance(result, bool)
    if tool.get("strict") is not None:
        assert result is (tool["strict"] is True)
