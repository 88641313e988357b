"""Gemini's tool lists are parsed once per list (`_tools`, keyed by the list's JSON): the
same tools as a parse of its own, either spelling of the fields; a bad list is refused
every time; a list orjson cannot write (a number past 64 bits) is parsed without it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm.errors import RequestError
from mockllm.providers import gemini

_schema = st.sampled_from([{"type": "object"}, {"type": "OBJECT", "nullable": True}])
_declaration = st.fixed_dictionaries(
    {"name": st.sampled_from(["get_weather", "search"])},
    optional={
        "parametersJsonSchema": _schema,
        "parameters": _schema,
        "parameters_json_schema": _schema,
    },
)
_tool: st.SearchStrategy[dict[str, object]] = st.one_of(
    st.fixed_dictionaries({"functionDeclarations": st.lists(_declaration, max_size=2)}),
    st.fixed_dictionaries({"function_declarations": st.lists(_declaration, max_size=2)}),
    st.just({"googleSearch": {}}),
)


@given(st.lists(_tool, max_size=3))
def test_a_tool_list_parses_as_its_own_parse(tools: list[object]) -> None:
    own = gemini._declared(tools)
    assert gemini._tools(tools) == gemini._tools(list(tools)) == own


def test_a_bad_list_is_refused_every_time_and_a_huge_number_is_parsed() -> None:
    bad = [{"functionDeclarations": [{"description": "no name"}]}]
    for _ in range(2):
        with pytest.raises(RequestError, match="Name cannot be empty"):
            gemini._tools(bad)
    huge = [{"functionDeclarations": [{"name": "f", "parametersJsonSchema": {"maximum": 2**70}}]}]
    assert gemini._tools(huge)[0].parameters == {"maximum": 2**70}
