"""The naive tool loop, once per API: the code of a quick tutorial, with the classic mistakes
left in on purpose (each marked MISTAKE). Do not copy it: it is here so the tests can show
each bundled scenario catching the mistake it is about (docs/failure-modes.md).
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
from google import genai
from google.genai.types import GenerateContentConfig

from . import anthropic_messages, bedrock_converse, chat_completions, gemini, responses
from .toolbox import Toolbox

# Not a cap a naive loop would have: only there so that the tests end. The verdict's
# no_tool_loop check is what catches the loop.
SAFETY_STOP = 50


def chat(client: openai.OpenAI, question: str, toolbox: Toolbox, *, model: str) -> str:
    messages: list[Any] = [{"role": "user", "content": question}]
    for _ in range(SAFETY_STOP):
        # MISTAKE: a stream that breaks is not retried; finish_reason is never read.
        with client.chat.completions.stream(
            model=model, messages=messages, tools=chat_completions.TOOLS
        ) as stream:
            message = stream.get_final_completion().choices[0].message
        if message.content:  # MISTAKE: any text is the answer, even a preamble to calls
            return message.content
        # MISTAKE: the assistant message is rebuilt without DeepSeek's reasoning_content.
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in message.tool_calls or ()
        ]
        messages.append({"role": "assistant", "tool_calls": calls})
        for call in message.tool_calls or ():
            # MISTAKE: json.loads raises on arguments that are not JSON (cut, empty, prose).
            result = run_tool(toolbox, call.function.name, json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    raise RuntimeError(f"no answer after {SAFETY_STOP} model calls")


def responses_api(client: openai.OpenAI, question: str, toolbox: Toolbox, *, model: str) -> str:
    items: list[Any] = [{"role": "user", "content": question}]
    for _ in range(SAFETY_STOP):
        with client.responses.stream(model=model, input=items, tools=responses.TOOLS) as stream:
            response = stream.get_final_response()  # MISTAKE: no retry of a broken stream
        if response.output_text:  # MISTAKE: any text is the answer
            return response.output_text
        items += [item.model_dump(exclude_none=True) for item in response.output]
        for item in response.output:
            if item.type == "function_call":  # MISTAKE: json.loads, as in chat()
                output = run_tool(toolbox, item.name, json.loads(item.arguments))
                items.append(
                    {"type": "function_call_output", "call_id": item.call_id, "output": output}
                )
    raise RuntimeError(f"no answer after {SAFETY_STOP} model calls")


def messages(client: anthropic.Anthropic, question: str, toolbox: Toolbox, *, model: str) -> str:
    history: list[Any] = [{"role": "user", "content": question}]
    for _ in range(SAFETY_STOP):
        with client.messages.stream(
            model=model, max_tokens=1024, messages=history, tools=anthropic_messages.TOOLS
        ) as stream:
            message = stream.get_final_message()  # MISTAKE: no retry; stop_reason never read
        text = "".join(b.text for b in message.content if b.type == "text")
        if text:  # MISTAKE: any text is the answer
            return text
        history.append({"role": "assistant", "content": message.content})
        results = []
        for block in message.content:
            if block.type == "tool_use":
                content = run_tool(toolbox, block.name, block.input)
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": content})
        history.append({"role": "user", "content": results})
    raise RuntimeError(f"no answer after {SAFETY_STOP} model calls")


def gemini_api(client: genai.Client, question: str, toolbox: Toolbox, *, model: str) -> str:
    contents: list[Any] = [{"role": "user", "parts": [{"text": question}]}]
    for _ in range(SAFETY_STOP):
        # MISTAKE: no retry (google-genai retries nothing by default); finish_reason never
        # read, so a MALFORMED_FUNCTION_CALL (no content at all) is not seen for what it is.
        response: Any = client.models.generate_content(  # MISTAKE: trusts what may be None
            model=model, contents=contents, config=GenerateContentConfig(tools=gemini.CONFIG.tools)
        )
        if response.text:  # MISTAKE: any text is the answer
            return str(response.text)
        contents.append(response.candidates[0].content)
        parts = []
        for call in response.function_calls:  # MISTAKE: None when the reply has no content
            result = run_tool(toolbox, call.name, call.args)
            parts.append({"function_response": {"name": call.name, "response": {"result": result}}})
        contents.append({"role": "user", "parts": parts})
    raise RuntimeError(f"no answer after {SAFETY_STOP} model calls")


def bedrock(client: Any, question: str, toolbox: Toolbox, *, model: str) -> str:
    messages: list[Any] = [{"role": "user", "content": [{"text": question}]}]
    for _ in range(SAFETY_STOP):
        answer = client.converse(  # MISTAKE: no retry of its own; stopReason never read
            modelId=model, messages=messages, toolConfig=bedrock_converse.TOOL_CONFIG
        )
        message = answer["output"]["message"]  # MISTAKE: trusts the answer has an output
        text = "".join(b.get("text", "") for b in message["content"])
        if text:  # MISTAKE: any text is the answer
            return text
        messages.append(message)
        results = []
        for block in message["content"]:
            if "toolUse" in block:
                use = block["toolUse"]
                output = run_tool(toolbox, use["name"], use["input"])
                results.append(
                    {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": output}]}}
                )
        messages.append({"role": "user", "content": results})
    raise RuntimeError(f"no answer after {SAFETY_STOP} model calls")


def run_tool(toolbox: Toolbox, name: str, arguments: Any) -> str:
    # MISTAKES: any name the toolbox has, offered or not; no schema check (a list or a
    # string crashes the ** below); no sandbox for paths; a tool's exception escapes.
    return toolbox.functions[name](**arguments)
