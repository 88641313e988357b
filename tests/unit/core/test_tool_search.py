"""Tool search made concrete (mockllm/core/tool_search.py): what a server-side search finds
among the deferred tools, and a reply's `search_tools` as each kind of search renders it."""

from __future__ import annotations

import pytest

from mockllm.core.conversation import Conversation, Message, Tool, ToolSearch
from mockllm.core.scenario import Reply, Scenario, ScriptedCall
from mockllm.core.tool_search import MOST_FOUND, find, searched
from mockllm.errors import RequestError

TOOLS = (
    Tool("get_weather", description="Current weather of a city"),
    Tool("get_time", description="Local time of a city"),
    Tool("mcp__orders__lookup_order", description="Look an order up by its id"),
)
SCENARIO = Scenario(name="s", turns=())


def conv(search: ToolSearch | None, tools: tuple[Tool, ...] = ()) -> Conversation:
    return Conversation("m", (Message("user", "hi"),), tools, tool_search=search, deferred=TOOLS)


def test_a_regex_searches_names_and_descriptions() -> None:
    assert find("weather", TOOLS, regex=True) == ("get_weather",)
    assert find("(?i)CITY", TOOLS, regex=True) == ("get_weather", "get_time")
    assert find("get_(weather|time)", TOOLS, regex=True) == ("get_weather", "get_time")
    assert find("(", TOOLS, regex=True) == ()  # does not compile: read as plain text


def test_words_rank_by_how_many_a_tool_holds() -> None:
    assert find("order lookup", TOOLS) == ("mcp__orders__lookup_order",)
    assert find("time of a city", TOOLS)[0] == "get_time"
    assert find("nothing here", TOOLS) == ()
    assert find("select:get_time,get_weather", TOOLS) == ("get_weather", "get_time")
    many = tuple(Tool(f"t{i}", description="same") for i in range(9))
    assert len(find("same", many)) == MOST_FOUND


def test_a_client_search_is_a_call_of_its_tool_put_first() -> None:
    reply = Reply(search="weather", tool_calls=(ScriptedCall("x", "{}"),))
    made = searched(SCENARIO, 0, reply, conv(ToolSearch("client", "ToolSearch")))
    assert [(c.name, c.arguments) for c in made.tool_calls] == [
        ("ToolSearch", '{"query":"weather"}'),
        ("x", "{}"),
    ]
    assert made.search is None and made.finish == "tool_calls"


def test_a_plain_tool_named_as_a_search_is_one_on_any_wire() -> None:
    made = searched(SCENARIO, 0, Reply(search="w"), conv(None, (Tool("tool_search"),)))
    assert [c.name for c in made.tool_calls] == ["tool_search"]


def test_a_server_search_keeps_what_it_found() -> None:
    made = searched(
        SCENARIO, 0, Reply(search="weather"), conv(ToolSearch("server", "s", "pattern"))
    )
    assert made.search == "weather" and made.found == ("get_weather",) and not made.tool_calls


def test_no_search_offered_is_refused() -> None:
    with pytest.raises(RequestError) as caught:
        searched(SCENARIO, 2, Reply(search="weather"), conv(None))
    assert caught.value.status == 400 and caught.value.kind == "unrepresentable_reply"
    assert "turn 2" in str(caught.value) and "offers no tool search" in str(caught.value)
