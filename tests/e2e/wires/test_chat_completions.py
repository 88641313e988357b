"""OpenAI Chat Completions through a real server and the official `openai` SDK."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessageParam,
    ChatCompletionToolParam,
)

from tests.support import TOOL_PARAMETERS, ServerProcess, assistant_message, running_server
from tests.support.clients import ChatFactory

TOOLS: list[ChatCompletionToolParam] = [
    {"type": "function", "function": {"name": n, "parameters": TOOL_PARAMETERS}}
    for n in ("get_weather", "get_time", "search")
]


def ask(text: str = "hi") -> list[ChatCompletionMessageParam]:
    return [{"role": "user", "content": text}]


def test_tool_call_round_trip(chat: ChatFactory) -> None:
    client = chat("weather-single")
    messages = ask("Weather in Paris?")
    first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    assert choice.message.tool_calls is not None
    (call,) = choice.message.tool_calls
    assert call.id.startswith("call_") and len(call.id) == 29
    assert call.id == "call_ZndMmhAeHMnCQxgQWQY9ipfP"  # derived: the same on every run
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "get_weather",
        {"city": "Paris"},
    )
    assert first.id.startswith("chatcmpl-") and first.model == "gpt-4o-mini-2024-07-18"
    assert first.id == "chatcmpl-YD1LxMVV4mxE6FP1Lie9iciEt5MFe"

    messages += [
        assistant_message(choice.message),
        {"role": "tool", "tool_call_id": call.id, "content": "18 °C, sunny"},
    ]
    final = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    assert final.choices[0].finish_reason == "stop"
    assert final.choices[0].message.content == "It is 18 °C and sunny in Paris."
    assert final.choices[0].message.tool_calls is None


def test_parallel_calls_non_streaming(chat: ChatFactory) -> None:
    completion = chat("weather-parallel").chat.completions.create(
        model="gpt-4o-mini", messages=ask("北京和上海天气?"), tools=TOOLS
    )
    message = completion.choices[0].message
    assert message.content == "我先查一下。"
    assert [json.loads(c.function.arguments) for c in message.tool_calls] == [
        {"city": "北京"},
        {"city": "上海"},
    ]
    assert len({c.id for c in message.tool_calls}) == 2
    assert (
        completion.usage.total_tokens
        == completion.usage.prompt_tokens + completion.usage.completion_tokens
    )


def test_parallel_calls_raw_stream_fragments_by_index(chat: ChatFactory) -> None:
    """Each call's first fragment carries id and name; later ones only index + arguments."""
    stream = chat("weather-parallel").chat.completions.create(
        model="gpt-4o-mini", messages=ask("北京和上海天气?"), tools=TOOLS, stream=True
    )
    chunks: list[ChatCompletionChunk] = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    ids: dict[int, list[str | None]] = {}
    args: dict[int, str] = {}
    text = ""
    for chunk in chunks:
        delta = chunk.choices[0].delta
        text += delta.content or ""
        for tc in delta.tool_calls or ():
            ids.setdefault(tc.index, []).append(tc.id)
            args[tc.index] = args.get(tc.index, "") + (tc.function.arguments or "")
            if tc.id is None:
                assert tc.function.name is None and tc.type is None
    assert text == "我先查一下。"
    assert all(v[0] is not None and v[1:] and all(x is None for x in v[1:]) for v in ids.values())
    assert [json.loads(args[i]) for i in (0, 1)] == [{"city": "北京"}, {"city": "上海"}]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert len({c.id for c in chunks}) == 1


def test_stream_accumulator_equals_non_streamed(chat: ChatFactory) -> None:
    client = chat("weather-parallel")
    kwargs = {"model": "gpt-4o-mini", "messages": ask("北京和上海天气?"), "tools": TOOLS}
    plain = client.chat.completions.create(**kwargs)
    with client.chat.completions.stream(**kwargs) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.content == plain.choices[0].message.content
    got = [
        (c.id, c.function.name, c.function.arguments) for c in final.choices[0].message.tool_calls
    ]
    want = [
        (c.id, c.function.name, c.function.arguments) for c in plain.choices[0].message.tool_calls
    ]
    # Two requests are two attempts at the turn: the same calls, each with fresh ids.
    assert [g[1:] for g in got] == [w[1:] for w in want]
    assert {g[0] for g in got}.isdisjoint(w[0] for w in want)
    assert final.choices[0].finish_reason == plain.choices[0].finish_reason == "tool_calls"


def test_include_usage_chunk_is_last(chat: ChatFactory) -> None:
    stream = chat("weather-single").chat.completions.create(
        model="gpt-4o-mini",
        messages=ask(),
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert all(c.usage is None for c in chunks[:-1])
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens > 0


def test_no_usage_chunk_without_include_usage(chat: ChatFactory) -> None:
    chunks = list(chat("hello").chat.completions.create(model="m", messages=ask(), stream=True))
    assert all(c.choices for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks).startswith(
        "Hello! I am mockllm"
    )


def test_reasoning_content_deepseek_style(chat: ChatFactory) -> None:
    client = chat("reasoning")
    plain = client.chat.completions.create(model="deepseek-reasoner", messages=ask(), tools=TOOLS)
    message = plain.choices[0].message
    assert (
        message.model_extra["reasoning_content"]
        == "The user wants the weather; I should call the tool."
    )
    chunks = list(
        client.chat.completions.create(
            model="deepseek-reasoner", messages=ask(), tools=TOOLS, stream=True
        )
    )
    pieces = [c.choices[0].delta.model_extra.get("reasoning_content") for c in chunks]
    streamed = "".join(p for p in pieces if p)
    assert streamed == message.model_extra["reasoning_content"]
    reasoning = message.model_extra["reasoning_content"]
    assert sum(1 for p in pieces if p) == -(-len(reasoning) // 5)  # text_chunk_chars: 5
    first_call = next(i for i, c in enumerate(chunks) if c.choices[0].delta.tool_calls)
    assert max(i for i, p in enumerate(pieces) if p) < first_call  # reasoning arrives first
    assert plain.usage.completion_tokens_details.reasoning_tokens == -(-len(reasoning) // 4)


def test_verbatim_arguments_explicit_id_length_and_usage(chat: ChatFactory) -> None:
    client = chat("odd-replies")
    plain = client.chat.completions.create(model="m", messages=ask())
    choice = plain.choices[0]
    assert choice.finish_reason == "length"
    assert [c.function.arguments for c in choice.message.tool_calls] == ['{"city": "Par', ""]
    assert choice.message.tool_calls[0].id == "call_fixed_0001"
    assert (plain.usage.prompt_tokens, plain.usage.completion_tokens) == (120, 33)
    # The SDK's stream helper refuses a `length` finish outright; the partial reply rides on the error.
    with (
        pytest.raises(openai.LengthFinishReasonError) as caught,
        client.chat.completions.stream(model="m", messages=ask()) as stream,
    ):
        stream.get_final_completion()
    final = caught.value.completion
    assert [c.function.arguments for c in final.choices[0].message.tool_calls] == [
        '{"city": "Par',
        "",
    ]
    assert final.choices[0].message.content == choice.message.content
    assert final.choices[0].finish_reason == "length"


def test_text_is_chunked_by_scenario_granularity(chat: ChatFactory) -> None:
    chunks = list(
        chat("odd-replies").chat.completions.create(model="m", messages=ask(), stream=True)
    )
    texts = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert texts[0] == "Let " and all(len(t) <= 4 for t in texts)
    arg_pieces = [
        tc.function.arguments
        for c in chunks
        for tc in c.choices[0].delta.tool_calls or ()
        if tc.index == 0 and tc.function.arguments
    ]
    assert arg_pieces == ['{"c', "ity", '": ', '"Pa', "r"]  # argument_fragments: 5


def _raw_pair(server: ServerProcess, scenario: str, session: str, body: dict[str, object]) -> bytes:
    r = httpx.post(f"{server.openai_url(scenario, session)}/chat/completions", json=body)
    assert r.status_code == 200
    return r.content


@pytest.mark.parametrize("stream", [False, True])
def test_byte_identical_across_sessions_and_server_runs(
    server: ServerProcess, stream: bool
) -> None:
    body = {
        "model": "gpt-4o-mini",
        "messages": ask("北京和上海天气?"),
        "tools": TOOLS,
        "stream": stream,
    }
    # Sessions of their own per parametrisation: a second request in one session is a retry,
    # whose ids are fresh (docs/scenarios.md, "Retries").
    a, b = f"determinism-a-{stream}", f"determinism-b-{stream}"
    first = _raw_pair(server, "weather-parallel", a, body)
    again = _raw_pair(server, "weather-parallel", b, body)
    with running_server() as other:
        elsewhere = _raw_pair(other, "weather-parallel", a, body)
        headers = httpx.post(
            f"{other.openai_url('weather-parallel', 'x')}/chat/completions", json=body
        ).headers
    assert first == again == elsewhere
    assert "date" not in headers and "server" not in headers


def test_models_list_and_single_model(server: ServerProcess) -> None:
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="test") as client:
        ids = [m.id for m in client.models.list()]
        assert "gpt-4o-mini" in ids
        assert client.models.retrieve("my-custom-model").id == "my-custom-model"


def test_sdk_types_parse_without_extras(chat: ChatFactory) -> None:
    """The body validates strictly against the SDK's own pydantic model."""
    response = chat.raw(
        "weather-parallel", {"model": "m", "messages": ask("北京?"), "tools": TOOLS}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    completion = ChatCompletion.model_validate(body, strict=False)
    assert completion.model_extra == {}
    assert completion.choices[0].message.model_extra == {}


def test_an_adapter_without_get_routes_answers_404_in_its_shape() -> None:
    """The Adapter.get default, in-process: nothing to get, said the provider's way."""
    from mockllm.providers.openai_chat import ChatCompletions

    status, body = ChatCompletions().get("anything")
    assert status == 404
    assert json.loads(body)["error"]["message"] == "mockllm: nothing at anything"
