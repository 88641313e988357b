"""Histories real agent frameworks send, which the real APIs accept, reproduced on the wire
with the official SDKs (no framework needed): parallel calls split into one assistant
message per call, a client continuing after a cut stream, and strict function tools."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.support import TOOL_PARAMETERS, ServerProcess

WEATHER_AND_TIME = [
    {"name": n, "description": n, "input_schema": TOOL_PARAMETERS}
    for n in ("get_weather", "get_time")
]
ASK = [{"role": "user", "content": "Weather and time in Paris?"}]
RESULTS = {"get_weather": "18 °C", "get_time": "12:00"}


def verdict_checks(server: ServerProcess, session: str) -> dict[str, str]:
    """Failing checks of the session's verdict: name → message."""
    result = httpx.get(f"{server.url}/_mockllm/verdict", params={"session": session}).json()
    return {c["name"]: c["message"] for c in result["checks"] if not c["ok"]}


def rules_of(entry: dict[str, Any]) -> list[str]:
    return [v["rule"] for v in entry.get("violations") or ()]


# --- 1. parallel calls split across consecutive assistant messages --------------------------


def litellm_split(content: list[Any]) -> list[dict[str, Any]]:
    """What the Agents SDK's LiteLLM model sends back for one Claude reply with several
    tool_use blocks: assistant[text, call A] → user[result A] → assistant[call B] → …"""
    out: list[dict[str, Any]] = []
    text = [{"type": "text", "text": b.text} for b in content if b.type == "text"]
    for i, block in enumerate(b for b in content if b.type == "tool_use"):
        use = {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
        out.append({"role": "assistant", "content": (text if i == 0 else []) + [use]})
        result = {"type": "tool_result", "tool_use_id": block.id, "content": RESULTS[block.name]}
        out.append({"role": "user", "content": [result]})
    return out


@pytest.mark.parametrize("scenario", ["split-parallel", "split-parallel-off"])
def test_anthropic_split_parallel_calls_are_one_reply(
    server: ServerProcess, session: str, scenario: str
) -> None:
    url = f"{server.url}/s/{scenario}/{session}"
    with anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client:
        first = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=256, messages=ASK, tools=WEATHER_AND_TIME
        )
        assert [b.type for b in first.content] == ["text", "tool_use", "tool_use"]
        answer = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=256,
            messages=[*ASK, *litellm_split(first.content)],
            tools=WEATHER_AND_TIME,
        )
    assert answer.content[0].text == "18 °C at noon in Paris."  # turn 1, not turn 2
    entry = server.last(session)
    assert entry["turn"] == 1 and rules_of(entry) == []
    assert verdict_checks(server, session) == {}


def test_chat_split_parallel_calls_are_one_reply(server: ServerProcess, session: str) -> None:
    tools = [
        {"type": "function", "function": {"name": t["name"], "parameters": TOOL_PARAMETERS}}
        for t in WEATHER_AND_TIME
    ]
    with openai.OpenAI(
        base_url=server.openai_url("split-parallel", session), api_key="k"
    ) as client:
        first = client.chat.completions.create(model="gpt-4o", messages=ASK, tools=tools)
        calls = first.choices[0].message.tool_calls or []
        history: list[Any] = [*ASK]
        for i, call in enumerate(calls):
            history.append(
                {
                    "role": "assistant",
                    "content": first.choices[0].message.content if i == 0 else None,
                    "tool_calls": [call.model_dump(exclude_none=True)],
                }
            )
            history.append(
                {"role": "tool", "tool_call_id": call.id, "content": RESULTS[call.function.name]}
            )
        answer = client.chat.completions.create(model="gpt-4o", messages=history, tools=tools)
    assert answer.choices[0].message.content == "18 °C at noon in Paris."
    assert server.last(session)["turn"] == 1


def test_responses_interleaved_calls_and_outputs_are_one_reply(
    server: ServerProcess, session: str
) -> None:
    tools = [
        {"type": "function", "name": t["name"], "parameters": TOOL_PARAMETERS}
        for t in WEATHER_AND_TIME
    ]
    with openai.OpenAI(
        base_url=server.openai_url("split-parallel", session), api_key="k"
    ) as client:
        first = client.responses.create(model="gpt-4o", input=ASK, tools=tools, store=False)
        items: list[Any] = [*ASK]
        for item in first.output:
            items.append(item.model_dump(exclude_none=True))
            if item.type == "function_call":
                output = RESULTS[item.name]
                items.append(
                    {"type": "function_call_output", "call_id": item.call_id, "output": output}
                )
        answer = client.responses.create(model="gpt-4o", input=items, tools=tools, store=False)
    assert answer.output_text == "18 °C at noon in Paris."
    assert server.last(session)["turn"] == 1


def test_a_split_that_drops_a_call_still_diverges(server: ServerProcess, session: str) -> None:
    """The other side: only a true split of the served reply is joined back."""
    url = f"{server.url}/s/split-parallel/{session}"
    with anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client:
        first = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=256, messages=ASK, tools=WEATHER_AND_TIME
        )
        split = litellm_split(first.content)
        split[2]["content"][0]["id"] = "toolu_01mine"  # call B comes back under another id
        split[3]["content"][0]["tool_use_id"] = "toolu_01mine"
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(
                model="claude-sonnet-4-6",
                max_tokens=256,
                messages=[*ASK, *split],
                tools=WEATHER_AND_TIME,
            )
    assert "history diverged" in caught.value.message


# --- 2. continuing after a cut stream -------------------------------------------------------

WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS}}]
PARIS = [{"role": "user", "content": "Weather in Paris?"}]


def cut_client(server: ServerProcess, session: str) -> openai.OpenAI:
    """A client of `stream-cut`, whose first stream breaks inside the call's arguments."""
    return openai.OpenAI(
        base_url=server.openai_url("stream-cut", session), api_key="k", max_retries=0
    )


def half_received_call(client: openai.OpenAI) -> tuple[str, str]:
    """Stream turn 0 of `stream-cut` (cut inside the arguments): the call id and name that
    arrived before the connection broke."""
    got: dict[str, str] = {}
    with pytest.raises(openai.APIConnectionError):
        stream = client.chat.completions.create(
            model="gpt-4o", messages=PARIS, tools=WEATHER, stream=True
        )
        for chunk in stream:
            for call in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
                if call.id:
                    got = {"id": call.id, "name": (call.function and call.function.name) or ""}
    return got["id"], got["name"]


def continue_with(client: openai.OpenAI, call_id: str, name: str, arguments: str) -> str:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    messages = [
        *PARIS,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": "18 °C"},
    ]
    reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=WEATHER)
    return reply.choices[0].message.content or ""


def test_continuing_after_a_cut_stream_is_the_harness_mistake_not_a_400(
    server: ServerProcess, session: str
) -> None:
    """The Vercel AI SDK finalises the half-received call with `{}` and goes on. The real
    API would accept that history; mockllm answers too, and the verdict names the mistake
    (never "expected '{"city":…}'", which this client was never sent)."""
    with cut_client(server, session) as client:
        call_id, name = half_received_call(client)
        assert continue_with(client, call_id, name, "{}") == "It is 18 °C and sunny in Paris."
    entry = server.last(session)
    assert entry["response"]["status"] == 200 and rules_of(entry) == [
        "continued_after_failed_stream"
    ]
    message = verdict_checks(server, session)["failed_streams_retried"]
    assert "cut short (cut inside the arguments of call 0, then reset on attempt 1)" in message
    assert f"get_weather {call_id} with '{{}}'" in message and "expected" not in message


def test_retrying_the_cut_stream_then_continuing_passes(
    server: ServerProcess, session: str
) -> None:
    with cut_client(server, session) as client:
        half_received_call(client)
        retried = client.chat.completions.create(model="gpt-4o", messages=PARIS, tools=WEATHER)
        call = (retried.choices[0].message.tool_calls or [])[0]
        continue_with(client, call.id, call.function.name, call.function.arguments)
    assert rules_of(server.last(session)) == []
    assert "failed_streams_retried" not in verdict_checks(server, session)


def test_a_history_that_was_never_served_still_diverges_after_a_cut(
    server: ServerProcess, session: str
) -> None:
    """The other side: after a cut, a call id the client was never sent is still mangling."""
    with cut_client(server, session) as client:
        _, name = half_received_call(client)
        with pytest.raises(openai.BadRequestError) as caught:
            continue_with(client, "call_invented", name, "{}")
    assert "history diverged" in str(caught.value)


# --- 3. strict function tools ---------------------------------------------------------------

AGENTS_SDK_SCHEMA = {  # every parameter required, optional ones nullable: the Agents SDK way
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": ["string", "null"]}},
    "required": ["city", "unit"],
    "additionalProperties": False,
}


def weather_tool(strict: bool) -> list[Any]:
    function = {"name": "get_weather", "parameters": AGENTS_SDK_SCHEMA, "strict": strict}
    return [{"type": "function", "function": function}]


def strict_round(server: ServerProcess, session: str, scenario: str, strict: bool) -> str:
    """A harness that validates nothing and answers the call: the Agents SDK's happy path."""
    tools = weather_tool(strict)
    with openai.OpenAI(base_url=server.openai_url(scenario, session), api_key="k") as client:
        first = client.chat.completions.create(model="gpt-4o", messages=PARIS, tools=tools)
        call = (first.choices[0].message.tool_calls or [])[0]
        result = {"role": "tool", "tool_call_id": call.id, "content": "18 °C"}
        history = [*PARIS, first.choices[0].message.model_dump(exclude_none=True), result]
        if scenario == "strict-tools":
            client.chat.completions.create(model="gpt-4o", messages=history, tools=tools)
    return call.function.arguments


def test_strict_tools_get_conforming_arguments(server: ServerProcess, session: str) -> None:
    arguments = json.loads(strict_round(server, session, "strict-tools", strict=True))
    assert arguments["city"] == "Paris" and "unit" in arguments
    again = strict_round(server, session + "-again", "strict-tools", strict=True)
    assert json.loads(again) == arguments  # filled deterministically
    assert verdict_checks(server, session) == {}


def test_without_strict_the_script_is_served_as_written(
    server: ServerProcess, session: str
) -> None:
    """The other side: the same script without `strict` breaks the schema, and a harness
    that answers it without an error fails errors_fed_back."""
    assert json.loads(strict_round(server, session, "strict-tools", strict=False)) == {
        "city": "Paris"
    }
    assert "errors_fed_back" in verdict_checks(server, session)


def test_a_scripted_violation_survives_strict(server: ServerProcess, session: str) -> None:
    """A scenario that asks for the violation (generate: missing_required) keeps it."""
    arguments = json.loads(strict_round(server, session, "schema-missing-required", strict=True))
    assert set(AGENTS_SDK_SCHEMA["required"]) - arguments.keys()


def responses_round(server: ServerProcess, session: str, strict: bool | None) -> str:
    """The same harness on Responses, the tool sent as CrewAI sends it (no `strict`) or
    with `strict` said; answered without validating."""
    function: dict[str, Any] = {"type": "function", "name": "get_weather"}
    function["parameters"] = AGENTS_SDK_SCHEMA
    if strict is not None:
        function["strict"] = strict
    url = server.openai_url("strict-tools", session)
    with openai.OpenAI(base_url=url, api_key="k") as client:
        first = client.responses.create(model="gpt-4.1", input="Paris?", tools=[function])
        (call,) = [item for item in first.output if item.type == "function_call"]
        output = {"type": "function_call_output", "call_id": call.call_id, "output": "18 °C"}
        client.responses.create(
            model="gpt-4.1", previous_response_id=first.id, input=[output], tools=[function]
        )
    return call.arguments


def test_responses_tools_are_strict_unless_they_say_not(
    server: ServerProcess, session: str
) -> None:
    """Responses' `strict` defaults to true: a strict-ready schema sent without it gets
    conforming arguments (CrewAI's Responses tools); `strict: false` gets the script."""
    arguments = json.loads(responses_round(server, session, None))
    assert arguments["city"] == "Paris" and "unit" in arguments
    assert verdict_checks(server, session) == {}
    loose = json.loads(responses_round(server, session + "-loose", False))
    assert loose == {"city": "Paris"}
    assert "errors_fed_back" in verdict_checks(server, session + "-loose")
