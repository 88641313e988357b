"""The reference harness on OpenAI Chat Completions (and DeepSeek, and other compatible APIs)."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionFunctionToolParam

from . import loop
from .toolbox import OFFERED, Toolbox

TOOLS: list[ChatCompletionFunctionToolParam] = [
    {
        "type": "function",
        "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
    }
    for t in OFFERED
]


class ChatCompletions:
    # Connection cut, timeout, an HTTP error past the SDK's retries, an error event mid-stream.
    # The stream helper does not always wrap a connection cut mid-stream: depending on when
    # the cut is read, httpx2's own RemoteProtocolError reaches the caller instead.
    transient: tuple[type[Exception], ...] = (openai.APIError, httpx2.TransportError)

    def __init__(self, client: openai.OpenAI, model: str) -> None:
        self.client, self.model = client, model

    def ask(self, history: list[Any]) -> loop.Reply:
        completion: ChatCompletion
        try:
            with self.client.chat.completions.stream(
                model=self.model, messages=history, tools=TOOLS
            ) as stream:
                completion = stream.get_final_completion()
        except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as e:
            # The helper refuses a `length` or `content_filter` finish; the reply rides along.
            assert e.completion is not None
            completion = e.completion
        choice = completion.choices[0]
        if choice.finish_reason is None:  # the body ended before the finish chunk came
            raise loop.BrokenReply("the stream ended before its finish reason")
        message = choice.message
        calls = [
            loop.Call(c.id, c.function.name, c.function.arguments)
            for c in message.tool_calls or ()
            if c.type == "function"
        ]
        reasoning = (message.model_extra or {}).get("reasoning_content")
        refusal = message.refusal  # the model declined: content null, the refusal said
        return loop.Reply(
            message.content or "", calls, choice.finish_reason, reasoning, None, refusal
        )

    def user(self, text: str) -> list[Any]:
        return [{"role": "user", "content": text}]

    def assistant(self, reply: loop.Reply) -> list[Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in reply.calls
            ]
        if reply.reasoning is not None:  # DeepSeek thinking mode: without it, the next is a 400
            message["reasoning_content"] = reply.reasoning
        return [message]

    def results(self, answered: list[tuple[loop.Call, loop.Result]]) -> list[Any]:
        return [
            {"role": "tool", "tool_call_id": call.id, "content": result.content}
            for call, result in answered
        ]


def run(
    client: openai.OpenAI,
    question: str,
    toolbox: Toolbox,
    *,
    model: str = "gpt-4o-mini",
    need_tool: bool = False,
) -> str:
    return loop.run(ChatCompletions(client, model), question, toolbox, need_tool=need_tool)
