"""Anthropic Messages through a real server and the official `anthropic` SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest

from tests.support import TOOL_PARAMETERS, ServerProcess, running_server

MODEL = "claude-sonnet-4-6"
TOOLS: list[Any] = [
    {"name": n, "input_schema": TOOL_PARAMETERS} for n in ("get_weather", "get_time")
]


def ask(text: str = "hi") -> list[Any]:
    return [{"role": "user", "content": text}]


@pytest.fixture
def claude(server: ServerProcess, session: str) -> Iterator[Any]:
    clients: list[anthropic.Anthropic] = []

    def make(scenario: str) -> anthropic.Anthropic:
        client = anthropic.Anthropic(
            base_url=f"{server.url}/s/{scenario}/{session}", api_key="test", max_retries=0
        )
        clients.append(client)
        return client

    yield make
    for c in clients:
        c.close()


def frames(body: str) -> list[tuple[str, dict[str, Any]]]:
    """(event line, data) for each SSE frame."""
    out = []
    for frame in body.strip().split("\n\n"):
        event_line, data_line = frame.split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        out.append((event_line[7:], json.loads(data_line[6:])))
    return out


def test_parallel_tool_use_round_trip(claude: Any) -> None:
    client = claude("weather-parallel")
    message = client.messages.create(
        model=MODEL, max_tokens=100, messages=ask("北京和上海?"), tools=TOOLS
    )
    assert message.stop_reason == "tool_use" and message.model == MODEL
    text, *uses = message.content
    assert text.type == "text" and text.text == "我先查一下。"
    assert [(u.type, u.name, u.input) for u in uses] == [
        ("tool_use", "get_weather", {"city": "北京"}),
        ("tool_use", "get_weather", {"city": "上海"}),
    ]
    assert all(u.id.startswith("toolu_01") and len(u.id) == 30 for u in uses)
    assert [u.id for u in uses] == [  # derived from scenario, turn, position: stable
        "toolu_01EzISem5RXCtVPqnCGOgXVI",
        "toolu_01U0IIarHdr9Y9aFEy5Sla72",
    ]
    assert message.id.startswith("msg_01") and message._request_id.startswith("req_011C")
    assert message.id == "msg_01xGjCNiiKChTCHJ6rxPlXHd"
    history = [
        *ask("北京和上海?"),
        {
            "role": "assistant",
            "content": [b.model_dump(exclude_none=True) for b in message.content],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": uses[1].id,
                    "content": "22度",
                },  # order does not matter
                {
                    "type": "tool_result",
                    "tool_use_id": uses[0].id,
                    "content": [{"type": "text", "text": "25度"}],
                },
            ],
        },
    ]
    final = client.messages.create(model=MODEL, max_tokens=100, messages=history, tools=TOOLS)
    assert final.stop_reason == "end_turn" and final.content[0].text == "北京多云25℃，上海小雨22℃。"


def test_stream_event_sequence(server: ServerProcess, session: str) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 100,
        "stream": True,
        "messages": ask("北京?"),
        "tools": TOOLS,
    }
    r = httpx.post(f"{server.url}/s/weather-parallel/{session}/v1/messages", json=body)
    assert r.headers["content-type"].startswith("text/event-stream")
    events = frames(r.text)
    assert all(name == data["type"] for name, data in events)  # the mandatory event: line matches
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names[1:3] == ["content_block_start", "ping"]
    starts = [d for n, d in events if n == "content_block_start"]
    assert [s["content_block"]["type"] for s in starts] == ["text", "tool_use", "tool_use"]
    assert [s["index"] for s in starts] == [0, 1, 2]
    assert all(s["content_block"]["input"] == {} for s in starts[1:])
    json_deltas = [
        d["delta"]["partial_json"]
        for n, d in events
        if n == "content_block_delta" and d["index"] == 1
    ]
    assert json_deltas[0] == "" and "".join(json_deltas) == '{"city":"北京"}'
    start = events[0][1]["message"]
    assert (
        start["content"] == []
        and start["stop_reason"] is None
        and start["usage"]["output_tokens"] == 1
    )
    delta = events[-2][1]
    assert (
        delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None, "stop_details": None}
        and delta["usage"]["output_tokens"] > 1
    )


def test_thinking_block_with_signature(claude: Any) -> None:
    client = claude("reasoning")
    kwargs = {"model": MODEL, "max_tokens": 2048, "messages": ask(), "tools": TOOLS}
    message = client.messages.create(**kwargs)
    thinking, use = message.content
    assert thinking.type == "thinking" and thinking.thinking.startswith(
        "The user wants the weather"
    )
    assert len(thinking.signature) > 40
    with client.messages.stream(**kwargs) as stream:
        kinds = [e.type for e in stream]
        streamed = stream.get_final_message()
    assert streamed.content[0].signature == thinking.signature  # deterministic
    assert streamed.content[0].thinking == thinking.thinking
    assert streamed.content[1].input == use.input == {"city": "Oslo"}
    assert "thinking" in kinds and "signature" in kinds


def test_accepts_x_api_key_bearer_or_nothing_and_any_version(
    server: ServerProcess, session: str
) -> None:
    body = {"model": MODEL, "max_tokens": 10, "messages": ask()}
    url = f"{server.url}/s/hello/{session}/v1/messages"
    for headers in ({"x-api-key": "k"}, {"authorization": "Bearer k"}, {}):
        for version in ("2023-06-01", "2099-12-31"):
            r = httpx.post(url, json=body, headers={**headers, "anthropic-version": version})
            assert r.status_code == 200 and r.json()["content"][0]["text"].startswith("Hello!")
    assert "x-api-key" not in server.last(session)["headers"]


def test_errors_are_anthropic_shaped(claude: Any, server: ServerProcess, session: str) -> None:
    with pytest.raises(anthropic.NotFoundError) as caught:
        claude("nope").messages.create(model=MODEL, max_tokens=10, messages=ask())
    body = caught.value.body
    assert body["type"] == "error" and body["error"]["type"] == "not_found_error"
    assert "no scenario named 'nope'" in body["error"]["message"]
    assert body["request_id"] == caught.value.response.headers["request-id"]
    r = httpx.post(
        f"{server.url}/s/hello/{session}/v1/messages", json={"model": MODEL, "max_tokens": 5}
    )
    assert r.status_code == 400 and r.json()["error"] == {
        "type": "invalid_request_error",
        "message": "messages: Field required",
    }


def test_cut_off_arguments_non_streamed_keep_complete_parameters(
    claude: Any, server: ServerProcess, session: str
) -> None:
    """The API buffers each parameter until complete, so a cut tool_use carries only those."""
    message = claude("cut-args").messages.create(
        model=MODEL, max_tokens=10, messages=ask(), tools=TOOLS
    )
    assert message.stop_reason == "max_tokens"
    assert message.content[0].input == {"city": "Paris"}
    notes = server.last(session)["response"]["notes"]
    assert len(notes) == 1 and 'tool_use.input sent as {"city": "Paris"}' in notes[0]


def test_cut_off_arguments_streamed_verbatim(
    claude: Any, server: ServerProcess, session: str
) -> None:
    with claude("cut-args").messages.stream(
        model=MODEL, max_tokens=10, messages=ask(), tools=TOOLS
    ) as stream:
        partial = "".join(e.partial_json for e in stream if e.type == "input_json")
        final = stream.get_final_message()
    assert partial == '{"city": "Paris", "unit": "cel'
    assert final.stop_reason == "max_tokens" and final.content[0].input["city"] == "Paris"
    assert server.last(session)["response"]["notes"] == []


def test_prose_arguments_cannot_be_an_input_object(
    claude: Any, server: ServerProcess, session: str
) -> None:
    client = claude("prose-args")
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=MODEL, max_tokens=10, messages=ask(), tools=TOOLS)
    message = caught.value.body["error"]["message"]
    assert message.startswith(
        "mockllm: scenario 'prose-args' turn 0 call 0 (get_weather) has arguments"
    )
    assert "stream=true" in message
    assert server.last(session)["response"]["error"]["kind"] == "unrepresentable_reply"
    # Streamed, the text goes out verbatim: the SDK's own accumulator is what fails.
    with (
        pytest.raises(ValueError, match="Unable to parse tool parameter JSON from model"),
        client.messages.stream(model=MODEL, max_tokens=10, messages=ask(), tools=TOOLS) as stream,
    ):
        stream.get_final_message()


def test_consecutive_assistant_messages_are_one_reply(
    claude: Any, server: ServerProcess, session: str
) -> None:
    history = [
        *ask("a"),
        {"role": "assistant", "content": "first"},
        {"role": "assistant", "content": [{"type": "text", "text": "(continued)"}]},
        {"role": "user", "content": "b"},
    ]
    reply = claude("merged").messages.create(model=MODEL, max_tokens=10, messages=history)
    assert reply.content[0].text == "second"
    assert server.last(session)["turn"] == 1


def test_models_list_shape_follows_the_sdk(server: ServerProcess) -> None:
    with anthropic.Anthropic(base_url=server.url, api_key="k") as client:
        models = client.models.list()
        assert models.data[0].type == "model" and models.data[0].id.startswith("claude")
        assert client.models.retrieve("claude-anything").id == "claude-anything"
    assert httpx.get(f"{server.url}/v1/models").json()["object"] == "list"


def test_byte_identical_streams_across_runs(server: ServerProcess) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 100,
        "stream": True,
        "messages": ask("北京?"),
        "tools": TOOLS,
    }
    first = httpx.post(f"{server.url}/s/weather-parallel/det-anthropic/v1/messages", json=body)
    with running_server() as other:
        again = httpx.post(f"{other.url}/s/weather-parallel/det-anthropic/v1/messages", json=body)
    assert first.content == again.content
    assert first.headers["request-id"] == again.headers["request-id"]
