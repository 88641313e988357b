"""The reference harness on the Anthropic Messages API."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
from anthropic.types import ToolParam

from . import loop
from .toolbox import OFFERED, Toolbox

TOOLS: list[ToolParam] = [
    {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in OFFERED
]
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls"}
FINISH |= {"max_tokens": "length", "refusal": "content_filter"}


class Messages:
    # The stream helper does not wrap a transport error raised mid-stream (a reset, a read
    # timeout): httpx2's own errors reach the caller besides the SDK's.
    transient: tuple[type[Exception], ...] = (anthropic.APIError, httpx2.TransportError)

    def __init__(self, client: anthropic.Anthropic, model: str) -> None:
        self.client, self.model = client, model

    def ask(self, history: list[Any]) -> loop.Reply:
        try:
            with self.client.messages.stream(
                model=self.model, max_tokens=1024, messages=history, tools=TOOLS
            ) as stream:
                message = stream.get_final_message()
        except ValueError as e:  # "Unable to parse tool parameter JSON from model. Please retry…"
            raise loop.BrokenReply(str(e)) from e
        if message.stop_reason is None:  # the body ended before message_delta came
            raise loop.BrokenReply("the stream ended before its stop reason")
        calls = [loop.Call(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
        text = "".join(b.text for b in message.content if b.type == "text")
        finish = FINISH.get(message.stop_reason, message.stop_reason)
        return loop.Reply(text, calls, finish, raw=message)

    def user(self, text: str) -> list[Any]:
        return [{"role": "user", "content": text}]

    def assistant(self, reply: loop.Reply) -> list[Any]:
        # Every block back as it came (thinking blocks keep their signatures). warnings=False:
        # a tool_use input that is not an object (a model fault, refused below) is kept as is.
        content = [b.model_dump(exclude_none=True, warnings=False) for b in reply.raw.content]
        return [{"role": "assistant", "content": content}]

    def results(self, answered: list[tuple[loop.Call, loop.Result]]) -> list[Any]:
        # All results in one user message, before anything else in it.
        blocks = [
            {
                "type": "tool_result",
                "tool_use_id": call.id,
                "content": result.content,
                "is_error": result.is_error,
            }
            for call, result in answered
        ]
        return [{"role": "user", "content": blocks}]


def run(
    client: anthropic.Anthropic,
    question: str,
    toolbox: Toolbox,
    *,
    model: str = "claude-sonnet-4-6",
    need_tool: bool = False,
) -> str:
    return loop.run(Messages(client, model), question, toolbox, need_tool=need_tool)
