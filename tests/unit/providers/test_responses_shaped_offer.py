"""A Responses request's tools are parsed once per request shape (`_shaped_offer`): a
request that nothing continues and whose input offers no tools gets the same tools, wire
names and search as its own parse would give; a bad tool list is refused every time."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm.errors import RequestError
from mockllm.providers import openai_responses
from mockllm.providers.openai_responses import Responses

_names = st.sampled_from(["get_weather", "search", "lookup"])
_function = st.fixed_dictionaries(
    {"type": st.just("function"), "name": _names},
    optional={
        "parameters": st.just({"type": "object", "properties": {}}),
        "defer_loading": st.booleans(),
        "strict": st.booleans(),
    },
)
_custom = st.fixed_dictionaries({"type": st.just("custom"), "name": _names})
_namespace = st.fixed_dictionaries(
    {"type": st.just("namespace"), "name": st.just("crm"), "tools": st.lists(_function, max_size=2)}
)
_search = st.fixed_dictionaries(
    {"type": st.just("tool_search")}, optional={"execution": st.just("client")}
)
_tools = st.lists(st.one_of(_function, _custom, _namespace, _search), max_size=4)


def _offered(parsed: object) -> tuple[object, ...]:
    conv, options = parsed.conversation, parsed.options  # type: ignore[attr-defined]
    return conv.tools, conv.deferred, conv.tool_search, options["wire_names"], options["carried"]


@given(_tools, st.sampled_from(["hi", "there"]))
def test_a_shapes_tools_parse_as_the_requests_own(tools: list[object], text: str) -> None:
    body = {"model": "gpt-4.1", "input": text, "tools": tools}
    parsed = Responses().parse(body)
    again = Responses().parse({**body, "input": text + "!"})  # the same shape: remembered
    own = openai_responses._offer(tools, [], [])  # the parse without the memo
    assert _offered(parsed) == _offered(again) == own
    assert parsed.render_key is not None and parsed.id_part is not None


def test_a_bad_tool_list_is_refused_every_time() -> None:
    body = {"model": "gpt-4.1", "input": "hi", "tools": [{"type": "function"}]}
    for _ in range(2):
        with pytest.raises(RequestError, match=r"tools\[0\]\.name"):
            Responses().parse(body)
