"""OpenAI Responses through a real server and the official `openai` SDK, state included."""

from __future__ import annotations

import gc
import json
import re
from typing import Any

import httpx
import openai
import pytest

import mockllm
from tests.support import TOOL_PARAMETERS, ServerProcess
from tests.support.clients import ChatFactory

MODEL = "gpt-4.1"
TOOLS: list[Any] = [
    {"type": "function", "name": n, "parameters": TOOL_PARAMETERS, "strict": False}
    for n in ("get_weather", "get_time", "search")
]


def events_of(body: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for frame in body.strip().split("\n\n"):
        event_line, data_line = frame.split("\n")
        out.append(
            (event_line.removeprefix("event: "), json.loads(data_line.removeprefix("data: ")))
        )
    return out


def test_function_calls_ids_and_round_trip_with_full_history(chat: ChatFactory) -> None:
    client = chat("weather-parallel")
    response = client.responses.create(model=MODEL, input="北京和上海?", tools=TOOLS)
    assert response.status == "completed" and response.output_text == "我先查一下。"
    message, *calls = response.output
    assert message.type == "message" and re.fullmatch(r"msg_[0-9a-f]{50}", message.id)
    assert [(c.type, c.name, json.loads(c.arguments)) for c in calls] == [
        ("function_call", "get_weather", {"city": "北京"}),
        ("function_call", "get_weather", {"city": "上海"}),
    ]
    assert all(
        re.fullmatch(r"fc_[0-9a-f]{50}", c.id) and re.fullmatch(r"call_\w{24}", c.call_id)
        for c in calls
    )
    assert re.fullmatch(r"resp_[0-9a-f]{50}", response.id)
    history: list[Any] = [{"role": "user", "content": "北京和上海?"}]
    history += [item.model_dump(exclude_none=True) for item in response.output]
    history += [
        {"type": "function_call_output", "call_id": c.call_id, "output": out}
        for c, out in zip(calls, ["25", "22"], strict=True)
    ]
    final = client.responses.create(model=MODEL, input=history, tools=TOOLS)
    assert final.output_text == "北京多云25℃，上海小雨22℃。"


@pytest.mark.parametrize("stream", [False, True])
def test_previous_response_id_round_trip(
    chat: ChatFactory, server: ServerProcess, session: str, stream: bool
) -> None:
    client = chat("weather-parallel")
    first: openai.types.responses.Response
    if stream:
        with client.responses.stream(model=MODEL, input="北京和上海?", tools=TOOLS) as s:
            first = s.get_final_response()
    else:
        first = client.responses.create(model=MODEL, input="北京和上海?", tools=TOOLS)
    calls = [i for i in first.output if i.type == "function_call"]
    outputs = [
        {"type": "function_call_output", "call_id": c.call_id, "output": o}
        for c, o in zip(calls, ["25", "22"], strict=True)
    ]
    second = client.responses.create(
        model=MODEL, previous_response_id=first.id, input=outputs, tools=TOOLS
    )
    assert second.output_text == "北京多云25℃，上海小雨22℃。"
    assert second.previous_response_id == first.id
    entry = server.last(session)
    assert entry["turn"] == 1  # the stored conversation counts toward the turn
    assert [m["role"] for m in entry["conversation"]] == ["user", "assistant", "tool", "tool"]


@pytest.mark.parametrize("stream", [False, True])
def test_retrieve_gives_back_the_response_as_served(
    chat: ChatFactory, server: ServerProcess, stream: bool
) -> None:
    client = chat("weather-parallel")
    served: openai.types.responses.Response
    if stream:  # the raw events: the stream helper adds fields of its own (`parsed`)
        events = client.responses.create(model=MODEL, input="北京和上海?", tools=TOOLS, stream=True)
        served = next(e.response for e in events if e.type == "response.completed")
    else:
        served = client.responses.create(model=MODEL, input="北京和上海?", tools=TOOLS)
    raw = httpx.get(f"{server.url}/v1/responses/{served.id}")
    assert raw.status_code == 200
    assert json.loads(raw.content) == served.model_dump(mode="json", exclude_unset=True)


def test_the_store_is_invisible_to_the_garbage_collector() -> None:
    """Up to 10,000 stored responses are bytes, not parsed requests: tens of objects each,
    which every full collection walked (a quarter of a request's CPU on the bench)."""
    with mockllm.serve() as running:
        client = openai.OpenAI(base_url=f"{running.url}/s/weather-parallel/v1", api_key="t")
        asked = [f"北京和上海? ({n})" for n in range(400)]
        for text in asked[:100]:  # warm: every lazy path and cache taken
            client.responses.create(model=MODEL, input=text, tools=TOOLS)
        gc.collect()
        before = len(gc.get_objects())
        for text in asked[100:]:
            client.responses.create(model=MODEL, input=text, tools=TOOLS)
        gc.collect()
        kept = (len(gc.get_objects()) - before) / 300
        client.close()
    # The log entry keeps about a dozen (this scenario answers with two calls); a parsed
    # stored response kept about twenty more (31 in all before).
    assert kept < 20, kept


def test_unknown_previous_response_id_is_a_404(
    chat: ChatFactory, server: ServerProcess, session: str
) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        chat("hello").responses.create(model=MODEL, previous_response_id="resp_missing", input="hi")
    assert caught.value.body == {
        "message": "Previous response with id 'resp_missing' not found.",
        "type": "invalid_request_error",
        "param": "previous_response_id",
        "code": "previous_response_not_found",
    }
    assert server.last(session)["response"]["status"] == 404


def test_store_false_is_not_kept(chat: ChatFactory) -> None:
    client = chat("merged")
    first = client.responses.create(model=MODEL, input="a", store=False)
    assert first.store is False  # type: ignore[attr-defined]  # an extra field: not in the SDK's type
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model=MODEL, previous_response_id=first.id, input="b")
    kept = client.responses.create(model=MODEL, input="a")
    assert client.responses.retrieve(kept.id).output_text == "first"
    assert (
        client.responses.create(model=MODEL, previous_response_id=kept.id, input="b").output_text
        == "second"
    )


def test_instructions_string_and_item_inputs(
    chat: ChatFactory, server: ServerProcess, session: str
) -> None:
    name = f"instr-{session}"
    scenario = {
        "name": name,
        "turns": [
            {"expect": {"system": {"contains": "pirate"}, "user": "ahoy"}, "reply": {"text": "arr"}}
        ],
    }
    assert httpx.post(f"{server.url}/_mockllm/scenarios", json=scenario).status_code == 201
    client = chat(name)
    assert (
        client.responses.create(
            model=MODEL, instructions="Talk like a pirate.", input="ahoy"
        ).output_text
        == "arr"
    )
    items = [
        {"role": "developer", "content": "You are a pirate."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ahoy"}]},
    ]
    assert client.responses.create(model=MODEL, input=items).output_text == "arr"
    with pytest.raises(
        openai.BadRequestError, match="expected the system prompt containing 'pirate'"
    ):
        client.responses.create(model=MODEL, input="ahoy")


def test_reasoning_items(chat: ChatFactory) -> None:
    client = chat("reasoning")
    plain = client.responses.create(model="o3", input="weather?", tools=TOOLS)
    assert plain.output[0].type == "reasoning" and plain.output[0].summary == []  # not asked
    summary = {"summary": "auto"}
    response = client.responses.create(model="o3", input="weather?", tools=TOOLS, reasoning=summary)
    reasoning, call = response.output
    assert reasoning.type == "reasoning" and re.fullmatch(r"rs_[0-9a-f]{50}", reasoning.id)
    assert reasoning.summary[0].text.startswith("The user wants the weather")
    assert response.usage.output_tokens_details.reasoning_tokens > 0
    with client.responses.stream(
        model="o3", input="weather?", tools=TOOLS, reasoning=summary
    ) as stream:
        deltas = "".join(
            e.delta for e in stream if e.type == "response.reasoning_summary_text.delta"
        )
        final = stream.get_final_response()
    assert deltas == reasoning.summary[0].text
    assert final.output[1].arguments == call.arguments


def test_length_is_incomplete(chat: ChatFactory) -> None:
    client = chat("odd-replies")
    response = client.responses.create(model=MODEL, input="x", tools=TOOLS)
    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output[-1].status == "incomplete"
    assert [c.arguments for c in response.output if c.type == "function_call"] == [
        '{"city": "Par',
        "",
    ]
    with client.responses.stream(model=MODEL, input="x", tools=TOOLS) as stream:
        last = [e for e in stream][-1]
        assert last.type == "response.incomplete"
        with pytest.raises(RuntimeError, match=r"Didn't receive a `response\.completed` event"):
            stream.get_final_response()


def test_stream_event_sequence(server: ServerProcess, session: str) -> None:
    body = {"model": MODEL, "input": "北京?", "tools": TOOLS, "stream": True}
    r = httpx.post(f"{server.url}/s/weather-parallel/{session}/v1/responses", json=body)
    events = events_of(r.text)
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    assert all(name == d["type"] for name, d in events)
    names = [n for n, _ in events]
    assert names[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert names[-1] == "response.completed"
    assert (
        names.count("response.output_item.added") == names.count("response.output_item.done") == 3
    )
    assert names.count("response.function_call_arguments.done") == 2
    created = events[0][1]["response"]
    assert (
        created["status"] == "in_progress" and created["output"] == [] and created["usage"] is None
    )
    assert len({d["response"]["id"] for n, d in events if "response" in d}) == 1


def test_retrieve_unknown_response(server: ServerProcess) -> None:
    r = httpx.get(f"{server.url}/v1/responses/resp_nope")
    assert (
        r.status_code == 404
        and r.json()["error"]["message"] == "No response found with id 'resp_nope'."
    )
