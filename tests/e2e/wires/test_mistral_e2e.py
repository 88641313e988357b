"""Mistral (docs/flavours.md#mistral) through real HTTP with its own clients: the `mistralai`
SDK (which posts to `{server_url}/v1/chat/completions`) and LangChain's `ChatMistralAI`
(tests/frameworks/test_azure_mistral_langchain.py);
the OpenAI SDK pointed at the same URL. Mistral's id rule (M1) shows both sides: a harness
that rewrites call ids gets Mistral's 400, one that keeps them passes."""

from __future__ import annotations

import json
import re
from typing import Any

import openai
import pytest
from mistralai.client import Mistral
from mistralai.client.errors import MistralError

from mockllm import Client
from tests.support import ServerProcess

MODEL = "mistral-large-latest"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
ASK = {"role": "user", "content": "Weather in Paris and Lyon?"}
MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")
TEMPERATURES = {"Paris": "18 °C", "Lyon": "21 °C"}


def mistral(server: ServerProcess, session: str, scenario: str = "mistral-tool-ids") -> Mistral:
    url = Client(server.url).url(scenario, session, flavor="mistral")
    return Mistral(api_key="mistral-key-0123456789", server_url=url)


def results(calls: Any, rewrite: bool) -> list[dict[str, Any]]:
    """The tool answers a harness sends back: with the ids as received, or rewritten as
    the harnesses of opencode#1680 and gptel#1203 did (their own `call_` ids)."""
    out = []
    for call in calls:
        city = json.loads(call.function.arguments)["city"]
        ident = "call_" + call.id if rewrite else call.id
        out.append({"role": "tool", "tool_call_id": ident, "content": TEMPERATURES[city]})
    return out


def assistant(message: Any, rewrite: bool) -> dict[str, Any]:
    calls = [
        {
            "id": ("call_" + c.id) if rewrite else c.id,
            "type": "function",
            "function": {"name": c.function.name, "arguments": c.function.arguments},
        }
        for c in message.tool_calls
    ]
    return {"role": "assistant", "content": message.content or "", "tool_calls": calls}


def loop(sdk: Mistral, rewrite: bool) -> str:
    first = sdk.chat.complete(model=MODEL, messages=[ASK], tools=[WEATHER])
    message = first.choices[0].message
    history = [ASK, assistant(message, rewrite), *results(message.tool_calls, rewrite)]
    final = sdk.chat.complete(model=MODEL, messages=history, tools=[WEATHER])
    return str(final.choices[0].message.content)


def test_a_parallel_tool_loop_through_the_mistralai_sdk(
    server: ServerProcess, session: str
) -> None:
    with mistral(server, session) as sdk:
        first = sdk.chat.complete(model=MODEL, messages=[ASK], tools=[WEATHER])
        assert re.fullmatch(r"[0-9a-f]{32}", first.id)
        calls = first.choices[0].message.tool_calls or []
        assert [json.loads(str(c.function.arguments))["city"] for c in calls] == ["Paris", "Lyon"]
        assert all(MISTRAL_ID.fullmatch(str(c.id)) for c in calls)
        assert first.choices[0].message.content == ""  # "" beside calls, never null
    with mistral(server, session + "-loop") as sdk:
        assert loop(sdk, rewrite=False) == "Paris has 18 °C and Lyon 21 °C."
    entries = Client(server.url).session(session + "-loop").requests()
    assert [e.path.rsplit("/s/", 1)[1].split("/", 2)[2] for e in entries] == [
        "v1/chat/completions"
    ] * 2
    assert entries[0].headers["authorization"].startswith("[redacted")


def test_the_id_rule_both_sides_through_the_sdk(server: ServerProcess, session: str) -> None:
    with mistral(server, session) as sdk, pytest.raises(MistralError) as refused:
        loop(sdk, rewrite=True)
    error = json.loads(refused.value.body)
    assert refused.value.status_code == 400
    assert error == {
        "object": "error",
        "message": f"Tool call id was {error['message'].split()[4]} but must be a-z, A-Z, 0-9, "
        "with a length of 9.",
        "type": "invalid_function_call",
        "param": None,
        "code": "3280",
    }
    assert error["message"].split()[4].startswith("call_")
    with mistral(server, session + "-kept") as sdk:
        assert loop(sdk, rewrite=False).startswith("Paris has 18")
    (refusal,) = [e for e in Client(server.url).session(session).requests() if e.violations]
    assert refusal.violations[0].rule == "mistral.tool_call_id_format"


def test_streamed_calls_arrive_whole(server: ServerProcess, session: str) -> None:
    with mistral(server, session) as sdk:
        events = list(sdk.chat.stream(model=MODEL, messages=[ASK], tools=[WEATHER]))
    with_calls = [e.data for e in events if e.data.choices and e.data.choices[0].delta.tool_calls]
    pieces = [c for chunk in with_calls for c in chunk.choices[0].delta.tool_calls or []]
    assert [json.loads(str(c.function.arguments)) for c in pieces] == [
        {"city": "Paris"},
        {"city": "Lyon"},
    ]  # one piece per call, its arguments whole: nothing to join
    assert all(MISTRAL_ID.fullmatch(str(c.id)) for c in pieces)
    last = events[-1].data
    assert last.choices[0].finish_reason == "tool_calls" and last.usage.total_tokens > 0


def test_a_rate_limit_arrives_in_mistrals_envelope(server: ServerProcess, session: str) -> None:
    with mistral(server, session, "rate-limited") as sdk, pytest.raises(MistralError) as limited:
        sdk.chat.complete(model=MODEL, messages=[ASK], tools=[WEATHER])
    assert limited.value.status_code == 429
    assert json.loads(limited.value.body) == {
        "object": "error",
        "message": "Rate limit exceeded",
        "type": "rate_limited",
        "param": None,
        "code": "1300",
    }


def test_the_openai_sdk_on_the_same_url(server: ServerProcess, session: str) -> None:
    url = Client(server.url).url("mistral-tool-ids", session, flavor="mistral")
    with openai.OpenAI(base_url=url, api_key="k", max_retries=0) as sdk:
        first = sdk.chat.completions.create(model=MODEL, messages=[ASK], tools=[WEATHER])
    calls = first.choices[0].message.tool_calls or []
    assert [MISTRAL_ID.fullmatch(c.id) is not None for c in calls] == [True, True]
    assert first.system_fingerprint is None and first.usage is not None
