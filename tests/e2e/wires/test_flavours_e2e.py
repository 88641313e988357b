"""The Chat Completions flavours (docs/flavours.md), through real HTTP with the `openai` SDK
pointed at each, the way the providers document their use; streams are checked with the
SDK's own accumulator (`client.chat.completions.stream`, ChatCompletionStreamState)."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState

from mockllm.core.scenario import FLAVORS
from tests.support import ServerProcess, running_server
from tests.support.hypothesis_profiles import examples

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "location": {"type": "string"}},
        },
    },
}
ASK = {"role": "user", "content": "What is the weather?"}
# Each flavour's call ids, as its provider writes them (docs/flavours.md).
CALL_IDS = {
    "openai": r"call_[A-Za-z0-9]{24}",
    "deepseek": r"call_00_[A-Za-z0-9]{24}",
    "qwen": r"call_[0-9a-f]{22}",
    "kimi": r"functions\.get_weather:0",
    "glm": r"call_[A-Za-z0-9]{24}",
    "doubao": r"call_[A-Za-z0-9]{24}",
    "minimax": r"call_[A-Za-z0-9]{24}",
    "mistral": r"[A-Za-z0-9]{9}",
    "azure": r"call_[A-Za-z0-9]{24}",
}


def client(server: ServerProcess, flavor: str, scenario: str, session: str) -> openai.OpenAI:
    """The SDK, its base URL naming the flavour: `/f/FLAVOR/s/SCENARIO/SESSION/v1`."""
    base = f"{server.url}/f/{flavor}/s/{scenario}/{session}/v1"
    return openai.OpenAI(base_url=base, api_key="k", max_retries=0)


def result(call: Any, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call.id, "content": content}


@pytest.mark.parametrize("flavor", FLAVORS)
def test_every_flavour_serves_the_sdk_and_its_stream_accumulator(
    server: ServerProcess, session: str, flavor: str
) -> None:
    # Two sessions: a second ask in one session is attempt 2, with fresh call ids.
    with client(server, flavor, "weather-single", session) as sdk:
        whole = sdk.chat.completions.create(model="m", messages=[ASK], tools=[WEATHER])
    with (
        client(server, flavor, "weather-single", f"{session}-s") as sdk,
        sdk.chat.completions.stream(model="m", messages=[ASK], tools=[WEATHER]) as s,
    ):
        for _ in s:
            pass
        streamed = s.get_final_completion()
    for completion in (whole, streamed):
        (call,) = completion.choices[0].message.tool_calls or []
        assert re.fullmatch(CALL_IDS[flavor], call.id), call.id
        assert (call.function.name, json.loads(call.function.arguments)) == (
            "get_weather",
            {"city": "Paris"},
        )
        assert completion.choices[0].finish_reason == "tool_calls"
    assert streamed.choices[0].message.tool_calls[0].id == whole.choices[0].message.tool_calls[0].id


@pytest.mark.parametrize("flavor", FLAVORS)
def test_every_flavour_answers_byte_for_byte_the_same_twice(
    server: ServerProcess, session: str, flavor: str
) -> None:
    bodies = []
    for i, stream in enumerate((False, True, False, True)):  # each a first attempt
        url = f"{server.url}/f/{flavor}/s/weather-single/{session}-{i}/v1/chat/completions"
        body = {"model": "m", "messages": [ASK], "tools": [WEATHER], "stream": stream}
        bodies.append(httpx.post(url, json=body).content)
    assert bodies[0] == bodies[2] and bodies[1] == bodies[3]


def test_one_server_serves_several_flavours_at_once(server: ServerProcess, session: str) -> None:
    ids = {}
    for flavor in ("openai", "deepseek", "kimi"):
        with client(server, flavor, "weather-single", f"{session}-{flavor}") as sdk:
            reply = sdk.chat.completions.create(model="m", messages=[ASK], tools=[WEATHER])
            ids[flavor] = (reply.choices[0].message.tool_calls or [])[0].id
    assert ids["deepseek"].startswith("call_00_") and ids["kimi"] == "functions.get_weather:0"
    assert ids["openai"].startswith("call_") and not ids["openai"].startswith("call_00_")


# --- Qwen: split tool-call chunks, later pieces with an empty id -------------------------


def qwen_chunks(server: ServerProcess, session: str, **extra: Any) -> list[Any]:
    with client(server, "qwen", "qwen-split-tool-chunks", session) as sdk:
        stream = sdk.chat.completions.create(
            model="qwen-plus", messages=[ASK], tools=[WEATHER], stream=True, **extra
        )
        return list(stream)


def test_qwen_streams_each_call_split_with_empty_ids_after_the_first_piece(
    server: ServerProcess, session: str
) -> None:
    chunks = qwen_chunks(server, session)
    pieces = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    heads = [p for p in pieces if p.function.name]
    rest = [p for p in pieces if not p.function.name]
    assert [(p.index, p.function.arguments) for p in heads] == [(0, ""), (1, "")]
    assert all(re.fullmatch(CALL_IDS["qwen"], p.id or "") for p in heads)
    assert rest and all(p.id == "" and p.type == "function" for p in rest)
    assert chunks[0].system_fingerprint is None and chunks[0].id.startswith("chatcmpl-")

    # A harness that starts a call on every piece carrying an id key breaks them apart;
    # one keyed on index (the SDK's accumulator) gets both calls whole.
    naive: list[dict[str, str]] = []
    for p in pieces:
        if p.id is not None:
            naive.append({"id": p.id, "arguments": ""})
        naive[-1]["arguments"] += p.function.arguments or ""
    assert len(naive) == len(pieces) and len(naive) > 2
    state = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(chunk)
    calls = state.get_final_completion().choices[0].message.tool_calls or []
    assert [json.loads(c.function.arguments) for c in calls] == [{"city": "杭州"}, {"city": "北京"}]
    assert [c.id for c in calls] == [h.id for h in heads]


def test_qwen_thinks_only_when_asked_and_only_streamed(server: ServerProcess, session: str) -> None:
    plain = qwen_chunks(server, session + "-plain")
    assert not any(
        getattr(c.choices[0].delta, "reasoning_content", None) for c in plain if c.choices
    )
    thinking = qwen_chunks(server, session + "-think", extra_body={"enable_thinking": True})
    deltas = [c.choices[0].delta for c in thinking if c.choices]
    reasoning = "".join(getattr(d, "reasoning_content", None) or "" for d in deltas)
    assert reasoning.startswith("用户问两个城市的天气")
    sdk = client(server, "qwen", "qwen-split-tool-chunks", session + "-nostream")
    with sdk, pytest.raises(openai.BadRequestError) as refused:
        sdk.chat.completions.create(
            model="qwen-plus",
            messages=[ASK],
            tools=[WEATHER],
            extra_body={"enable_thinking": True},
        )
    assert refused.value.body == {
        "code": "invalid_parameter_error",
        "param": None,
        "message": "parameter.enable_thinking must be set to false for non-streaming calls",
        "type": "invalid_request_error",
    }
    raw = refused.value.response.json()
    assert raw["request_id"] and raw["id"] == "chatcmpl-" + raw["request_id"]


# --- Kimi: functions.NAME:IDX ids, and its thinking rule (both sides) ---------------------


def kimi_loop(
    server: ServerProcess, session: str, keep_reasoning: bool, model: str = "kimi-k2-thinking"
) -> list[str]:
    """Walks kimi-tool-ids as a harness would; returns the call ids it was given."""
    ids: list[str] = []
    messages: list[Any] = [ASK]
    with client(server, "kimi", "kimi-tool-ids", session) as sdk:
        for content in ("18 °C", "16 °C"):
            reply = sdk.chat.completions.create(model=model, messages=messages, tools=[WEATHER])
            message = reply.choices[0].message
            (call,) = message.tool_calls or []
            ids.append(call.id)
            sent = message.model_dump(exclude_none=True)
            if not keep_reasoning:
                sent.pop("reasoning_content", None)
            messages += [sent, result(call, content)]
        final = sdk.chat.completions.create(model=model, messages=messages, tools=[WEATHER])
    assert final.choices[0].message.content == "Paris and Lyon both have mild weather today."
    return ids


def test_kimi_ids_count_the_conversations_calls(server: ServerProcess, session: str) -> None:
    assert kimi_loop(server, session, keep_reasoning=True) == [
        "functions.get_weather:0",
        "functions.get_weather:1",
    ]


def test_kimi_refuses_a_harness_that_drops_the_reasoning(
    server: ServerProcess, session: str
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        kimi_loop(server, session, keep_reasoning=False)
    assert refused.value.body == {
        "message": "thinking is enabled but reasoning_content is missing in assistant tool call "
        "message at index 1",
        "type": "invalid_request_error",
    }
    assert refused.value.response.headers["x-mockllm-rule"] == "kimi.reasoning_content_missing"


def test_kimi_without_thinking_takes_the_history_without_reasoning(
    server: ServerProcess, session: str
) -> None:
    assert kimi_loop(server, session, keep_reasoning=False, model="moonshot-v1-8k")


def test_kimi_stream_carries_usage_in_its_last_choice(server: ServerProcess, session: str) -> None:
    url = f"{server.url}/f/kimi/s/weather-single/{session}/v1/chat/completions"
    body = {"model": "kimi-k2.5", "messages": [ASK], "tools": [WEATHER], "stream": True}
    frames = [
        json.loads(line[6:])
        for line in httpx.post(url, json=body).text.splitlines()
        if line.startswith("data: {")
    ]
    assert all(f["choices"] for f in frames) and "usage" not in frames[-1]
    assert frames[-1]["choices"][0]["usage"]["total_tokens"] > 0


# --- DeepSeek thinking mode, both texts, both sides ---------------------------------------


@pytest.mark.parametrize(
    ("model", "text"),
    [
        (
            "deepseek-v4-pro",
            "The `reasoning_content` in the thinking mode must be passed back to the API.",
        ),
        (
            "deepseek-reasoner",
            "Missing `reasoning_content` field in the assistant message at message index 1. For "
            "more information, please refer to "
            "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
        ),
    ],
)
def test_deepseek_thinking_mode_both_sides(
    server: ServerProcess, session: str, model: str, text: str
) -> None:
    def loop(keep: bool, who: str) -> Any:
        with client(server, "deepseek", "deepseek-reasoning", f"{session}-{who}") as sdk:
            first = sdk.chat.completions.create(model=model, messages=[ASK], tools=[WEATHER])
            message = first.choices[0].message
            sent = message.model_dump(exclude_none=True)
            if not keep:
                sent.pop("reasoning_content", None)
            call = (message.tool_calls or [])[0]
            history = [ASK, sent, result(call, "18 °C")]
            return sdk.chat.completions.create(model=model, messages=history, tools=[WEATHER])

    assert loop(True, "keeps").choices[0].message.content == "It is 18 °C and sunny in Paris."
    with pytest.raises(openai.BadRequestError) as refused:
        loop(False, "drops")
    assert refused.value.body == {
        "message": text,
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }


# --- GLM: arguments whole unless tool_stream ---------------------------------------------


def glm_frames(server: ServerProcess, session: str, **extra: Any) -> list[dict[str, Any]]:
    url = f"{server.url}/f/glm/s/glm-whole-arguments/{session}/v1/chat/completions"
    body = {"model": "glm-4.7", "messages": [ASK], "tools": [WEATHER], "stream": True, **extra}
    text = httpx.post(url, json=body).text
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


def test_glm_sends_a_calls_arguments_whole_unless_tool_stream(
    server: ServerProcess, session: str
) -> None:
    def pieces(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [tc for f in frames for tc in f["choices"][0]["delta"].get("tool_calls", [])]

    whole = pieces(glm_frames(server, session + "-whole"))
    assert len(whole) == 1
    assert json.loads(whole[0]["function"]["arguments"]) == {"location": "北京", "unit": "celsius"}
    streamed = glm_frames(server, session + "-stream", tool_stream=True)
    assert len(pieces(streamed)) > 2 and pieces(streamed)[0]["function"]["arguments"] == ""
    last = streamed[-1]
    assert last["choices"][0]["finish_reason"] == "tool_calls" and last["usage"]["total_tokens"]
    assert any(f["choices"][0]["delta"].get("reasoning_content") for f in streamed)
    sdk = client(server, "glm", "glm-whole-arguments", session + "-sdk")
    with sdk, sdk.chat.completions.stream(model="glm-4.7", messages=[ASK], tools=[WEATHER]) as s:
        final = s.get_final_completion()
    call = (final.choices[0].message.tool_calls or [])[0]
    assert json.loads(call.function.arguments) == {"location": "北京", "unit": "celsius"}


# --- Doubao: Ark's envelope, and its mid-stream error chunk ------------------------------


def test_doubao_errors_in_arks_envelope(server: ServerProcess, session: str) -> None:
    orphan = {"role": "tool", "tool_call_id": "x", "content": "18"}
    sdk = client(server, "doubao", "hello", session)
    with sdk, pytest.raises(openai.BadRequestError) as refused:
        sdk.chat.completions.create(model="doubao-seed-1-6-251015", messages=[ASK, orphan])
    body = refused.value.body
    assert isinstance(body, dict)
    assert (body["code"], body["param"], body["type"]) == ("InvalidParameter", "", "BadRequest")
    assert re.search(r" Request id: 021764547200000[0-9a-f]{38}$", body["message"]), body
    missing = httpx.post(
        f"{server.url}/f/doubao/s/nosuch/{session}/v1/chat/completions",
        json={"model": "m", "messages": [ASK]},
    )
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "NotFound"


def test_doubao_fails_midstream_with_a_data_chunk_then_serves_the_retry(
    server: ServerProcess, session: str
) -> None:
    with client(server, "doubao", "doubao-stream-error", session) as sdk:
        with (
            pytest.raises(openai.APIError) as failed,
            sdk.chat.completions.stream(model="doubao-seed", messages=[ASK], tools=[WEATHER]) as s,
        ):
            for _ in s:
                pass
        assert failed.value.body is not None
        error = failed.value.body
        assert isinstance(error, dict) and error["type"] == "InternalServerError"
        assert error["code"] == "InternalServiceError" and "Request id: " in error["message"]
        with sdk.chat.completions.stream(model="doubao-seed", messages=[ASK], tools=[WEATHER]) as s:
            retried = s.get_final_completion()
    assert (retried.choices[0].message.tool_calls or [])[0].function.name == "get_weather"


# --- MiniMax: <think> in content, or reasoning_details ------------------------------------


def test_minimax_writes_thinking_in_content_unless_split(
    server: ServerProcess, session: str
) -> None:
    with client(server, "minimax", "minimax-think-tags", session + "-tags") as sdk:
        tags = sdk.chat.completions.create(model="MiniMax-M2", messages=[ASK], tools=[WEATHER])
        with sdk.chat.completions.stream(model="MiniMax-M2", messages=[ASK], tools=[WEATHER]) as s:
            streamed = s.get_final_completion()
    for reply in (tags, streamed):
        assert reply.choices[0].message.content == (
            "<think>\nThe user asks about Tokyo; call get_weather.\n</think>\n\n"
        )
    with client(server, "minimax", "minimax-think-tags", session + "-split") as sdk:
        split = sdk.chat.completions.create(
            model="MiniMax-M2",
            messages=[ASK],
            tools=[WEATHER],
            extra_body={"reasoning_split": True},
        )
    message = split.choices[0].message
    assert not message.content
    details = message.model_dump()["reasoning_details"]
    assert details[0]["text"] == "The user asks about Tokyo; call get_weather."


# --- URL forms and precedence -------------------------------------------------------------


def test_an_unknown_flavour_is_a_404_naming_the_flavours(
    server: ServerProcess, session: str
) -> None:
    r = httpx.post(
        f"{server.url}/f/qwne/s/hello/{session}/v1/chat/completions",
        json={"model": "m", "messages": [ASK]},
    )
    assert r.status_code == 404
    message = r.json()["error"]["message"]
    assert "no flavour 'qwne'; did you mean 'qwen'?" in message and "minimax" in message
    assert server.requests(session=session)[-1]["response"]["status"] == 404


def test_the_url_flavour_outranks_the_scenarios_which_outranks_the_server(
    session: str,
) -> None:
    with running_server("--flavor", "glm") as s:

        def first_id(prefix: str) -> str:
            with openai.OpenAI(base_url=f"{s.url}{prefix}/v1", api_key="k", max_retries=0) as sdk:
                reply = sdk.chat.completions.create(model="m", messages=[ASK], tools=[WEATHER])
            return (reply.choices[0].message.tool_calls or [])[0].id

        assert first_id(f"/s/kimi-tool-ids/{session}-a") == "functions.get_weather:0"
        assert first_id(f"/f/deepseek/s/kimi-tool-ids/{session}-b").startswith("call_00_")
        glm = httpx.post(
            f"{s.url}/s/weather-single/{session}-c/v1/chat/completions",
            json={"model": "m", "messages": [ASK], "tools": [WEATHER]},
        ).json()
        assert "system_fingerprint" not in glm and "service_tier" not in glm
        models = httpx.get(f"{s.url}/f/qwen/v1/models")
        assert models.status_code == 200 and models.json()["object"] == "list"


@settings(max_examples=examples(60), suppress_health_check=list(HealthCheck))
@given(
    flavor=st.sampled_from([*FLAVORS, "x", "", "QWEN", "qwen%2F..", "../s"]),
    prefix=st.sampled_from(["", "/s/hello", "/s/hello/sess", "/s/weather-single/h"]),
    params=st.dictionaries(
        st.sampled_from(["enable_thinking", "tool_stream", "reasoning_split", "thinking"]),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.text(max_size=5),
            st.dictionaries(
                st.sampled_from(["type", "budget"]),
                st.sampled_from(["enabled", "disabled", 1, None]),
            ),
            st.lists(st.integers(), max_size=2),
        ),
    ),
    stream=st.booleans(),
)
def test_hostile_flavour_urls_and_parameters_never_fail_the_server(
    server: ServerProcess, flavor: str, prefix: str, params: dict[str, Any], stream: bool
) -> None:
    body = {"model": "qwen3-32b", "messages": [ASK], "tools": [WEATHER], "stream": stream, **params}
    r = httpx.post(f"{server.url}/f/{flavor}{prefix}/v1/chat/completions", json=body)
    assert r.status_code < 500, r.text
    if r.status_code >= 400:  # Mistral's envelope is flat: {"object": "error", "message", …}
        assert "error" in r.json() or r.json()["object"] == "error"
    elif stream:
        assert r.text.rstrip().endswith("data: [DONE]")
    else:
        assert r.json()["choices"]


# --- faults, each provider's way -----------------------------------------------------------

RATE_LIMITED: dict[str, dict[str, Any]] = {
    "openai": {"type": "requests", "code": "rate_limit_exceeded"},
    "deepseek": {"type": "requests", "code": "rate_limit_exceeded"},
    "minimax": {"type": "requests", "code": "rate_limit_exceeded"},
    "qwen": {"type": "limit_requests", "code": "limit_requests", "param": None},
    "kimi": {"type": "rate_limit_reached_error"},
    "glm": {"code": "1302"},
    "doubao": {
        "type": "TooManyRequests",
        "code": "RateLimitExceeded.EndpointRPMExceeded",
        "param": "",
    },
    "mistral": {"type": "rate_limited", "code": "1300", "param": None, "object": "error"},
    "azure": {"code": "429"},
}


@pytest.mark.parametrize("flavor", FLAVORS)
def test_a_scripted_429_arrives_in_each_providers_envelope(
    server: ServerProcess, session: str, flavor: str
) -> None:
    url = f"{server.url}/f/{flavor}/s/rate-limited/{session}/v1/chat/completions"
    r = httpx.post(url, json={"model": "m", "messages": [ASK], "tools": [WEATHER]})
    assert r.status_code == 429 and r.headers["retry-after-ms"] == "20"
    error = r.json() if flavor == "mistral" else r.json()["error"]  # Mistral's is flat
    assert {k: error[k] for k in RATE_LIMITED[flavor]} == RATE_LIMITED[flavor]
    keys = {
        "kimi": {"message", "type"},
        "glm": {"code", "message"},
        "azure": {"code", "message"},
        "mistral": {"object", "message", "type", "param", "code"},
    }
    assert set(error) == keys.get(flavor, {"message", "type", "param", "code"})
    with (
        client(server, flavor, "rate-limited", session) as sdk,
        pytest.raises(openai.RateLimitError),
    ):
        sdk.chat.completions.create(model="m", messages=[ASK], tools=[WEATHER])


def test_a_cut_inside_the_arguments_falls_inside_glms_whole_call(
    server: ServerProcess, session: str
) -> None:
    """GLM sends no argument fragments: the cut goes inside the one chunk that carries them."""
    url = f"{server.url}/f/glm/s/stream-cut/{session}/v1/chat/completions"
    body = {"model": "glm-4.7", "messages": [ASK], "tools": [WEATHER], "stream": True}
    with pytest.raises(httpx.RemoteProtocolError), httpx.stream("POST", url, json=body) as r:
        for _ in r.iter_raw():
            pass
    response = server.last(session)["response"]
    assert response["fault"]["kind"] == "truncate"
    assert response["body"].endswith('"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\",')
    sdk = client(server, "glm", "stream-cut", session)
    with sdk, sdk.chat.completions.stream(model="glm-4.7", messages=[ASK], tools=[WEATHER]) as s:
        retried = s.get_final_completion()
    call = (retried.choices[0].message.tool_calls or [])[0]
    assert json.loads(call.function.arguments) == {"city": "Paris", "unit": "celsius"}


# --- every flavour rule, both sides: refused in the provider's shape, or served ----------


def called(call_id: str, **extra: Any) -> list[dict[str, Any]]:
    """A history after one get_weather call with this id (and `extra` on the assistant)."""
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
    }
    assistant = {"role": "assistant", "content": None, "tool_calls": [call], **extra}
    return [ASK, assistant, {"role": "tool", "tool_call_id": call_id, "content": "18 °C"}]


KEPT = {"reasoning_content": "I need the weather first."}
D1_V4 = "The `reasoning_content` in the thinking mode must be passed back to the API."
K1_TEXT = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1"
)
Q1_TEXT = "parameter.enable_thinking must be set to false for non-streaming calls"
DS_400 = {"type": "invalid_request_error", "param": None, "code": "invalid_request_error"}
# (rule, flavour, scenario, the request that breaks it, the provider's error, requests that
# keep it). The scenarios are tests/scenarios/rules-*.yaml; CALL stands for the id of the
# call the scenario's first turn served (the history must match it, or it has diverged).
RULE_SIDES: list[tuple[str, str, str, dict[str, Any], dict[str, Any], list[dict[str, Any]]]] = [
    (
        "deepseek.reasoning_content_missing",  # D1
        "deepseek",
        "rules-deepseek",
        {"model": "deepseek-v4-pro", "messages": called("CALL")},
        {"message": D1_V4, **DS_400},
        [
            {"model": "deepseek-v4-pro", "messages": called("CALL", **KEPT)},
            {
                "model": "deepseek-v4-pro",
                "messages": called("CALL"),
                "thinking": {"type": "disabled"},
            },
        ],
    ),
    (
        "deepseek.forced_tool_choice",  # D5
        "deepseek",
        "rules-deepseek",
        {"model": "deepseek-reasoner", "messages": [ASK], "tool_choice": "required"},
        {"message": "Thinking mode does not support this tool_choice", **DS_400},
        [
            {"model": "deepseek-reasoner", "messages": [ASK], "tool_choice": "auto"},
            {"model": "deepseek-chat", "messages": [ASK], "tool_choice": "required"},
        ],
    ),
    (
        "kimi.reasoning_content_missing",  # K1
        "kimi",
        "rules-kimi",
        {"model": "kimi-k2.6", "messages": called("CALL")},
        {"message": K1_TEXT, "type": "invalid_request_error"},
        [
            {"model": "kimi-k2.6", "messages": called("CALL", **KEPT)},
            {
                "model": "kimi-k2.6",
                "messages": called("CALL"),
                "thinking": {"type": "disabled"},
            },
            {"model": "moonshot-v1-8k", "messages": called("CALL")},
        ],
    ),
    (
        "qwen.thinking_requires_stream",  # Q1
        "qwen",
        "rules-qwen",
        {"model": "qwen3-32b", "messages": [ASK]},  # thinks unless told not to
        {
            "code": "invalid_parameter_error",
            "param": None,
            "message": Q1_TEXT,
            "type": "invalid_request_error",
        },
        [
            {"model": "qwen3-32b", "messages": [ASK], "enable_thinking": False},
            {"model": "qwen3-32b", "messages": [ASK], "stream": True},
            {"model": "qwen-plus", "messages": [ASK]},
        ],
    ),
]


@pytest.mark.parametrize(
    ("rule", "flavor", "scenario", "broken", "error", "kept"),
    RULE_SIDES,
    ids=[side[0] for side in RULE_SIDES],
)
def test_each_flavour_rule_refuses_in_its_providers_shape_and_serves_what_keeps_it(
    server: ServerProcess,
    session: str,
    rule: str,
    flavor: str,
    scenario: str,
    broken: dict[str, Any],
    error: dict[str, Any],
    kept: list[dict[str, Any]],
) -> None:
    tools = {"tools": [WEATHER]}
    bodies = json.dumps([broken, kept])
    if '"CALL"' in bodies:
        url = f"{server.url}/f/{flavor}/s/{scenario}/{session}-first/v1/chat/completions"
        first = httpx.post(url, json={"model": broken["model"], "messages": [ASK], **tools})
        served_id = first.json()["choices"][0]["message"]["tool_calls"][0]["id"]
        broken, kept = json.loads(bodies.replace('"CALL"', json.dumps(served_id)))
    refused = httpx.post(
        f"{server.url}/f/{flavor}/s/{scenario}/{session}-no/v1/chat/completions",
        json={**broken, **tools},
    )
    assert refused.status_code == 400 and refused.json()["error"] == error, refused.text
    assert server.last(f"{session}-no")["violations"][0]["rule"] == rule
    for i, body in enumerate(kept):
        served = httpx.post(
            f"{server.url}/f/{flavor}/s/{scenario}/{session}-{i}/v1/chat/completions",
            json={**body, **tools},
        )
        assert served.status_code == 200, (body, served.text)
        assert server.last(f"{session}-{i}")["violations"] == [], body
