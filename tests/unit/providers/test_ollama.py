"""Ollama's wire in process: what a request says (stream on by default, roles, pairing of
results by id, name or position, format), what a reply renders as (key order, one line a
call, the final counts, arguments no object can hold as content), and the recorder's reader
reading back what the wire renders."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockllm.core.engine import Resolved
from mockllm.errors import RequestError
from mockllm.loading.loader import load_mapping
from mockllm.providers.base import Parsed
from mockllm.providers.ollama import Ollama
from mockllm.providers.ollama_answers import OllamaAnswers
from mockllm.recording.sse import NdjsonFrames
from mockllm.state.memory import MemoryStore
from mockllm.state.store import answer_turn

from ..stores import at_once, engine_of

OLLAMA = Ollama()
CALLS = [
    {"function": {"name": "get_weather", "arguments": {"city": "北京"}}},
    {"function": {"name": "get_time", "arguments": {}}},
]


def resolve(turns: list[dict[str, Any]], body: dict[str, Any]) -> tuple[Resolved, Parsed]:
    scenario = load_mapping({"name": "unit", "turns": turns})
    parsed = OLLAMA.parse(body)
    engine = engine_of(scenario)
    store, conv = MemoryStore(engine, 1), parsed.conversation
    answered = at_once(answer_turn(store, engine, scenario, "s", conv, None, lambda _: ()))[1]
    assert answered.resolved is not None, answered.error
    return answered.resolved, parsed


def test_stream_is_on_unless_the_body_says_false() -> None:
    base = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert OLLAMA.parse(base).conversation.stream is True
    assert OLLAMA.parse({**base, "stream": None}).conversation.stream is True
    assert OLLAMA.parse({**base, "stream": False}).conversation.stream is False
    with pytest.raises(RequestError, match=r"ChatRequest\.stream of type bool"):
        OLLAMA.parse({**base, "stream": "no"})
    with pytest.raises(RequestError, match="model is required"):
        OLLAMA.parse({"messages": []})


@pytest.mark.parametrize(
    ("results", "paired"),
    [
        (  # by the id the client kept
            [{"tool_call_id": "call_b"}, {"tool_call_id": "call_a"}],
            [("turn0.call1", "by id"), ("turn0.call0", "by id")],
        ),
        (  # the ollama client: by tool_name, then the next unanswered of that name
            [{"tool_name": "get_time"}, {"tool_name": "get_weather"}],
            [("turn0.call1", "by name and position"), ("turn0.call0", "by name and position")],
        ),
        (  # strands: neither, so by position
            [{}, {}],
            [("turn0.call0", "by position"), ("turn0.call1", "by position")],
        ),
        ([{"tool_name": "nope"}], [("nope", "unpaired")]),
    ],
)
def test_results_pair_by_id_else_name_else_position(
    results: list[dict[str, Any]], paired: list[tuple[str, str]]
) -> None:
    calls = [{**c, "id": i} for c, i in zip(CALLS, ("call_a", "call_b"), strict=True)]
    messages = [
        {"role": "USER", "content": "hi"},  # Ollama lowers the role
        {"role": "assistant", "content": "", "tool_calls": calls, "thinking": "hmm"},
        *({"role": "tool", "content": "ok", **r} for r in results),
    ]
    conv = OLLAMA.parse({"model": "m", "messages": messages}).conversation
    assert conv.messages[0].role == "user" and conv.messages[1].reasoning == "hmm"
    got = [(r.call_id, r.paired) for m in conv.messages[2:] for r in m.tool_results]
    assert got == paired
    assert [c.arguments for c in conv.messages[1].tool_calls] == ['{"city":"北京"}', "{}"]


def test_format_is_structured_output() -> None:
    base = {"model": "m", "messages": []}
    mode = OLLAMA.parse({**base, "format": "json"}).conversation.output
    assert mode is not None and mode.kind == "json_object"
    schema = {"type": "object"}
    output = OLLAMA.parse({**base, "format": schema}).conversation.output
    assert output is not None and output.schema == schema
    assert OLLAMA.parse({**base, "format": ""}).conversation.output is None


TURN = {
    "reply": {
        "reasoning": "look",
        "text": "先查。",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "北京"}},
            {"name": "get_time", "arguments": {}},
        ],
    }
}


def test_a_reply_renders_in_ollama_s_order_and_reads_back() -> None:
    resolved, parsed = resolve(
        [TURN], {"model": "qwen3", "messages": [{"role": "user", "content": "x"}]}
    )
    body = json.loads(OLLAMA.render(resolved, parsed).data)
    assert list(body) == [
        "model",
        "created_at",
        "message",
        "done",
        "done_reason",
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    ]
    message = body["message"]
    assert list(message) == ["role", "content", "thinking", "tool_calls"]
    assert [c["function"]["index"] for c in message["tool_calls"]] == [0, 1]
    assert message["tool_calls"][1]["function"]["arguments"] == {}
    answers = OllamaAnswers()
    answers.body(body)
    heard = answers.heard
    assert heard.complete and heard.finish == "tool_calls" and heard.reasoning == "look"
    assert [(c.name, c.arguments) for c in heard.calls] == [
        ("get_weather", '{"city":"北京"}'),
        ("get_time", "{}"),
    ]


def test_a_stream_is_one_line_an_object_each_call_whole_and_reads_back() -> None:
    resolved, parsed = resolve(
        [TURN], {"model": "qwen3", "messages": [{"role": "user", "content": "x"}]}
    )
    events = OLLAMA.render_stream(resolved, parsed).events
    assert [e.part for e in events][-3:] == ["call:0", "call:1", "done"]
    assert all(e.data.endswith(b"\n") and e.data.count(b"\n") == 1 for e in events)
    lines = [json.loads(e.data) for e in events]
    assert [x["done"] for x in lines] == [False] * (len(lines) - 1) + [True]
    assert events[-3].carries == '{"city":"北京"}' and events[-3].inside is not None
    frames, answers = NdjsonFrames(), OllamaAnswers()
    for event in events:
        for name, data in frames.feed(event.data):
            answers.event(name, data)
    heard = answers.heard
    assert heard.text == "先查。" and heard.reasoning == "look" and len(heard.calls) == 2
    assert heard.complete and heard.input_tokens == resolved.input_tokens


def test_arguments_no_object_holds_come_as_content() -> None:
    turn = {"reply": {"text": "ok ", "tool_calls": [{"name": "f", "arguments": '{"a": 1'}]}}
    resolved, parsed = resolve(
        [turn], {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    )
    body, notes = OLLAMA.render(resolved, parsed)
    message = json.loads(body)["message"]
    assert message == {"role": "assistant", "content": 'ok {"name": "f", "arguments": {"a": 1}'}
    assert json.loads(body)["done_reason"] == "stop" and "sent as message content" in notes[0]
    assert OLLAMA.as_sent(resolved).reply.tool_calls == ()


def test_generate_answers_in_response() -> None:
    parsed = OLLAMA.parse_at({"model": "m", "prompt": "hi", "system": "be brief"}, "api/generate")
    assert [m.role for m in parsed.conversation.messages] == ["system", "user"]
    resolved, _ = resolve([{"reply": {"text": "hello"}}], {"model": "m", "messages": []})
    body = json.loads(OLLAMA.render(resolved, parsed).data)
    assert body["response"] == "hello" and "message" not in body and body["done"] is True
