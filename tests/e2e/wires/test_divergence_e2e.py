"""History divergence (docs/validation.md): a client that drops, rewrites or reorders the calls it was
served is told where, in one line — never mistaken for the model misbehaving."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

from tests.support import TOOL_PARAMETERS, ServerProcess
from tests.support.clients import ChatFactory

TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": TOOL_PARAMETERS}}
    for n in ("get_weather", "get_time")
]
USER = {"role": "user", "content": "Weather and time in Paris?"}
Mangle = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def history(assistant: dict[str, Any], mangle: Mangle) -> list[dict[str, Any]]:
    calls = mangle([dict(c) for c in assistant["tool_calls"]])
    return [
        USER,
        {**assistant, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls),
    ]


def rewritten_id(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**calls[0], "id": "call_mine"}, calls[1]]


def changed_arguments(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**calls[0], "function": {**calls[0]["function"], "arguments": '{"city":"Lyon"}'}},
        calls[1],
    ]


KINDS: list[tuple[str, Mangle, str]] = [
    (
        "dropped tool call",
        lambda calls: calls[:1],
        r"tool_calls: expected 2 call\(s\) \(get_weather call_\w+, get_time call_\w+\), got 1 \(get_weather call_\w+\)$",
    ),
    (
        "rewritten id",
        rewritten_id,
        r"tool_calls\[0\]\.id: expected 'call_\w{24}', got 'call_mine'$",
    ),
    (
        "changed arguments",
        changed_arguments,
        r"""tool_calls\[0\]\.arguments: expected '\{"city":"Paris"\}', got '\{"city":"Lyon"\}'$""",
    ),
    (
        "reordered parallel calls",
        lambda calls: calls[::-1],
        r"tool_calls order: expected \['(call_\w+)', '(call_\w+)'\], got \['\2', '\1'\]$",
    ),
]


def first(chat: ChatFactory) -> dict[str, Any]:
    message = (
        chat("rules")
        .chat.completions.create(model="m", messages=[USER], tools=TOOLS)
        .choices[0]
        .message
    )
    return message.model_dump(exclude_none=True)


@pytest.mark.parametrize(("kind", "mangle", "field"), KINDS, ids=[k[0] for k in KINDS])
def test_divergence_names_message_and_field(
    chat: ChatFactory, server: ServerProcess, session: str, kind: str, mangle: Mangle, field: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        chat("rules").chat.completions.create(
            model="m", messages=history(first(chat), mangle), tools=TOOLS
        )
    message = caught.value.body["message"]
    assert caught.value.code == "history_diverged"
    prefix = "mockllm history diverged at messages[1] (the reply of turn 0): "
    assert message.startswith(prefix) and "\n" not in message
    assert re.search(field, message[len(prefix) :]), message
    violations = server.last(session)["violations"]
    assert violations == [{"rule": "history_diverged", "message": message}]


def test_divergence_in_warn_mode_is_served_and_logged(
    warn_server: ServerProcess, session: str
) -> None:
    with openai.OpenAI(base_url=warn_server.openai_url("rules", session), api_key="k") as client:
        assistant = (
            client.chat.completions.create(model="m", messages=[USER], tools=TOOLS)
            .choices[0]
            .message
        )
        reply = client.chat.completions.create(
            model="m",
            messages=history(assistant.model_dump(exclude_none=True), rewritten_id),
            tools=TOOLS,
        )
    assert reply.choices[0].message.content == "done"
    assert warn_server.last(session)["violations"][0]["rule"] == "history_diverged"


def test_reencoded_arguments_are_not_divergence(chat: ChatFactory) -> None:
    """Clients re-serialise JSON (spacing, key order): equal as JSON is the same call."""
    assistant = first(chat)
    spaced = [
        {
            **c,
            "function": {
                **c["function"],
                "arguments": c["function"]["arguments"].replace(":", ": "),
            },
        }
        for c in assistant["tool_calls"]
    ]
    reply = chat("rules").chat.completions.create(
        model="m", messages=history(assistant, lambda _: spaced), tools=TOOLS
    )
    assert reply.choices[0].message.content == "done"


SWITCH = """
name: divergence-switch
turns:
  - reply:
      tool_calls: [{name: set_light, arguments: {on: true, level: 1.0}}]
  - reply: {text: switched}
"""


def test_a_boolean_echoed_as_a_number_is_divergence_and_a_float_as_an_int_is_not(
    chat: ChatFactory, server: ServerProcess
) -> None:
    """Python's `true == 1` must not hide a client that rewrote a boolean; `1.0` written as
    `1` (as JavaScript does) is the same value."""
    posted = httpx.post(
        f"{server.url}/_mockllm/scenarios",
        content=SWITCH,
        headers={"content-type": "application/yaml"},
    )
    assert posted.status_code in (200, 201), posted.text
    tools = [{"type": "function", "function": {"name": "set_light", "parameters": TOOL_PARAMETERS}}]
    user = {"role": "user", "content": "Lights on"}
    client = chat("divergence-switch")
    served = client.chat.completions.create(model="m", messages=[user], tools=tools)
    call = served.choices[0].message.tool_calls[0]
    assert json.loads(call.function.arguments) == {"on": True, "level": 1.0}

    def resend(arguments: str) -> Any:
        assistant = {
            "role": "assistant",
            "tool_calls": [
                {**call.model_dump(), "function": {"name": "set_light", "arguments": arguments}}
            ],
        }
        result = {"role": "tool", "tool_call_id": call.id, "content": "ok"}
        return client.chat.completions.create(
            model="m", messages=[user, assistant, result], tools=tools
        )

    assert resend('{"on": true, "level": 1}').choices[0].message.content == "switched"
    with pytest.raises(openai.BadRequestError) as caught:
        resend('{"on": 1, "level": 1.0}')
    assert caught.value.code == "history_diverged"
    assert "tool_calls[0].arguments: expected" in caught.value.body["message"]
