"""Anthropic's tool lists are parsed once per list (`_tools`, keyed by the list's JSON):
the same tools, deferred tools and search as a parse of its own; a deferred tool still
follows the history; a bad list is refused every time; a list orjson cannot write (a
number past 64 bits) is parsed without the memo."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm.errors import RequestError
from mockllm.providers import anthropic

_names = st.sampled_from(["get_weather", "search", "tool_search_tool_regex"])
_tool = st.fixed_dictionaries(
    {"name": _names},
    optional={
        "input_schema": st.just({"type": "object", "properties": {}}),
        "strict": st.booleans(),
        "description": st.sampled_from(["", "Weather."]),
        "type": st.sampled_from(["custom", "tool_search_tool_regex_20251119"]),
    },
)


@given(st.lists(_tool, max_size=3))
def test_a_tool_list_parses_as_its_own_parse(tools: list[object]) -> None:
    own, _ = anthropic._tools_of(tools, [])
    assert anthropic._tools(tools, []) == anthropic._tools(list(tools), []) == own


def test_a_deferred_tool_follows_the_history_not_the_memo() -> None:
    tools = [{"name": "crm_find", "defer_loading": True}]
    assert anthropic._tools(tools, [])[1][0].name == "crm_find"  # deferred: not found yet
    reference = {"type": "tool_reference", "tool_name": "crm_find"}
    found = [
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "content": [reference]}],
        }
    ]
    assert anthropic._tools(tools, found)[0][0].name == "crm_find"  # handed over: offered


def test_a_bad_list_is_refused_every_time_and_a_huge_number_is_parsed() -> None:
    for _ in range(2):
        with pytest.raises(RequestError, match=r"tools\.0\.name"):
            anthropic._tools([{"input_schema": {}}], [])
    huge = [{"name": "f", "input_schema": {"maximum": 2**70}}]
    assert anthropic._tools(huge, [])[0][0].parameters == {"maximum": 2**70}
