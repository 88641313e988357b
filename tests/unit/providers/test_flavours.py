"""The Chat Completions flavours in-process (tests/e2e/wires/test_flavours_e2e.py drives them over HTTP
with the SDKs): the URL prefix, the variants and their precedence, Kimi's id counter, GLM's
whole calls, the errors' envelopes, and a hypothesis walk over every flavour's rendering."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.ids import HEX, fresh
from mockllm.core.scenario import FLAVORS
from mockllm.errors import RequestError
from mockllm.loading.loader import load_mapping
from mockllm.providers.base import Adapter
from mockllm.providers.flavoured_chat import FlavouredChat
from mockllm.serving.routing import Routes
from tests.support.hypothesis_profiles import examples

WEATHER = load_mapping(
    {
        "name": "w",
        "turns": [
            {"reply": {"reasoning": "r", "tool_calls": [{"name": "a", "arguments": {"x": 1}}]}},
            {
                "reply": {
                    "tool_calls": [
                        {"name": "b", "arguments": {}},
                        {"name": "c", "arguments": {}, "id": "mine"},
                    ]
                }
            },
            {"reply": {"text": "done"}},
        ],
    }
)


def root(flavor: str = "openai") -> FlavouredChat:
    adapter = FlavouredChat()
    adapter.flavor = flavor
    return adapter


def resolved(turn: int) -> Resolved:
    reply = WEATHER.turns[turn].reply
    return Resolved(WEATHER, turn, reply, 3, 5, 1, 1735689600)


def test_the_flavour_prefix_is_outermost_and_only_at_the_start() -> None:
    assert Routes.flavour("/f/qwen/s/x/y/v1/chat/completions") == (
        "qwen",
        "/s/x/y/v1/chat/completions",
    )
    assert Routes.flavour("/f/kimi/chat/completions") == ("kimi", "/chat/completions")
    assert Routes.flavour("/s/f/qwen/v1/chat/completions") == (
        None,
        "/s/f/qwen/v1/chat/completions",
    )
    assert Routes.flavour("/f/") == ("", "/")


def test_the_url_outranks_the_scenario_which_outranks_the_server() -> None:
    server = root("glm")
    kimi = load_mapping({"name": "k", "flavor": "kimi", "turns": [{"reply": {"text": "x"}}]})
    plain = load_mapping({"name": "p", "turns": [{"reply": {"text": "x"}}]})
    assert server.for_scenario(kimi).flavor == "kimi" and server.for_scenario(plain) is server
    pinned = server.variant("qwen")
    assert pinned.for_scenario(kimi) is pinned and pinned.variant("qwen") is pinned
    assert server.variant("qwen") is pinned  # one instance per flavour and server


def test_kimi_ids_count_the_calls_of_earlier_turns_and_keep_scripted_ones() -> None:
    kimi = root("kimi")
    ids = [kimi.call_id(WEATHER, 0, 0), kimi.call_id(WEATHER, 1, 0), kimi.call_id(WEATHER, 1, 1)]
    assert ids == ["functions.a:0", "functions.b:1", "mine"]


def frames(events: list[Event]) -> list[dict[str, Any]]:
    return [json.loads(e.data[6:]) for e in events if e.data.startswith(b"data: {")]


def test_glm_joins_each_calls_arguments_into_the_chunk_that_names_it() -> None:
    glm = root("glm")
    parsed = glm.parse({"model": "glm-4.7", "messages": [{"role": "user", "content": "x"}]})
    events = glm.render_stream(resolved(0), parsed).events
    calls = [e for e in events if e.part.startswith(("call:", "args:"))]
    assert [e.part for e in calls] == ["call:0"] and calls[0].inside is not None
    encoded = b'"{\\"x\\":1}"'  # the arguments as the chunk's JSON writes them
    start = calls[0].data.index(encoded)
    assert start < calls[0].inside < start + len(encoded)  # a cut there falls in the arguments
    (piece,) = [tc for f in frames(events) for tc in f["choices"][0]["delta"].get("tool_calls", [])]
    assert piece["function"] == {"name": "a", "arguments": '{"x":1}'}
    streamed = glm.parse(
        {"model": "glm-4.7", "messages": [{"role": "user", "content": "x"}], "tool_stream": True}
    )
    assert (
        len([e for e in glm.render_stream(resolved(0), streamed).events if e.part == "args:0"]) > 1
    )


def test_each_envelope_is_its_providers() -> None:
    error = RequestError(400, "bad", param="messages", code=None)
    bodies = {f: json.loads(root(f).error_body(error, "req")) for f in FLAVORS}
    assert bodies["kimi"] == {"error": {"message": "bad", "type": "invalid_request_error"}}
    assert bodies["glm"] == {"error": {"code": "1214", "message": "bad"}}
    ark = bodies["doubao"]["error"]
    assert (ark["code"], ark["param"], ark["type"]) == ("InvalidParameter", "", "BadRequest")
    assert bodies["qwen"]["error"]["code"] == "invalid_parameter_error"
    assert bodies["qwen"]["id"] == "chatcmpl-req" and bodies["qwen"]["request_id"] == "req"
    assert (
        bodies["openai"]
        == bodies["minimax"]
        == {
            "error": {
                "message": "bad",
                "type": "invalid_request_error",
                "param": "messages",
                "code": None,
            }
        }
    )


@settings(max_examples=examples(80))
@given(
    flavor=st.sampled_from(FLAVORS),
    turn=st.sampled_from([0, 1, 2]),
    params=st.fixed_dictionaries(
        {},
        optional={
            "enable_thinking": st.booleans(),
            "tool_stream": st.booleans(),
            "reasoning_split": st.booleans(),
            "thinking": st.sampled_from([{"type": "enabled"}, {"type": "disabled"}, {}]),
            "stream_options": st.just({"include_usage": True}),
        },
    ),
)
def test_every_flavour_renders_json_and_a_stream_that_ends_done(
    flavor: str, turn: int, params: dict[str, Any]
) -> None:
    adapter = root(flavor)
    body = {"model": "qwen3-32b", "messages": [{"role": "user", "content": "x"}], **params}
    parsed = adapter.parse(body)
    whole = json.loads(adapter.render(resolved(turn), parsed).data)
    assert whole["choices"][0]["finish_reason"] in ("stop", "tool_calls", "sensitive")
    events = adapter.render_stream(resolved(turn), parsed).events
    assert events[-1].data == b"data: [DONE]\n\n" and events[-1].part == "done"
    assert adapter.render_stream(resolved(turn), parsed).events == events  # deterministic
    calls = [
        tc
        for f in frames(events)
        if f["choices"]
        for tc in f["choices"][0]["delta"].get("tool_calls", [])
    ]
    heads = [c for c in calls if c["function"].get("name")]
    assert [c["id"] for c in heads] == [
        c["id"] for c in whole["choices"][0]["message"].get("tool_calls", [])
    ]


def test_each_flavours_request_id_is_its_own_or_openais() -> None:
    """`FlavouredChat.request_id` answers in one call: the flavour's own id where it has one
    (Qwen's UUID, Doubao's Ark id), else the `req_` + 32 hex that `Adapter.request_id`
    makes, for the same parts (the x-request-id header of every Chat reply)."""
    parts = ("session", "scenario", 2, 3)
    ids = {}
    for flavor in [*sorted(FLAVORS), None, "no-such-flavour"]:
        adapter = FlavouredChat().variant(flavor) if flavor else FlavouredChat()
        own = adapter.spec.request_id(*parts)
        assert adapter.request_id(*parts) == (own or Adapter.request_id(adapter, *parts))
        ids[flavor] = adapter.request_id(*parts)
    assert ids["openai"] == ids[None] == fresh("req_", 32, *parts, alphabet=HEX)
    assert ids["qwen"] != ids["openai"] != ids["doubao"]
