"""Histories the real APIs accept, which agent frameworks send (issue 38), reproduced on the
wire with the official SDKs: Responses `item_reference` items, a chained request that sends
the turn's items again, two replies merged into one assistant message, calls carried as
text. Each is accepted and counted as the real API counts it; the other side of each (what
the real API refuses) is refused with its own text."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import openai
import pytest

from mockllm import Client
from tests.support import TOOL_PARAMETERS, ServerProcess

MODEL = "gpt-4.1"
TOOLS: list[Any] = [
    {"type": "function", "name": n, "parameters": TOOL_PARAMETERS}
    for n in ("get_weather", "get_time")
]
ASK = [{"role": "user", "content": "Weather and time in Paris?"}]
RESULTS = {"get_weather": "18 °C", "get_time": "12:00"}
SPLIT: list[Any] = [  # the turns of tests/scenarios/split-parallel.yaml
    {
        "reply": {
            "text": "Checking both.",
            "tool_calls": [
                {"name": "get_weather", "arguments": {"city": "Paris"}},
                {"name": "get_time", "arguments": {"city": "Paris"}},
            ],
        }
    },
    {"reply": {"text": "18 °C at noon in Paris."}},
]


def verdict_checks(server: ServerProcess, session: str) -> dict[str, str]:
    """Failing checks of the session's verdict: name → message."""
    result = httpx.get(f"{server.url}/_mockllm/verdict", params={"session": session}).json()
    return {c["name"]: c["message"] for c in result["checks"] if not c["ok"]}


def rules_of(entry: dict[str, Any]) -> list[str]:
    return [v["rule"] for v in entry.get("violations") or ()]


def outputs(response: Any) -> list[dict[str, Any]]:
    return [
        {"type": "function_call_output", "call_id": i.call_id, "output": RESULTS[i.name]}
        for i in response.output
        if i.type == "function_call"
    ]


# --- 1. Responses item_reference ------------------------------------------------------------


def test_item_references_read_as_the_stored_items(server: ServerProcess, session: str) -> None:
    """AI SDK 5's Responses model (`store` on) sends the served reply back as references."""
    with openai.OpenAI(base_url=server.openai_url("split-parallel", session), api_key="k") as c:
        first = c.responses.create(model=MODEL, input=ASK, tools=TOOLS)
        refs = [{"type": "item_reference", "id": item.id} for item in first.output]
        answer = c.responses.create(model=MODEL, input=[*ASK, *refs, *outputs(first)], tools=TOOLS)
    assert answer.output_text == "18 °C at noon in Paris."
    entry = server.last(session)
    assert entry["turn"] == 1 and rules_of(entry) == []
    assert verdict_checks(server, session) == {}


@pytest.mark.parametrize("store", [True, False])
def test_an_item_reference_nothing_stored_is_the_apis_404(
    server: ServerProcess, session: str, store: bool
) -> None:
    """An id never served, or one served with `store: false`: the API's own text. (A
    scenario of its own: item ids are the scenario's, alike in every session.)"""
    name = Client(server.url).add_scenario({"name": f"unstored-{session}", "turns": SPLIT})
    with openai.OpenAI(base_url=server.openai_url(name, session), api_key="k") as c:
        first = c.responses.create(model=MODEL, input=ASK, tools=TOOLS, store=store)
        ids = [item.id for item in first.output] if not store else ["fc_" + "0" * 50]
        refs = [{"type": "item_reference", "id": i} for i in ids]
        with pytest.raises(openai.NotFoundError) as caught:
            c.responses.create(model=MODEL, input=[*ASK, *refs, *outputs(first)], tools=TOOLS)
    error = caught.value.body
    assert isinstance(error, dict) and error["param"] == "input"
    assert error["message"] == (
        f"Item with id '{ids[0]}' not found. Items are not persisted when `store` is set to "
        "false. Try again with `store` set to true, or remove this item from your input."
    )


# --- 2. two replies merged into one assistant message ---------------------------------------

READ_TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": TOOL_PARAMETERS}}
    for n in ("search", "read_file")
]
FILES = {"search": "notes/paris.md", "read_file": "Louvre on Tuesday"}
TRIP = [{"role": "user", "content": "What did I plan for Paris?"}]


def test_chat_two_replies_merged_into_one_message_are_two_turns(
    server: ServerProcess, session: str
) -> None:
    """Mastra (AI SDK 5 message conversion) sends both steps as one assistant message with
    both calls, then both results: Chat accepts that, so turn 2 is asked for."""
    with openai.OpenAI(base_url=server.openai_url("sequential-calls", session), api_key="k") as c:
        history: list[Any] = [*TRIP]
        calls: list[Any] = []
        for _ in range(2):
            reply = c.chat.completions.create(model=MODEL, messages=history, tools=READ_TOOLS)
            step = reply.choices[0].message.tool_calls or []
            calls += [call.model_dump(exclude_none=True) for call in step]
            history += [{"role": "assistant", "content": None, "tool_calls": step}]
            history += [
                {"role": "tool", "tool_call_id": x.id, "content": FILES[x.function.name]}
                for x in step
            ]
        merged = [
            *TRIP,
            {"role": "assistant", "content": None, "tool_calls": calls},
            *[
                {"role": "tool", "tool_call_id": x["id"], "content": FILES[x["function"]["name"]]}
                for x in calls
            ],
        ]
        answer = c.chat.completions.create(model=MODEL, messages=merged, tools=READ_TOOLS)
    assert (answer.choices[0].message.content or "").startswith("Your notes say")
    entry = server.last(session)
    assert entry["turn"] == 2 and rules_of(entry) == []
    assert verdict_checks(server, session) == {}


def test_messages_two_replies_merged_into_one_message_are_two_turns(
    server: ServerProcess, session: str
) -> None:
    tools = [{"name": n, "input_schema": TOOL_PARAMETERS} for n in ("search", "read_file")]
    url = f"{server.url}/s/sequential-calls/{session}"
    with anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client:
        history: list[Any] = [*TRIP]
        uses: list[Any] = []
        for _ in range(2):
            reply = client.messages.create(
                model="claude-sonnet-4-6", max_tokens=256, messages=history, tools=tools
            )
            content = [b.model_dump(exclude_none=True) for b in reply.content]
            uses += [b for b in content if b["type"] == "tool_use"]
            history += [{"role": "assistant", "content": content}]
            history += [
                {"role": "user", "content": [result(b) for b in content if b["type"] == "tool_use"]}
            ]
        merged = [
            *TRIP,
            {"role": "assistant", "content": uses},
            {"role": "user", "content": [result(b) for b in uses]},
        ]
        answer = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=256, messages=merged, tools=tools
        )
    assert answer.content[0].type == "text" and answer.content[0].text.startswith("Your notes")
    entry = server.last(session)
    assert entry["turn"] == 2 and rules_of(entry) == []


def result(use: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use["id"], "content": FILES[use["name"]]}


def test_calls_of_two_replies_out_of_order_still_diverge(
    server: ServerProcess, session: str
) -> None:
    """The other side: only the served calls, reply after reply, read as merged replies."""
    with openai.OpenAI(
        base_url=server.openai_url("sequential-calls", session), api_key="k", max_retries=0
    ) as c:
        history: list[Any] = [*TRIP]
        calls: list[Any] = []
        for _ in range(2):
            reply = c.chat.completions.create(model=MODEL, messages=history, tools=READ_TOOLS)
            step = reply.choices[0].message.tool_calls or []
            calls += [call.model_dump(exclude_none=True) for call in step]
            history += [{"role": "assistant", "content": None, "tool_calls": step}]
            history += [
                {"role": "tool", "tool_call_id": x.id, "content": FILES[x.function.name]}
                for x in step
            ]
        calls.reverse()
        merged = [
            *TRIP,
            {"role": "assistant", "content": None, "tool_calls": calls},
            *[{"role": "tool", "tool_call_id": x["id"], "content": "x"} for x in calls],
        ]
        with pytest.raises(openai.BadRequestError) as caught:
            c.chat.completions.create(model=MODEL, messages=merged, tools=READ_TOOLS)
    assert "history diverged" in caught.value.message


# --- 4. previous_response_id, and the turn's items sent again -------------------------------


def resent(response: Any, with_id: bool) -> list[dict[str, Any]]:
    """The response's calls as strands and CrewAI send them again: without their `id`."""
    keep = ("type", "call_id", "name", "arguments") + (("id",) if with_id else ())
    return [
        {k: v for k, v in i.model_dump().items() if k in keep}
        for i in response.output
        if i.type == "function_call"
    ]


def test_a_chained_request_that_sends_the_turn_again_is_the_next_turn(
    server: ServerProcess, session: str
) -> None:
    """strands' `OpenAIResponsesModel(stateful=True)` and CrewAI's `auto_chain=True`: the
    API appends the input to the stored conversation and accepts items without an `id`."""
    with openai.OpenAI(base_url=server.openai_url("split-parallel", session), api_key="k") as c:
        first = c.responses.create(model=MODEL, input=ASK, tools=TOOLS)
        again = [*ASK, *resent(first, with_id=False), *outputs(first)]
        answer = c.responses.create(
            model=MODEL, input=again, tools=TOOLS, previous_response_id=first.id
        )
    assert answer.output_text == "18 °C at noon in Paris."
    entry = server.last(session)
    assert entry["turn"] == 1 and rules_of(entry) == []
    assert verdict_checks(server, session) == {}


def test_an_item_sent_again_with_its_id_is_the_apis_duplicate_400(
    server: ServerProcess, session: str
) -> None:
    with openai.OpenAI(
        base_url=server.openai_url("split-parallel", session), api_key="k", max_retries=0
    ) as c:
        first = c.responses.create(model=MODEL, input=ASK, tools=TOOLS)
        again = [*resent(first, with_id=True), *outputs(first)]
        with pytest.raises(openai.BadRequestError) as caught:
            c.responses.create(model=MODEL, input=again, tools=TOOLS, previous_response_id=first.id)
    fc = next(i.id for i in first.output if i.type == "function_call")
    assert caught.value.body == {
        "message": f"Duplicate item found with id {fc}. Remove duplicate items from your input "
        "and try again.",
        "type": "invalid_request_error",
        "param": "input",
        "code": None,
    }


# --- 7. tool search: a result that hands over tools ----------------------------------------


def test_a_tool_search_result_reads_as_the_tools_it_references(
    server: ServerProcess, session: str
) -> None:
    """Claude Code defers MCP tools behind its client-side `ToolSearch`: the search's result
    is `tool_reference` blocks, and the tool found is offered from the next request on
    (`defer_loading` tools are offered all along)."""
    search = {"name": "ToolSearch", "input_schema": TOOL_PARAMETERS}
    found = {"name": "get_weather", "input_schema": TOOL_PARAMETERS, "defer_loading": True}
    turns = [  # the model searches for tools, then, the tool found, calls it
        {"reply": {"tool_calls": [{"name": "ToolSearch", "arguments": {"query": "weather"}}]}},
        {
            "expect": {"tools": ["get_weather"], "tool_results": [{"contains": "get_weather"}]},
            "reply": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        },
    ]
    name = Client(server.url).add_scenario({"name": f"search-{session}", "turns": turns})
    url = f"{server.url}/s/{name}/{session}"
    with anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client:
        first = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=256, messages=PARIS, tools=[search, found]
        )
        use = next(b for b in first.content if b.type == "tool_use")
        reference = {"type": "tool_reference", "tool_name": "get_weather"}
        result = {"type": "tool_result", "tool_use_id": use.id, "content": [reference]}
        history = [
            *PARIS,
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in first.content],
            },
            {"role": "user", "content": [result]},
        ]
        second = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=256,
            messages=history,
            tools=[search, found],
            extra_headers={"anthropic-beta": "advanced-tool-use-2025-11-20"},
        )
    assert [b.name for b in second.content if b.type == "tool_use"] == ["get_weather"]
    entry = server.last(session)
    assert entry["tool_results"][0]["content"] == "tool_reference: get_weather"


PARIS = [{"role": "user", "content": "What's the weather in Paris?"}]
