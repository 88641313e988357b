"""An attempt's body is not kept by the log but made again when the entry is read
(serving/rendered.py `BodyAgain`): every wire's logged body is still, byte for byte, what
the client got, for attempts past the first, plain and streamed, cut by --log-body-cap,
and after the template has left the render cache."""

from __future__ import annotations

import contextlib
import json
from dataclasses import replace
from typing import Any

import pytest

from mockllm.core.cache import Bounded
from mockllm.loading.loader import load_text
from mockllm.options import DEFAULTS
from mockllm.serving.server import build_app

SCENARIO = """name: again
turns:
  - repeat: true
    reply:
      text: checking
      tool_calls: [{name: get_weather, arguments: {city: Paris}}]
"""
CHAT = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
WIRES: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": ("/s/again/one/v1/chat/completions", CHAT),
    "messages": ("/s/again/one/v1/messages", {**CHAT, "max_tokens": 50}),
    "gemini": (
        "/s/again/one/v1beta/models/m:generateContent",
        {"contents": [{"role": "user", "parts": [{"text": "x"}]}]},
    ),
}


def run(app: Any, path: str, body: dict[str, Any]) -> bytes:
    raw = json.dumps(body).encode()
    scope = {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(),
             "query_string": b"", "headers": [(b"content-type", b"application/json")],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8000)}  # fmt: skip
    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message.get("body", b""))

    with contextlib.suppress(StopIteration):  # it never suspends: done in one step
        app(scope, receive, send).send(None)
    return b"".join(sent)


@pytest.mark.parametrize("wire", sorted(WIRES))
@pytest.mark.parametrize("stream", [False, True])
def test_the_logged_body_of_every_attempt_is_what_was_sent(wire: str, stream: bool) -> None:
    app = build_app([load_text(SCENARIO)])
    path, body = WIRES[wire]
    if stream:
        path = path.replace(":generateContent", ":streamGenerateContent?alt=sse")
        body = body if wire == "gemini" else {**body, "stream": True}
    got = [run(app, path.split("?")[0], body) for _ in range(5)]
    assert len(set(got)) == 5  # fresh ids per attempt: five different bodies
    entries = list(app.journal.entries())
    kept_again = [e.sent_again is not None for e in entries]
    assert kept_again[2:] == [True, True, True]  # made again from the template when read
    assert [e.to_json()["response"]["body"].encode() for e in entries] == got
    # the adapter's methods bound once, shared by every entry (not 64 bytes each an entry)
    assert len({id(e.call_id) for e in entries}) == len({id(e.reparse) for e in entries}) == 1
    app.exchanges._rendered = Bounded(512)  # the templates gone from the render cache
    assert [e.to_json()["response"]["body"].encode() for e in entries] == got


def test_a_body_over_the_log_body_cap_is_cut_as_before() -> None:
    app = build_app([load_text(SCENARIO)], replace(DEFAULTS, log_body_cap=40))
    path, body = WIRES["chat"]
    got = [run(app, path, body) for _ in range(3)]
    for entry, sent in zip(list(app.journal.entries()), got, strict=True):
        logged = entry.to_json()["response"]
        assert logged["body"].encode() == sent[:40] and logged["body_truncated"]
