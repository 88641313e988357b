"""Tool search (issue 38, 7; docs/scenarios.md, "Tool search") on the wire with the official
SDKs, streamed and not: a reply's `search_tools: QUERY` renders the provider's own search
(Anthropic's server-side `tool_search_tool_regex`, Claude Code's client-side `ToolSearch`,
Responses' hosted `tool_search` and a client `tool_search` as Codex offers it); deferred
tools (`defer_loading: true`) are offered once a search in the history found them, not
before; the history carrying the search is accepted; and a search where the request
offers none is refused, never served."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from mockllm import Client
from tests.support import TOOL_PARAMETERS, ServerProcess

BETA = "advanced-tool-use-2025-11-20"
ASK = [{"role": "user", "content": "What's the weather in Paris?"}]
CLAUDE = "claude-sonnet-4-6"
WEATHER = {"city": "Paris"}


def deferred(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "input_schema": TOOL_PARAMETERS,
        "defer_loading": True,
    }


ANTHROPIC_TOOLS: list[Any] = [
    {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
    deferred("get_weather", "Current weather of a city"),
    deferred("get_time", "Local time of a city"),
]


def add(server: ServerProcess, session: str, turns: list[Any]) -> str:
    name = Client(server.url).add_scenario({"name": f"search-{session}", "turns": turns})
    return f"{server.url}/s/{name}/{session}"


SEARCH_THEN_CALL = [
    {
        "expect": {"tools": ["tool_search_tool_regex"]},
        "reply": {
            "search_tools": "weather",
            "tool_calls": [{"name": "get_weather", "arguments": WEATHER}],
        },
    },
    {
        # the tool found is offered from then on; the other deferred one still is not
        "expect": {"tools": ["get_weather"], "tool_results": [{"contains": "18"}]},
        "reply": {"text": "18 °C in Paris."},
    },
]


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_anthropic_server_side_search(server: ServerProcess, session: str, stream: bool) -> None:
    url = add(server, session, SEARCH_THEN_CALL)
    with anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client:
        ask: dict[str, Any] = {"model": CLAUDE, "max_tokens": 256, "betas": [BETA]}
        first: Any
        if stream:
            with client.beta.messages.stream(messages=ASK, tools=ANTHROPIC_TOOLS, **ask) as events:
                first = events.get_final_message()
        else:
            first = client.beta.messages.create(messages=ASK, tools=ANTHROPIC_TOOLS, **ask)
        assert [b.type for b in first.content] == [
            "server_tool_use",
            "tool_search_tool_result",
            "tool_use",
        ]
        use, found, call = first.content
        assert use.name == "tool_search_tool_regex" and use.input == {"pattern": "weather"}
        assert found.tool_use_id == use.id
        assert [r.tool_name for r in found.content.tool_references] == ["get_weather"]
        assert call.name == "get_weather" and call.input == WEATHER
        assert first.stop_reason == "tool_use"
        history = [
            *ASK,
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in first.content],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "18 °C"}],
            },
        ]
        second = client.beta.messages.create(messages=history, tools=ANTHROPIC_TOOLS, **ask)
    assert second.content[0].text == "18 °C in Paris."
    entry = server.last(session)
    assert "get_weather" in entry["tools"] and "get_time" not in entry["tools"]


def test_a_deferred_tool_is_not_offered_before_a_search(
    server: ServerProcess, session: str
) -> None:
    """The other side: a scenario that expects the deferred tool before any search fails
    its expectation (as Claude Code's MCP tools are absent until its ToolSearch ran)."""
    turns = [{"expect": {"tools": ["get_weather"]}, "reply": {"text": "hi"}}]
    url = add(server, session, turns)
    with (
        anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client,
        pytest.raises(anthropic.BadRequestError) as caught,
    ):
        client.beta.messages.create(
            model=CLAUDE, max_tokens=64, messages=ASK, tools=ANTHROPIC_TOOLS, betas=[BETA]
        )
    assert "get_weather" in str(caught.value)


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_anthropic_client_side_search(server: ServerProcess, session: str, stream: bool) -> None:
    """Claude Code's own `ToolSearch`: the search is a call of it, which the client answers
    with `tool_reference` blocks."""
    tools: list[Any] = [
        {"name": "ToolSearch", "input_schema": TOOL_PARAMETERS},
        deferred("mcp__orders__lookup_order", "Look an order up"),
    ]
    turns = [
        {"reply": {"search_tools": "select:mcp__orders__lookup_order"}},
        {
            "expect": {"tools": ["mcp__orders__lookup_order"]},
            "reply": {"tool_calls": [{"name": "mcp__orders__lookup_order", "arguments": {}}]},
        },
    ]
    url = add(server, session, turns)
    with anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client:
        ask: dict[str, Any] = {"model": CLAUDE, "max_tokens": 256, "tools": tools}
        first: Any
        if stream:
            with client.messages.stream(messages=ASK, **ask) as events:
                first = events.get_final_message()
        else:
            first = client.messages.create(messages=ASK, **ask)
        (use,) = first.content
        assert use.type == "tool_use" and use.name == "ToolSearch"
        assert use.input == {"query": "select:mcp__orders__lookup_order"}
        reference = {"type": "tool_reference", "tool_name": "mcp__orders__lookup_order"}
        history = [
            *ASK,
            {"role": "assistant", "content": [use.model_dump(exclude_none=True)]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use.id, "content": [reference]}],
            },
        ]
        second = client.messages.create(messages=history, **ask)
    assert [b.name for b in second.content if b.type == "tool_use"] == ["mcp__orders__lookup_order"]


def test_a_search_where_none_is_offered_is_refused(server: ServerProcess, session: str) -> None:
    url = add(server, session, [{"reply": {"search_tools": "weather"}}])
    tools = [{"name": "get_weather", "input_schema": TOOL_PARAMETERS}]
    with (
        anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client,
        pytest.raises(anthropic.BadRequestError) as caught,
    ):
        client.messages.create(model=CLAUDE, max_tokens=64, messages=ASK, tools=tools)
    assert "offers no tool search" in str(caught.value)
    assert server.last(session)["response"]["status"] == 400  # logged all the same


# --- Responses -------------------------------------------------------------------------------

CODEX_SEARCH = {  # as Codex 0.171 offers it to gpt-5.5 (tests/agent_clis captures)
    "type": "tool_search",
    "execution": "client",
    "description": "Searches over deferred tool metadata",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "number"}},
        "required": ["query"],
    },
}
LOOKUP = {
    "type": "function",
    "name": "lookup_order",
    "description": "Look an order up by its id",
    "parameters": TOOL_PARAMETERS,
}
ORDERS = {"type": "namespace", "name": "mcp__orders", "description": "orders", "tools": [LOOKUP]}


def final(client: openai.OpenAI, stream: bool, **ask: Any) -> Any:
    if not stream:
        return client.responses.create(**ask)
    with client.responses.stream(**ask) as events:
        return events.get_final_response()


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_responses_client_search(server: ServerProcess, session: str, stream: bool) -> None:
    """A `tool_search` with `execution: client` (Codex): the search is a
    `tool_search_call`; the client's `tool_search_output` loads the namespace, whose tool
    the model then calls."""
    turns = [
        {"reply": {"search_tools": "orders"}},
        {
            "expect": {
                "tools": ["mcp__orders__lookup_order"],
                "tool_results": [{"contains": "lookup_order"}],
            },
            "reply": {
                "tool_calls": [{"name": "mcp__orders__lookup_order", "arguments": {"city": "A1"}}]
            },
        },
    ]
    url = add(server, session, turns)
    ask = [{"role": "user", "content": "Where is order A1?"}]
    with openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0) as client:
        first = final(client, stream, model="gpt-5.5", input=ask, tools=[CODEX_SEARCH])
        (search,) = first.output
        assert search.type == "tool_search_call" and search.execution == "client"
        assert search.arguments == {"query": "orders"}
        loaded = {
            "type": "tool_search_output",
            "call_id": search.call_id,
            "execution": "client",
            "status": "completed",
            "tools": [ORDERS],
        }
        again = [*ask, search.model_dump(exclude_none=True), loaded]
        second = final(client, stream, model="gpt-5.5", input=again, tools=[CODEX_SEARCH])
    (call,) = second.output
    assert call.type == "function_call" and call.name == "lookup_order"
    assert call.namespace == "mcp__orders"


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_responses_hosted_search(server: ServerProcess, session: str, stream: bool) -> None:
    """The hosted `tool_search` (run by the API): mockllm answers it from the deferred
    tools, and the model calls the tool found in the same response."""
    turns = [
        {
            "reply": {
                "search_tools": "weather",
                "tool_calls": [{"name": "get_weather", "arguments": WEATHER}],
            }
        },
        {"expect": {"tools": ["get_weather"]}, "reply": {"text": "18 °C"}},
    ]
    url = add(server, session, turns)
    tools: list[Any] = [
        {"type": "tool_search"},
        {**LOOKUP, "name": "get_weather", "description": "Weather", "defer_loading": True},
        {**LOOKUP, "name": "get_time", "description": "Time", "defer_loading": True},
    ]
    with openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0) as client:
        first = final(client, stream, model="gpt-5.5", input="Weather in Paris?", tools=tools)
        search, output, call = first.output
        assert (search.type, search.execution, search.arguments) == (
            "tool_search_call",
            "server",
            {"query": "weather"},
        )
        assert output.type == "tool_search_output"
        assert [t.name for t in output.tools] == ["get_weather"]
        assert call.type == "function_call" and call.name == "get_weather"
        again = [
            {"role": "user", "content": "Weather in Paris?"},
            *(i.model_dump(exclude_none=True) for i in first.output),
            {"type": "function_call_output", "call_id": call.call_id, "output": "18"},
        ]
        second = final(client, stream, model="gpt-5.5", input=again, tools=tools)
    assert second.output_text == "18 °C"
    assert "get_time" not in server.last(session)["tools"]


def test_a_loaded_tool_stays_offered_after_previous_response_id(
    server: ServerProcess, session: str
) -> None:
    """Codex continues each response by `previous_response_id` with only the new items: the
    namespace its tool_search_output loaded is still offered two requests later (it was
    not, and the call of turn 1 was then judged against a tool no longer offered)."""
    turns = [
        {"reply": {"search_tools": "orders"}},
        {"reply": {"tool_calls": [{"name": "mcp__orders__lookup_order", "arguments": {}}]}},
        {"expect": {"tools": ["mcp__orders__lookup_order"]}, "reply": {"text": "shipped"}},
    ]
    url = add(server, session, turns)
    with openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0) as client:
        ask: dict[str, Any] = {"model": "gpt-5.5", "tools": [CODEX_SEARCH]}
        first = client.responses.create(input="Where is order A1?", **ask)
        (search,) = first.output
        loaded = {
            "type": "tool_search_output",
            "call_id": search.call_id,
            "execution": "client",
            "tools": [ORDERS],
        }
        second = client.responses.create(input=[loaded], previous_response_id=first.id, **ask)
        (call,) = second.output
        assert (call.namespace, call.name) == ("mcp__orders", "lookup_order")
        output = {"type": "function_call_output", "call_id": call.call_id, "output": "shipped"}
        third = client.responses.create(input=[output], previous_response_id=second.id, **ask)
    assert third.output_text == "shipped"
