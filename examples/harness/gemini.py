"""The reference harness on the Gemini API (google-genai), with automatic function calling
off: the loop runs each call itself, after every check in `loop.execute`.

What differs from the other wires: a call has no id (results go back by name, in call
order, with the id only when the model gave one); `args` arrive as an object; a call the
model could not form comes as `finishReason: MALFORMED_FUNCTION_CALL` with no content
(asked again); google-genai retries nothing unless told to (CONFIG tells it), and does
not wrap a connection broken mid-stream.
"""

from __future__ import annotations

from typing import Any

import httpx2
from google import genai
from google.genai import errors, types

from . import loop
from .toolbox import OFFERED, Toolbox

CONFIG = types.GenerateContentConfig(
    tools=[
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(
                    name=t.name, description=t.description, parameters_json_schema=t.parameters
                )
                for t in OFFERED
            ]
        )
    ],
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    # google-genai retries nothing unless asked: these are its 408/429/5xx and connection
    # retries, before loop.ask's own (which reads Google's RetryInfo delay).
    http_options=types.HttpOptions(
        retry_options=types.HttpRetryOptions(attempts=3, initial_delay=0.5, max_delay=4, jitter=0.1)
    ),
)
FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}


class Gemini:
    # An HTTP error (4xx ones are raised again by loop.retry_delay), a connection broken
    # mid-stream (httpx2's own error), a frame cut short (UnknownApiResponseError).
    transient: tuple[type[Exception], ...] = (
        errors.APIError,
        errors.UnknownApiResponseError,
        httpx2.TransportError,
    )

    def __init__(self, client: genai.Client, model: str) -> None:
        self.client, self.model = client, model

    def ask(self, history: list[Any]) -> loop.Reply:
        chunks = list(
            self.client.models.generate_content_stream(
                model=self.model, contents=history, config=CONFIG
            )
        )
        feedback = chunks[-1].prompt_feedback if chunks else None
        if feedback is not None and feedback.block_reason is not None:  # no candidate at all
            raise loop.GaveUp(f"the prompt was blocked ({feedback.block_reason.value})")
        last = chunks[-1].candidates[0] if chunks and chunks[-1].candidates else None
        if last is None or last.finish_reason is None:
            raise loop.BrokenReply("the stream ended before its finish reason")
        reason = last.finish_reason.value
        if reason == "MALFORMED_FUNCTION_CALL":  # nothing to answer: ask again
            raise loop.BrokenReply("the model could not form its function call")
        # One content with every part as it came: thought signatures must go back with them.
        parts = [
            p
            for c in chunks
            if c.candidates and c.candidates[0].content
            for p in c.candidates[0].content.parts or ()
            if p.text != "" or p.thought_signature
        ]
        calls = [
            loop.Call(f.id or f"{f.name}#{i}", f.name or "", f.args or {})
            for i, f in enumerate(p.function_call for p in parts if p.function_call)
        ]
        text = "".join(p.text for p in parts if p.text and not p.thought)
        finish = "tool_calls" if calls else FINISH.get(reason, "content_filter")
        content = types.Content(role="model", parts=parts) if parts else None
        return loop.Reply(text, calls, finish, raw=content)

    def user(self, text: str) -> list[Any]:
        return [types.Content(role="user", parts=[types.Part(text=text)])]

    def assistant(self, reply: loop.Reply) -> list[Any]:
        return [reply.raw] if reply.raw is not None else []

    def results(self, answered: list[tuple[loop.Call, loop.Result]]) -> list[Any]:
        # One part per call, in call order, named; the id only when the model gave one.
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=None if "#" in call.id else call.id,
                    name=call.name,
                    response={"error" if result.is_error else "result": result.content},
                )
            )
            for call, result in answered
        ]
        return [types.Content(role="user", parts=parts)]


def run(
    client: genai.Client,
    question: str,
    toolbox: Toolbox,
    *,
    model: str = "gemini-2.5-flash",
    need_tool: bool = False,
) -> str:
    return loop.run(Gemini(client, model), question, toolbox, need_tool=need_tool)
