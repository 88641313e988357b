"""The reference harness on the OpenAI Responses API."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
from openai.types.responses import FunctionToolParam

from . import loop
from .toolbox import OFFERED, Toolbox

TOOLS: list[FunctionToolParam] = [
    {
        "type": "function",
        "name": t.name,
        "description": t.description,
        "parameters": t.parameters,
        "strict": False,  # strict mode would need every property required
    }
    for t in OFFERED
]
INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}


class Responses:
    # Connection cut, timeout, an HTTP error past the SDK's retries.
    # The stream helper does not always wrap a connection cut mid-stream: depending on when
    # the cut is read, httpx2's own RemoteProtocolError reaches the caller instead.
    transient: tuple[type[Exception], ...] = (openai.APIError, httpx2.TransportError)

    def __init__(self, client: openai.OpenAI, model: str) -> None:
        self.client, self.model = client, model

    def ask(self, history: list[Any]) -> loop.Reply:
        # The events are read here rather than with get_final_response(), which raises a
        # bare RuntimeError both for a cut stream and for an `incomplete` (token limit) one.
        with self.client.responses.stream(model=self.model, input=history, tools=TOOLS) as stream:
            for event in stream:
                if event.type == "error":
                    raise loop.BrokenReply(f"error event in the stream: {event.message}")
                if event.type in ("response.completed", "response.incomplete"):
                    return self.reply(event.response)
        raise loop.BrokenReply("the stream ended before response.completed")

    @staticmethod
    def reply(response: Any) -> loop.Reply:
        calls = [
            loop.Call(item.call_id, item.name, item.arguments)
            for item in response.output
            if item.type == "function_call"
        ]
        if response.status == "incomplete":
            finish = INCOMPLETE.get(response.incomplete_details.reason, "length")
        else:
            finish = "tool_calls" if calls else "stop"
        refusals = [
            part.refusal
            for item in response.output
            if item.type == "message"
            for part in item.content
            if part.type == "refusal"
        ]
        refusal = " ".join(refusals) if refusals else None
        return loop.Reply(response.output_text, calls, finish, raw=response, refusal=refusal)

    def user(self, text: str) -> list[Any]:
        return [{"role": "user", "content": text}]

    def assistant(self, reply: loop.Reply) -> list[Any]:
        # Every output item goes back as it came — reasoning items too, which the API wants
        # next to their calls. (previous_response_id would do it server-side; replaying keeps
        # the harness stateless, and working with store=false.)
        return [item.model_dump(exclude_none=True) for item in reply.raw.output]

    def results(self, answered: list[tuple[loop.Call, loop.Result]]) -> list[Any]:
        return [
            {"type": "function_call_output", "call_id": call.id, "output": result.content}
            for call, result in answered
        ]


def run(
    client: openai.OpenAI,
    question: str,
    toolbox: Toolbox,
    *,
    model: str = "gpt-4.1",
    need_tool: bool = False,
) -> str:
    return loop.run(Responses(client, model), question, toolbox, need_tool=need_tool)
