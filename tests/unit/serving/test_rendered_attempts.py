"""A reply rendered once as a template and reused for every attempt (serving/rendered.py)
gives, on every wire and flavour, the very bytes a render of that attempt gives: each
attempt's own ids, nothing of the template's left."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockllm.core import ids
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.loading.loader import load_mapping
from mockllm.serving.exchange import Exchanges
from mockllm.serving.rendered import Rendered, for_attempt, template
from mockllm.serving.server import build_app

from ..asgi import post
from ..stores import at_once

SCENARIO = {
    "name": "agent",
    "turns": [
        {
            "reply": {
                "reasoning": "look it up",
                "text": "checking",
                "tool_calls": [
                    {"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_time", "arguments": {}, "id": "call_mine"},
                ],
            }
        },
        {"reply": {"text": "It is sunny."}},
    ],
}
TOOLS = {"type": "object", "properties": {"city": {"type": "string"}}}
ASK = "weather?"
CHAT = {
    "model": "gpt-4o",
    "messages": [{"role": "user", "content": ASK}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": TOOLS}}],
}
BEDROCK = {
    "messages": [{"role": "user", "content": [{"text": ASK}]}],
    "toolConfig": {
        "tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": TOOLS}}}]
    },
}
WIRES: list[tuple[str, str, dict[str, Any], bytes]] = [
    ("chat", "v1/chat/completions", CHAT, b""),
    ("chat stream", "v1/chat/completions", {**CHAT, "stream": True}, b""),
    ("deepseek", "f/deepseek/v1/chat/completions", {**CHAT, "stream": True}, b""),
    ("qwen", "f/qwen/v1/chat/completions", CHAT, b""),
    ("kimi", "f/kimi/v1/chat/completions", {**CHAT, "stream": True}, b""),
    ("kimi body", "f/kimi/v1/chat/completions", CHAT, b""),
    ("qwen stream", "f/qwen/v1/chat/completions", {**CHAT, "stream": True}, b""),
    ("mistral", "f/mistral/v1/chat/completions", CHAT, b""),
    ("mistral stream", "f/mistral/v1/chat/completions", {**CHAT, "stream": True}, b""),
    ("doubao", "f/doubao/v1/chat/completions", CHAT, b""),
    ("doubao stream", "f/doubao/v1/chat/completions", {**CHAT, "stream": True}, b""),
    (
        "messages",
        "v1/messages",
        {"model": "claude-sonnet-4-5", "max_tokens": 99, "messages": CHAT["messages"]},
        b"",
    ),
    (
        "messages stream",
        "v1/messages",
        {"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": CHAT["messages"], "stream": 1},
        b"",
    ),
    ("responses", "v1/responses", {"model": "gpt-4.1", "input": ASK}, b""),
    ("responses stream", "v1/responses", {"model": "gpt-4.1", "input": ASK, "stream": True}, b""),
    (
        "gemini",
        "v1beta/models/gemini-2.5-flash:generateContent",
        {"contents": [{"role": "user", "parts": [{"text": ASK}]}]},
        b"",
    ),
    (
        "gemini stream",
        "v1beta/models/gemini-2.5-flash:streamGenerateContent",
        {"contents": [{"role": "user", "parts": [{"text": ASK}]}]},
        b"alt=sse",
    ),
    ("bedrock", "model/anthropic.claude-sonnet-4-6/converse", BEDROCK, b""),
    # AWS's event stream checksums each message: an attempt's ids cannot be swapped in.
    ("bedrock stream", "model/anthropic.claude-sonnet-4-6/converse-stream", BEDROCK, b""),
    (
        "bedrock invoke stream",
        "model/anthropic.claude-sonnet-4-6/invoke-with-response-stream",
        {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 9, "messages": CHAT["messages"]},
        b"",
    ),
    (
        "vertex gemini stream",
        "v1beta1/projects/p/locations/l/publishers/google/models/gemini-2.5-flash"
        ":streamGenerateContent",
        {"contents": [{"role": "user", "parts": [{"text": ASK}]}]},
        b"alt=sse",
    ),
    (
        "vertex claude",
        "v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4-6:rawPredict",
        {"anthropic_version": "vertex-2023-10-16", "max_tokens": 9, "messages": CHAT["messages"]},
        b"",
    ),
    (
        "vertex claude stream",
        "v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4-6:streamRawPredict",
        {
            "anthropic_version": "vertex-2023-10-16",
            "max_tokens": 9,
            "messages": CHAT["messages"],
            "stream": True,
        },
        b"",
    ),
    # NDJSON has no checksum: the stream's template is reused as an SSE one is.
    ("ollama", "api/chat", {**CHAT, "model": "llama3.2", "stream": False}, b""),
    ("ollama stream", "api/chat", {**CHAT, "model": "llama3.2"}, b""),
]


def exchange(wire: tuple[str, str, dict[str, Any], bytes]) -> list[tuple[int, bytes]]:
    """Three attempts at turn 0 in one session, then turn 0 in two fresh sessions."""
    _, route, body, query = wire
    app = build_app([load_mapping(SCENARIO)])
    raw = json.dumps(body).encode()
    paths = [f"/s/agent/one/{route}"] * 3 + [f"/s/agent/two/{route}", f"/s/agent/3/{route}"]
    if route.startswith("f/"):  # the flavour prefix goes first
        flavor = route.split("/")[1]
        rest = route.split("/", 2)[2]
        paths = [f"/f/{flavor}{p.replace(route, rest)}" for p in paths]

    return [at_once(post(app, path, raw, query)) for path in paths]


@pytest.mark.parametrize("wire", WIRES, ids=[w[0] for w in WIRES])
def test_every_attempt_gets_the_bytes_its_own_render_gives(
    wire: tuple[str, str, dict[str, Any], bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    reused = exchange(wire)
    assert all(status == 200 for status, _ in reused), reused
    attempts = [body for _, body in reused[:3]]
    # fresh ids per attempt (Kimi's are positional and its response id is its own: the
    # real API gives a retried turn the same ones)
    assert len(set(attempts)) == (1 if wire[0].startswith("kimi") else 3)
    assert reused[3][1] == reused[4][1] == reused[0][1]  # attempt 1 of any session: the same

    def direct(
        self: Exchanges, adapter: Any, resolved: Resolved, parsed: Any, stream: bool
    ) -> Rendered:
        return self._draw(adapter, resolved, parsed, stream)  # no template, no cache

    monkeypatch.setattr(Exchanges, "_render", direct)
    assert exchange(wire) == reused


@pytest.mark.parametrize("flavor", ["mistral", "kimi", "doubao", "qwen"])
@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_flavour_with_its_own_completion_id_reuses_its_template(
    flavor: str, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flavour names its completion id through `Flavour.completion_id`: OpenAI's id,
    made and then overwritten, stood nowhere in the bytes and every attempt was rendered
    whole (Mistral: a JSON decode and encode a request)."""
    draws = []
    draw = Exchanges._draw

    def counted(self: Exchanges, *args: Any) -> Rendered:
        draws.append(args[1].attempt)
        return draw(self, *args)

    monkeypatch.setattr(Exchanges, "_draw", counted)
    route = "v1/chat/completions"
    found = exchange((flavor, f"f/{flavor}/{route}", {**CHAT, "stream": stream}, b""))
    assert all(status == 200 for status, _ in found), found
    assert draws == [1, 0]  # attempt 1 rendered whole, then the template; the rest swapped


def test_a_template_whose_ids_are_reshaped_is_not_reused() -> None:
    """DeepSeek's response id is a UUID made of a derived id: not verbatim in the bytes."""
    scenario = load_mapping(SCENARIO)
    at = Resolved(scenario, 1, scenario.turns[1].reply, 3, 5, 0, 1735689600, attempt=2)

    def uuid_like(resolved: Resolved) -> Rendered:
        made = ids.derive("", 8, scenario.name, resolved.id_turn)
        return Rendered(resolved.reply, f'{{"id":"{made[:4]}-{made[4:]}"}}'.encode())

    def verbatim(resolved: Resolved) -> Rendered:
        made = ids.derive("r_", 8, scenario.name, resolved.id_turn)
        return Rendered(resolved.reply, f'{{"id":"{made}"}}'.encode())

    assert not template(uuid_like, at).reusable
    made = template(verbatim, at)
    assert made.reusable
    found = for_attempt(made, at)
    assert found is not None and found.body == verbatim(at).body


PERCENT = {
    "name": "odd",
    "turns": [
        {
            "reply": {
                "text": "100% sure: %(0)b %(turn)b {0} %%",
                "tool_calls": [
                    {"name": "get_weather", "arguments": {"city": "50%"}},
                    # a scripted id is part of its attempts' ids' seeds
                    {"name": "get_time", "arguments": {}, "id": "call_%s{0}%(0)b"},
                ],
            }
        }
    ],
}


@pytest.mark.parametrize("wire", WIRES[:2] + WIRES[11:15], ids=lambda w: w[0])
def test_a_reply_and_a_name_with_format_marks_get_their_own_bytes(
    wire: tuple[str, str, dict[str, Any], bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The template's body and its ids' seeds are `%` formats: a "%" or a "{" of the
    scenario's (a scripted id is in its attempts' seeds) or of the reply's is sent as it
    stands."""
    _, route, body, query = wire
    raw = json.dumps(body).encode()

    def sent() -> list[bytes]:
        app = build_app([load_mapping(PERCENT)])
        path = f"/s/odd/one/{route}"
        return [at_once(post(app, path, raw, query))[1] for _ in range(3)]

    reused = sent()
    assert len(set(reused)) == 3 and all(b"%(0)b" in sent for sent in reused)

    def direct(
        self: Exchanges, adapter: Any, resolved: Resolved, parsed: Any, stream: bool
    ) -> Rendered:
        return self._draw(adapter, resolved, parsed, stream)

    monkeypatch.setattr(Exchanges, "_render", direct)
    assert sent() == reused


def test_an_attempts_frames_carry_its_own_ids() -> None:
    """An attempt's frames (read by a fault's delivery and the log) have its ids swapped
    in, as its body does."""
    scenario = load_mapping(SCENARIO)
    at = Resolved(scenario, 1, scenario.turns[1].reply, 3, 5, 0, 1735689600, attempt=2)

    def frames(resolved: Resolved) -> Rendered:
        made = ids.derive("r_", 8, scenario.name, resolved.id_turn)
        events = [Event(f'{{"id":"{made}","n":{i}}}\n'.encode(), "text") for i in range(3)]
        return Rendered(resolved.reply, b"".join(e.data for e in events), events)

    found = for_attempt(template(frames, at), at)
    assert [e.data for e in found.events] == [e.data for e in frames(at).events]
    assert b"".join(e.data for e in found.events) == found.body
