"""Today's fields and headers, read the way clients read them: through the official SDKs'
types and stream helpers over real HTTP (the conformance corpus checks their structure
against recordings; these check what a client indexes)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from typing import Any, cast

import anthropic
import httpx
import openai
import pytest

from tests.support import TOOL_PARAMETERS, ServerProcess

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS}}]
PARIS = [{"role": "user", "content": "Weather in Paris?"}]


def test_chat_usage_details_fingerprint_and_snapshot(server: ServerProcess, session: str) -> None:
    with openai.OpenAI(
        base_url=server.openai_url("weather-single", session), api_key="k"
    ) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=PARIS, tools=TOOLS
        )
    completion = raw.parse()
    usage = completion.usage
    assert usage is not None and usage.prompt_tokens_details and usage.completion_tokens_details
    assert usage.prompt_tokens_details.audio_tokens == 0  # a KeyError on the mock before
    details = usage.completion_tokens_details
    assert (details.audio_tokens, details.accepted_prediction_tokens) == (0, 0)
    assert details.rejected_prediction_tokens == 0
    assert re.fullmatch(r"fp_[0-9a-f]{10}", completion.system_fingerprint or "")
    assert completion.model == "gpt-4o-mini-2024-07-18" and completion.service_tier == "default"
    assert raw.headers["openai-version"] == "2020-10-01"
    assert int(raw.headers["x-ratelimit-remaining-requests"]) > 0


def test_gpt_5_has_no_fingerprint_and_no_logprobs(server: ServerProcess, session: str) -> None:
    body = {"model": "gpt-5", "messages": PARIS, "tools": TOOLS}
    data = httpx.post(
        f"{server.openai_url('weather-single', session)}/chat/completions", json=body
    ).json()
    assert data["system_fingerprint"] is None and data["model"] == "gpt-5-2025-08-07"
    assert "logprobs" not in data["choices"][0]


def streamed_chunks(server: ServerProcess, scenario: str, session: str, model: str) -> list[Any]:
    """Every chunk of one streamed Chat Completions call, as the SDK yields them."""
    with openai.OpenAI(base_url=server.openai_url(scenario, session), api_key="k") as client:
        stream = client.chat.completions.create(
            model=model,
            messages=PARIS,
            tools=TOOLS,
            stream=True,
            stream_options={"include_usage": True},
        )
        return list(stream)


def test_service_tier_on_every_chunk(server: ServerProcess, session: str) -> None:
    chunks = streamed_chunks(server, "weather-single", session, "gpt-4o")
    assert chunks and all(c.service_tier == "default" for c in chunks)
    assert chunks[-1].choices == [] and chunks[-1].usage is not None  # OpenAI: a usage chunk


def test_deepseek_stream_every_chunk_has_a_choice(server: ServerProcess, session: str) -> None:
    """DeepSeek sends usage on the finish chunk and no `choices: []` chunk: a client doing
    `chunk.choices[0]` on every chunk works there, and must work here."""
    chunks = streamed_chunks(server, "deepseek-reasoning", session, "deepseek-reasoner")
    deltas = [c.choices[0].delta.model_extra or {} for c in chunks]  # never an IndexError
    assert deltas[0]["reasoning_content"] == "" and chunks[0].choices[0].delta.role == "assistant"
    assert all(d.get("reasoning_content") is None for d in deltas[-1:])
    assert chunks[-1].choices[0].finish_reason == "tool_calls" and chunks[-1].usage is not None
    extra = chunks[-1].usage.model_extra or {}
    assert extra["prompt_cache_hit_tokens"] == 0 and extra["prompt_cache_miss_tokens"] > 0
    assert str(uuid.UUID(chunks[0].id)) == chunks[0].id
    starts = [t for c in chunks for t in c.choices[0].delta.tool_calls or () if t.id]
    assert re.fullmatch(r"call_00_[A-Za-z0-9]{24}", starts[0].id or "")


def test_deepseek_thinking_text_deltas_carry_null_reasoning(
    server: ServerProcess, session: str
) -> None:
    """The answer turn: text deltas say `reasoning_content: null` after the thinking."""
    url = server.openai_url("deepseek-reasoning", session)
    with openai.OpenAI(base_url=url, api_key="k") as client:
        first = client.chat.completions.create(
            model="deepseek-reasoner", messages=PARIS, tools=TOOLS
        )
        message = first.choices[0].message
        call = (message.tool_calls or [])[0]
        history: list[Any] = [
            *PARIS,
            message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "18 °C"},
        ]
        stream = client.chat.completions.create(
            model="deepseek-reasoner", messages=history, tools=TOOLS, stream=True
        )
        chunks: list[Any] = list(cast(Iterable[Any], stream))
    texts = [c.choices[0].delta for c in chunks if c.choices[0].delta.content]
    assert texts and all((d.model_extra or {}).get("reasoning_content", "x") is None for d in texts)
    assert "".join(d.content or "" for d in texts) == "It is 18 °C and sunny in Paris."


def test_encrypted_reasoning_round_trip_without_store(server: ServerProcess, session: str) -> None:
    """The stateless Responses loop: `store: false` with include reasoning.encrypted_content;
    the reasoning item comes back in the next input and is accepted; an edited one is not."""
    tools = [{"type": "function", "name": "get_weather", "parameters": TOOL_PARAMETERS}]
    include = ["reasoning.encrypted_content"]
    with openai.OpenAI(base_url=server.openai_url("reasoning", session), api_key="k") as client:
        first, again = (
            client.responses.create(
                model="o3",
                input=PARIS,
                tools=tools,
                store=False,
                include=include,
            )
            for _ in range(2)
        )
        reasoning, call = first.output
        assert reasoning.type == "reasoning" and reasoning.summary == []
        token = reasoning.encrypted_content or ""
        assert token.startswith("gAAAAA") and token == again.output[0].encrypted_content
        assert "weather" not in token  # opaque
        output = {"type": "function_call_output", "call_id": call.call_id, "output": "3 °C"}
        items = [*PARIS, *(i.model_dump(exclude_none=True) for i in first.output), output]
        answer = client.responses.create(model="o3", input=items, tools=tools, store=False)
        assert answer.output_text == "It is 3 °C in Oslo."
        items[1] = {**items[1], "encrypted_content": token[:-4] + "AAAA"}
        with pytest.raises(openai.BadRequestError, match="could not be verified") as caught:
            client.responses.create(model="o3", input=items, tools=tools, store=False)
    assert caught.value.code == "invalid_encrypted_content"


def test_function_call_arguments_done_has_no_name(server: ServerProcess, session: str) -> None:
    tools = [{"type": "function", "name": "get_weather", "parameters": TOOL_PARAMETERS}]
    with (
        openai.OpenAI(base_url=server.openai_url("weather-single", session), api_key="k") as client,
        client.responses.stream(model="gpt-5", input=PARIS, tools=tools) as stream,
    ):
        done = [e for e in stream if e.type == "response.function_call_arguments.done"]
        final = stream.get_final_response()
    assert done and "name" not in done[0].model_fields_set
    assert re.fullmatch(r"resp_[0-9a-f]{50}", final.id) and final.completed_at is not None


def test_anthropic_usage_stop_details_and_caller(server: ServerProcess, session: str) -> None:
    url = f"{server.url}/s/weather-single/{session}"
    tools = [{"name": "get_weather", "input_schema": TOOL_PARAMETERS}]
    with anthropic.Anthropic(base_url=url, api_key="k") as client:
        with client.messages.stream(
            model="claude-sonnet-4-6",
            max_tokens=64,
            messages=PARIS,
            tools=tools,
        ) as stream:
            deltas = [e for e in stream if e.type == "message_delta"]
        message = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=64,
            messages=PARIS,
            tools=tools,
        )
    usage = deltas[0].usage
    assert usage.input_tokens and usage.cache_creation_input_tokens == 0
    assert usage.cache_read_input_tokens == 0
    dumped = message.model_dump()  # typed or extra, as this SDK version has it
    assert "stop_details" in dumped and dumped["stop_details"] is None
    raw = message.usage
    assert raw.service_tier == "standard" and raw.cache_creation is not None
    assert raw.cache_creation.ephemeral_5m_input_tokens == 0
    tool_use = message.content[0]
    assert tool_use.type == "tool_use" and dumped["content"][0]["caller"] == {"type": "direct"}


def test_anthropic_429_rate_limit_headers_agree_with_retry_after(
    server: ServerProcess, session: str
) -> None:
    body = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": PARIS}
    r = httpx.post(f"{server.url}/s/slow-down/{session}/v1/messages", json=body)
    assert r.status_code == 429
    retry = float(r.headers["retry-after"])
    assert r.headers["anthropic-ratelimit-requests-remaining"] == "0"
    reset = r.headers["anthropic-ratelimit-requests-reset"]
    assert reset == f"2025-01-01T00:00:{int(retry):02d}Z"
    assert re.fullmatch(r"req_011C\w{20}", r.json()["request_id"]) and r.headers["request-id"]
    o = httpx.post(f"{server.openai_url('slow-down', session + 'o')}/chat/completions", json=body)
    assert o.headers["x-ratelimit-remaining-requests"] == "0"
    assert o.headers["x-ratelimit-reset-requests"] == "3s"


def test_unknown_route_404_has_a_request_id(server: ServerProcess) -> None:
    r = httpx.post(
        f"{server.url}/v1/messages/count_token",
        json={},
        headers={"anthropic-version": "2023-06-01"},
    )
    assert r.status_code == 404 and r.json()["request_id"] == r.headers["request-id"] != ""
    o = httpx.post(f"{server.url}/v1/chat/completion", json={})
    assert o.status_code == 404 and o.json()["error"]["code"] == "route_not_found"
    assert o.headers["x-request-id"] and o.headers["x-ratelimit-remaining-requests"]


def test_byte_stable_across_servers(server: ServerProcess) -> None:
    """Every new field is deterministic: two requests, byte-identical bodies and headers."""
    body = {"model": "gpt-4o", "messages": PARIS, "tools": TOOLS}
    # Two sessions: a second request in one session is a retry, with fresh ids.
    a, b = (
        httpx.post(f"{server.openai_url('weather-single', name)}/chat/completions", json=body)
        for name in ("stable-a", "stable-b")
    )
    assert a.content == b.content
    assert (
        json.loads(a.content)["system_fingerprint"] == json.loads(b.content)["system_fingerprint"]
    )
