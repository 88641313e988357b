"""The seam docs/design.md ("What a wire implements") promises, held: a wire written with
only the seven required members serves a request, plain and streamed, through the app."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockllm.core.conversation import Conversation, Message
from mockllm.core.encoding import dumps, sse_frame
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.errors import RequestError
from mockllm.loading.loader import load_text
from mockllm.providers import ADAPTERS, Adapter, Body, Parsed, Stream
from mockllm.serving.server import build_app

from ..asgi import post


class Echo(Adapter):
    api = "echo"
    family = "echo"
    routes = ("v1/echo",)

    def parse(self, body: Any) -> Parsed:
        if not isinstance(body, dict) or not isinstance(body.get("say"), str):
            raise RequestError(400, "say: a string, please")
        conv = Conversation("echo-1", (Message("user", body["say"]),), stream=bool(body.get("s")))
        return Parsed(conv)

    def render(self, resolved: Resolved, parsed: Parsed) -> Body:
        return Body(dumps({"text": resolved.reply.text}))

    def render_stream(self, resolved: Resolved, parsed: Parsed) -> Stream:
        return Stream([Event(sse_frame(dumps({"text": resolved.reply.text})), "text")])

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        return dumps({"oops": error.message})


SCENARIO = "name: echo\nturns:\n  - repeat: true\n    reply:\n      text: hello\n"


def run(coroutine: Any) -> Any:
    """Drive a coroutine that never suspends (the memory store's path): no event loop,
    whose self-pipe is a socket tests/unit refuses."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the request suspended")


def test_a_wire_of_seven_members_serves_plain_streamed_and_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(ADAPTERS, Echo.api, Echo)
    app = build_app([load_text(SCENARIO)])
    status, body = run(post(app, "/s/echo/v1/echo", b'{"say": "hi"}'))
    assert (status, json.loads(body)) == (200, {"text": "hello"})
    status, body = run(post(app, "/s/echo/v1/echo", b'{"say": "hi", "s": true}'))
    assert (status, body) == (200, b'data: {"text":"hello"}\n\n')
    status, body = run(post(app, "/s/echo/v1/echo", b'{"say": 1}'))
    assert (status, json.loads(body)) == (400, {"oops": "say: a string, please"})
