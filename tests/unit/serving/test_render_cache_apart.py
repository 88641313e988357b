"""The render cache keeps its templates while another wire's attempts are each rendered
whole (serving/exchange.py `_render`): Bedrock's event stream checksums its bytes, so every
attempt of it is its own render and its own cache entry, one put a request; in the
template cache (first in, first out) 512 of them pushed every hot template out."""

from __future__ import annotations

import json

from mockllm.loading.loader import load_mapping
from mockllm.serving.server import build_app

from ..asgi import post
from ..stores import at_once

SCENARIO = {"name": "hello", "turns": [{"reply": {"text": "Hi there."}}]}
ASK = "hello?"
CHAT = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": ASK}]}).encode()
BEDROCK = json.dumps({"messages": [{"role": "user", "content": [{"text": ASK}]}]}).encode()
STREAM = "model/anthropic.claude-sonnet-4-6/converse-stream"


def test_a_hot_template_outlives_600_event_stream_attempts() -> None:
    app = build_app([load_mapping(SCENARIO)])
    exchanges = app.exchanges
    for session in ("a", "b"):  # a template is made on its key's second sight
        assert at_once(post(app, f"/s/hello/{session}/v1/chat/completions", CHAT))[0] == 200
    (template,) = exchanges._rendered.values()
    # one session, the same first turn again and again: attempts 1 to 600, each rendered
    for _ in range(600):
        status, _ = at_once(post(app, f"/s/hello/streams/{STREAM}", BEDROCK))
        assert status == 200
    assert len(exchanges._attempts) == 512  # the attempts' own bytes, bounded
    assert template in exchanges._rendered.values()
    status, body = at_once(post(app, "/s/hello/c/v1/chat/completions", CHAT))
    assert status == 200 and b"Hi there." in body
