"""`errors_fed_back` reads the same error text the same way on every wire (docs/verdict.md):
the model calls `delete_everything`, which no request offered; a harness that answers
`Tool not found: delete_everything` passes on Chat, Responses, Messages (with Anthropic's
`is_error: true`, the flag that wire has) and Gemini (no flag: the text, or an `"error"`
key), and one that answers as if the tool ran fails, through each official SDK against a
real server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import pytest
from google import genai
from google.genai import types as gtypes

from tests.support import ServerProcess
from tests.support.clients import openai_client

SCENARIO = "hallucinated"  # tests/scenarios/hallucinated.yaml
REFUSED = "Tool not found: delete_everything"
RAN = "Deleted 1,204 files."
TOOL = {
    "name": "read_file",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def chat(server: ServerProcess, session: str, answer: str) -> None:
    llm = openai_client(server, SCENARIO, session)
    tools: Any = [{"type": "function", "function": TOOL}]
    messages: list[Any] = [{"role": "user", "content": "clean up"}]
    reply = llm.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
    message = reply.choices[0].message
    assert message.tool_calls and message.tool_calls[0].function.name == "delete_everything"
    messages += [message.model_dump(exclude_none=True)]
    messages += [{"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": answer}]
    llm.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)


def responses(server: ServerProcess, session: str, answer: str) -> None:
    llm = openai_client(server, SCENARIO, session)
    tools: Any = [{"type": "function", **TOOL}]
    first = llm.responses.create(model="gpt-4o", input="clean up", tools=tools)
    (call,) = [item for item in first.output if item.type == "function_call"]
    assert call.name == "delete_everything"
    history: Any = [
        {"role": "user", "content": "clean up"},
        call.model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": call.call_id, "output": answer},
    ]
    llm.responses.create(model="gpt-4o", input=history, tools=tools)


def messages(server: ServerProcess, session: str, answer: str) -> None:
    llm = anthropic.Anthropic(base_url=f"{server.url}/s/{SCENARIO}/{session}", api_key="t")
    tools: Any = [
        {
            "name": TOOL["name"],
            "description": TOOL["description"],
            "input_schema": TOOL["parameters"],
        }
    ]
    history: list[Any] = [{"role": "user", "content": "clean up"}]
    first = llm.messages.create(
        model="claude-opus-4-8", max_tokens=100, messages=history, tools=tools
    )
    (call,) = [block for block in first.content if block.type == "tool_use"]
    assert call.name == "delete_everything"
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id, "content": answer}
    if answer == REFUSED:
        result["is_error"] = True  # the flag this wire has for it (docs/verdict.md)
    history += [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {"role": "user", "content": [result]},
    ]
    llm.messages.create(model="claude-opus-4-8", max_tokens=100, messages=history, tools=tools)


def gemini(key: str) -> Callable[[ServerProcess, str, str], None]:
    """Gemini, the answer under `key` of the functionResponse's `response`."""

    def run(server: ServerProcess, session: str, answer: str) -> None:
        base = f"{server.url}/s/{SCENARIO}/{session}"
        with genai.Client(api_key="k", http_options={"base_url": base}) as llm:
            tool = gtypes.Tool(function_declarations=[gtypes.FunctionDeclaration(**TOOL)])
            config = gtypes.GenerateContentConfig(
                tools=[tool],
                automatic_function_calling=gtypes.AutomaticFunctionCallingConfig(disable=True),
            )
            asked = gtypes.Content(role="user", parts=[gtypes.Part(text="clean up")])
            first = llm.models.generate_content(
                model="gemini-2.5-flash", contents=[asked], config=config
            )
            (call,) = first.function_calls or []
            assert call.name == "delete_everything"
            said = gtypes.Part.from_function_response(name=call.name, response={key: answer})
            contents = [
                asked,
                first.candidates[0].content,
                gtypes.Content(role="user", parts=[said]),
            ]
            llm.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)

    return run


WIRES = {
    "chat": chat,
    "responses": responses,
    "messages": messages,
    "gemini, the text": gemini("result"),
    "gemini, an error key": gemini("error"),
}


def errors_fed_back(server: ServerProcess, session: str) -> dict[str, Any]:
    data = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    found: dict[str, Any] = next(c for c in data["checks"] if c["name"] == "errors_fed_back")
    return found


@pytest.mark.parametrize("wire", list(WIRES))
def test_the_same_error_text_passes_on_every_wire(
    server: ServerProcess, session: str, wire: str
) -> None:
    WIRES[wire](server, session, REFUSED)
    check = errors_fed_back(server, session)
    assert check["ok"], check


@pytest.mark.parametrize("wire", [w for w in WIRES if w != "gemini, an error key"])
def test_a_result_as_if_the_tool_ran_fails_on_every_wire(
    server: ServerProcess, session: str, wire: str
) -> None:
    WIRES[wire](server, session, RAN)
    check = errors_fed_back(server, session)
    assert not check["ok"]
    assert "delete_everything" in check["message"], check["message"]
    assert f"was answered {RAN!r} without an error" in check["message"], check["message"]
