"""Replies no model could give (core/possible.py, docs/validation.md), on every wire through
its official SDK: a request that turns parallel calls off, says `tool_choice` none, forces
one tool, or requires a call, against a scripted reply outside those bounds, is refused in
strict mode with mockllm's own 400 (kind `impossible_reply`, in the wire's error shape), and
answered when the reply is within them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors, types

from tests.support import TOOL_PARAMETERS, ServerProcess

NAMES = ("get_weather", "get_time")
ASK = [{"role": "user", "content": "Weather and time in Paris?"}]
# A bound, and what the message says of it: split-parallel's turn 0 has two calls,
# get_weather then get_time; hello's only turn is text.
CASES = {
    "parallel off": ("split-parallel", "2 calls in one reply, but the request turns parallel"),
    "none": ("split-parallel", "but the request says tool_choice none"),
    "forced": ("split-parallel", "but the request forces the tool 'get_time'"),
    "required": ("hello", "scripts no call, but the request requires one"),
}


CHAT_BOUNDS: dict[str, dict[str, Any]] = {
    "parallel off": {"parallel_tool_calls": False},
    "none": {"tool_choice": "none"},
    "forced": {"tool_choice": {"type": "function", "function": {"name": "get_time"}}},
    "required": {"tool_choice": "required"},
}
RESPONSES_BOUNDS: dict[str, dict[str, Any]] = {
    **CHAT_BOUNDS,
    "forced": {"tool_choice": {"type": "function", "name": "get_time"}},
}


def chat(url: str, case: str) -> Any:
    tools = [
        {"type": "function", "function": {"name": n, "parameters": TOOL_PARAMETERS}} for n in NAMES
    ]
    extra: dict[str, Any] = CHAT_BOUNDS[case]
    with openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0) as c:
        return c.chat.completions.create(model="gpt-4.1", messages=ASK, tools=tools, **extra)


def responses(url: str, case: str) -> Any:
    tools = [{"type": "function", "name": n, "parameters": TOOL_PARAMETERS} for n in NAMES]
    extra: dict[str, Any] = RESPONSES_BOUNDS[case]
    with openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0) as c:
        return c.responses.create(model="gpt-4.1", input=ASK, tools=tools, **extra)


def messages(url: str, case: str) -> Any:
    tools = [{"name": n, "input_schema": TOOL_PARAMETERS} for n in NAMES]
    choice = {
        "parallel off": {"type": "auto", "disable_parallel_tool_use": True},
        "none": {"type": "none"},
        "forced": {"type": "tool", "name": "get_time"},
        "required": {"type": "any"},
    }[case]
    with anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as c:
        return c.messages.create(
            model="claude-sonnet-4-6", max_tokens=256, messages=ASK, tools=tools, tool_choice=choice
        )


def gemini(url: str, case: str) -> Any:
    declarations = [
        types.FunctionDeclaration(name=n, parameters_json_schema=TOOL_PARAMETERS) for n in NAMES
    ]
    calling = {
        "none": types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode.NONE),
        "forced": types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=["get_time"]
        ),
        "required": types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode.ANY),
    }[case]
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=declarations)],
        tool_config=types.ToolConfig(function_calling_config=calling),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    with genai.Client(api_key="k", http_options={"base_url": url}) as c:
        return c.models.generate_content(model="gemini-2.5-flash", contents="?", config=config)


WIRES: dict[str, Callable[[str, str], Any]] = {
    "chat": chat,
    "responses": responses,
    "messages": messages,
    "gemini": gemini,
}
REFUSALS = (openai.BadRequestError, anthropic.BadRequestError, errors.ClientError)
# Gemini has no switch for parallel calls.
PAIRS = [(w, c) for w in WIRES for c in CASES if (w, c) != ("gemini", "parallel off")]


@pytest.mark.parametrize(("wire", "case"), PAIRS)
def test_a_reply_no_model_could_give_is_refused(
    server: ServerProcess, session: str, wire: str, case: str
) -> None:
    scenario, why = CASES[case]
    with pytest.raises(REFUSALS) as caught:
        WIRES[wire](f"{server.url}/s/{scenario}/{session}", case)
    assert why in str(caught.value) and "no model could answer so" in str(caught.value)
    entry = server.last(session)
    assert entry["response"]["status"] == 400
    assert entry["response"]["error"]["kind"] == "impossible_reply"


WITHIN = {  # the same bounds, met: one call, text, a call (a forced tool met: forced.yaml)
    "parallel off": "weather-single",
    "none": "hello",
    "required": "weather-single",
}


@pytest.mark.parametrize(("wire", "case"), [(w, c) for w, c in PAIRS if c in WITHIN])
def test_a_reply_within_the_bounds_is_served(
    server: ServerProcess, session: str, wire: str, case: str
) -> None:
    WIRES[wire](f"{server.url}/s/{WITHIN[case]}/{session}", case)
    entry = server.last(session)
    assert entry["response"]["status"] == 200 and not entry.get("violations")
