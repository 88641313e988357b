"""`generate:` arguments and `near_miss` names through a real server: derived from the tool
schema the request sends, checked with jsonschema, deterministic, and on every wire."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import anthropic
import httpx
import jsonschema
import openai
import pytest

from tests.support import ServerProcess
from tests.unit.core.test_generate import SCHEMAS

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city", "unit"],
    "additionalProperties": False,
}
CHAT_TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": SCHEMA}}
    for n in ("get_weather", "get_time")
]
ASK = [{"role": "user", "content": "Weather?"}]
KINDS = [
    "valid",
    "missing_required",
    "wrong_type",
    "enum_violation",
    "extra_property",
    "not_an_object",
    "double_encoded",
]
FAILS_WITH = {
    "missing_required": "required",
    "wrong_type": "type",
    "enum_violation": "enum",
    "extra_property": "additionalProperties",
    "not_an_object": "type",
    "double_encoded": "type",
}


def chat_calls(server: ServerProcess, session: str) -> list[Any]:
    with openai.OpenAI(
        base_url=server.openai_url("generated", session), api_key="k", max_retries=0
    ) as client:
        return list(
            client.chat.completions.create(model="m", messages=ASK, tools=CHAT_TOOLS)
            .choices[0]
            .message.tool_calls
        )


def test_each_kind_really_passes_or_fails_the_schema(server: ServerProcess, session: str) -> None:
    calls = chat_calls(server, session)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for kind, call in zip(KINDS, calls, strict=False):
        value = json.loads(call.function.arguments)
        errors = list(validator.iter_errors(value))
        if kind == "valid":
            assert errors == [] and set(value) == {"city", "unit", "days"}
        else:
            assert FAILS_WITH[kind] in {e.validator for e in errors}, (kind, value)
    assert isinstance(
        json.loads(calls[6].function.arguments), str
    )  # double_encoded: JSON in a string


def test_near_miss_is_a_plausible_name_not_offered(server: ServerProcess, session: str) -> None:
    name = chat_calls(server, session)[7].function.name
    assert name not in ("get_weather", "get_time")
    assert name.lower().replace("_", "").rstrip("s")[:6] in "getweather" or "weath" in name.lower()


def test_generated_calls_are_deterministic_and_logged_with_their_problem(
    server: ServerProcess, session: str
) -> None:
    first = [(c.function.name, c.function.arguments) for c in chat_calls(server, session)]
    again = [
        (c.function.name, c.function.arguments) for c in chat_calls(server, session + "-again")
    ]
    assert first == again
    problems = [c.get("problem") for c in server.last(session)["response"]["tool_calls"]]
    assert problems[0] is None
    assert all(
        p and p.startswith(("arguments break the schema", "arguments are not a JSON object"))
        for p in problems[1:7]
    )
    assert problems[7] == "not offered"


def test_the_same_calls_go_out_verbatim_on_a_streamed_anthropic_reply(
    server: ServerProcess, session: str
) -> None:
    """Streamed, even the non-object kinds go out verbatim as partial_json fragments; the
    SDK's own accumulator is then what rejects a double-encoded one."""
    tools = [{"name": n, "input_schema": SCHEMA} for n in ("get_weather", "get_time")]
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "messages": ASK,
        "tools": tools,
        "stream": True,
    }
    r = httpx.post(f"{server.url}/s/generated/{session}/v1/messages", json=body)
    fragments: dict[int, str] = {}
    for frame in r.text.strip().split("\n\n"):
        data = json.loads(frame.split("\n", 1)[1][6:])
        if data["type"] == "content_block_delta" and data["delta"]["type"] == "input_json_delta":
            fragments[data["index"]] = (
                fragments.get(data["index"], "") + data["delta"]["partial_json"]
            )
    chat = [c.function.arguments for c in chat_calls(server, session + "-chat")]
    assert [fragments[i] for i in sorted(fragments)] == chat
    with (
        anthropic.Anthropic(base_url=f"{server.url}/s/generated/{session}", api_key="k") as client,
        pytest.raises(ValueError, match="Unable to parse tool parameter JSON from model"),
        client.messages.stream(
            model="claude-sonnet-4-6", max_tokens=100, messages=ASK, tools=tools
        ) as stream,
    ):
        stream.get_final_message()


def test_generate_needs_the_tool_in_the_request(server: ServerProcess, session: str) -> None:
    r = httpx.post(
        f"{server.openai_url('generated', session)}/chat/completions",
        json={"model": "m", "messages": ASK},
    )
    assert r.status_code == 400
    assert r.json()["error"]["message"] == (
        "mockllm: scenario 'generated' turn 0 call 0: generate: valid needs the tool 'get_weather' "
        "in the request's tools (offered: none)"
    )


def test_a_schema_that_cannot_produce_the_kind_says_why(
    server: ServerProcess, session: str
) -> None:
    loose = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    r = httpx.post(
        f"{server.openai_url('generated', session)}/chat/completions",
        json={"model": "m", "messages": ASK, "tools": loose},
    )
    assert r.status_code == 400
    message = r.json()["error"]["message"]
    assert message.startswith(
        "mockllm: scenario 'generated' turn 0 call 1: cannot generate missing_required for get_weather"
    )
    assert server.last(session)["response"]["error"]["kind"] == "generate_failed"


@pytest.mark.parametrize("kind", KINDS)
def test_divergence_accepts_the_generated_history(
    server: ServerProcess, session: str, kind: str
) -> None:
    """The second request carries the generated calls back; they must not read as divergence."""
    with openai.OpenAI(
        base_url=server.openai_url("generated", session), api_key="k", max_retries=0
    ) as client:
        message = (
            client.chat.completions.create(model="m", messages=ASK, tools=CHAT_TOOLS)
            .choices[0]
            .message
        )
        results = [
            {"role": "tool", "tool_call_id": c.id, "content": "Error: invalid arguments"}
            for c in message.tool_calls
        ]
        with pytest.raises(openai.BadRequestError, match="has no turn 1"):
            client.chat.completions.create(
                model="m",
                messages=[*ASK, message.model_dump(exclude_none=True), *results],
                tools=CHAT_TOOLS,
            )
    assert [v["rule"] for v in server.last(session)["violations"]] == ["scenario_exhausted"]


def test_generated_arguments_are_identical_across_processes_and_hash_seeds() -> None:
    code = (
        "import json; from mockllm.core.generate import KINDS, generate_arguments as g, near_miss;"
        f"s = json.loads({json.dumps(json.dumps(SCHEMAS))!s});"
        "print([g(k, v, str(i)) for k in KINDS for v in s.values() for i in range(4)],"
        " [near_miss('get_weather', [], str(i)) for i in range(20)])"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for hash_seed in ("1", "2")
    }
    assert len(outputs) == 1 and "getWeather" in outputs.pop()
