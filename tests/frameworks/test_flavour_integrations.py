"""The providers' own integrations against their flavours (docs/flavours.md): LangChain's
langchain-deepseek (ChatDeepSeek) and langchain-qwq (ChatQwen), Z.ai's zai-sdk, Volcengine's
Ark SDK (volcengine-ark-runtime), and LiteLLM's `moonshot/` and `minimax/` providers, each
pointed at a `/f/FLAVOR/` base URL as its users point it at the provider."""

from __future__ import annotations

import json
from typing import Any

import litellm
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_deepseek import ChatDeepSeek
from langchain_openai.chat_models.base import OpenAIInvalidRequestError
from langchain_qwq import ChatQwen
from litellm.exceptions import BadRequestError
from volcenginesdkarkruntime import Ark
from volcenginesdkarkruntime._exceptions import ArkAPIError, ArkBadRequestError, ArkNotFoundError
from zai import ZaiClient

from tests.support import ServerProcess


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return "18 °C and sunny"


D1_V3 = (
    "Missing `reasoning_content` field in the assistant message at message index 1. For more "
    "information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
)


class KeepsReasoning(ChatDeepSeek):
    """The usual workaround: put each AI message's reasoning_content back into the payload
    (langchain-deepseek reads it into additional_kwargs but does not send it back)."""

    def _get_request_payload(self, input_: Any, *, stop: Any = None, **kwargs: Any) -> dict:  # type: ignore[type-arg]
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        sent = self._convert_input(input_).to_messages()
        for out, message in zip(payload["messages"], sent, strict=True):
            reasoning = message.additional_kwargs.get("reasoning_content")
            if isinstance(message, AIMessage) and isinstance(reasoning, str):
                out["reasoning_content"] = reasoning
        return payload


def deepseek_loop(model: ChatDeepSeek, streaming: bool) -> BaseMessage:
    chat = model.bind_tools([get_weather])
    history: list[BaseMessage] = [HumanMessage("What is the weather in Paris?")]
    if streaming:
        first: Any = None
        for chunk in chat.stream(history):
            first = chunk if first is None else first + chunk
    else:
        first = chat.invoke(history)
    assert first.additional_kwargs["reasoning_content"].startswith("The user wants")
    (call,) = first.tool_calls
    assert call["id"].startswith("call_00_") and call["args"] == {"city": "Paris"}
    history += [first, ToolMessage(get_weather.invoke(call["args"]), tool_call_id=call["id"])]
    return chat.invoke(history)


@pytest.mark.parametrize("streaming", [False, True])
def test_langchain_deepseek_drops_reasoning_content_and_gets_deepseeks_400(
    server: ServerProcess, session: str, streaming: bool
) -> None:
    base = f"{server.url}/f/deepseek/s/deepseek-reasoning/{session}"
    model = ChatDeepSeek(model="deepseek-reasoner", base_url=base, api_key="k", max_retries=0)
    with pytest.raises(OpenAIInvalidRequestError) as refused:
        deepseek_loop(model, streaming)
    assert D1_V3 in str(refused.value)
    assert server.last(session)["violations"][0]["rule"] == "deepseek.reasoning_content_missing"


@pytest.mark.parametrize("streaming", [False, True])
def test_langchain_deepseek_that_sends_the_reasoning_back_passes(
    server: ServerProcess, session: str, streaming: bool
) -> None:
    base = f"{server.url}/f/deepseek/s/deepseek-reasoning/{session}"
    model = KeepsReasoning(model="deepseek-reasoner", base_url=base, api_key="k", max_retries=0)
    assert deepseek_loop(model, streaming).content == "It is 18 °C and sunny in Paris."


def test_langchain_qwq_joins_qwens_split_parallel_calls(
    server: ServerProcess, session: str
) -> None:
    base = f"{server.url}/f/qwen/s/qwen-split-tool-chunks/{session}"
    model = ChatQwen(
        model="qwen-plus", base_url=base, api_key="k", max_retries=0, enable_thinking=True
    )
    whole: Any = None
    for chunk in model.bind_tools([get_weather]).stream([HumanMessage("杭州和北京天气?")]):
        whole = chunk if whole is None else whole + chunk
    assert [c["args"] for c in whole.tool_calls] == [{"city": "杭州"}, {"city": "北京"}]
    assert not whole.invalid_tool_calls
    assert whole.additional_kwargs["reasoning_content"].startswith("用户问两个城市的天气")
    sent = server.last(session)["request"]
    assert sent["enable_thinking"] is True and sent["stream"] is True


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    },
}


@pytest.mark.parametrize("tool_stream", [False, True])
def test_zai_sdk_reads_glm_whole_and_streamed_arguments(
    server: ServerProcess, session: str, tool_stream: bool
) -> None:
    base = f"{server.url}/f/glm/s/glm-whole-arguments/{session}-{tool_stream}/v1"
    client = ZaiClient(api_key="id.secret", base_url=base, max_retries=0)
    ask = [{"role": "user", "content": "北京天气怎么样"}]
    pieces: dict[int, dict[str, str]] = {}
    chunks = 0
    stream = client.chat.completions.create(
        model="glm-4.7", messages=ask, tools=[WEATHER], stream=True, tool_stream=tool_stream
    )
    for chunk in stream:
        for call in chunk.choices[0].delta.tool_calls or []:
            chunks += 1
            got = pieces.setdefault(call.index, {"name": "", "arguments": ""})
            got["name"] += call.function.name or ""
            got["arguments"] += call.function.arguments or ""
    assert chunks == (4 if tool_stream else 1)
    assert json.loads(pieces[0]["arguments"]) == {"location": "北京", "unit": "celsius"}
    whole = client.chat.completions.create(model="glm-4.7", messages=ask, tools=[WEATHER])
    message = whole.choices[0].message
    assert message.reasoning_content == "用户想知道北京的天气，调用 get_weather。"


# --- Doubao: Volcengine's Ark SDK reads Ark's envelope, and its mid-stream error chunk ---


def ark(server: ServerProcess, scenario: str, session: str) -> Ark:
    return Ark(
        base_url=f"{server.url}/f/doubao/s/{scenario}/{session}/v1", api_key="k", max_retries=0
    )


def test_ark_sdk_reads_arks_error_envelope(server: ServerProcess, session: str) -> None:
    orphan = {"role": "tool", "tool_call_id": "x", "content": "18"}
    ask = {"role": "user", "content": "上海天气?"}
    with ark(server, "hello", session) as client, pytest.raises(ArkBadRequestError) as refused:
        client.chat.completions.create(model="doubao-seed-1-6-251015", messages=[ask, orphan])
    # The SDK fills code/param/type from Ark's `error` object (an OpenAI one has no such
    # `type` word, and `param` is null there, "" here).
    error = refused.value
    assert (error.code, error.type, error.param) == ("InvalidParameter", "BadRequest", "")
    assert "Request id: 021764547200000" in error.message
    with ark(server, "nosuch", session) as client, pytest.raises(ArkNotFoundError) as missing:
        client.chat.completions.create(model="ep-x", messages=[ask])
    assert (missing.value.code, missing.value.type) == (
        "InvalidEndpointOrModel.NotFound",
        "NotFound",
    )


def test_ark_sdk_raises_the_midstream_error_chunk_and_the_retry_streams_reasoning(
    server: ServerProcess, session: str
) -> None:
    client = ark(server, "doubao-stream-error", session)
    ask = [{"role": "user", "content": "上海天气?"}]
    tools = [WEATHER]
    seen = 0
    with client, pytest.raises(ArkAPIError) as failed:
        for _ in client.chat.completions.create(
            model="doubao-seed-1-6-251015", messages=ask, tools=tools, stream=True
        ):
            seen += 1
    # Ark's SDK turns a `data: {"error": …}` chunk into an error carrying Ark's fields.
    assert seen > 0 and not isinstance(failed.value, ArkBadRequestError)
    assert (failed.value.code, failed.value.type) == ("InternalServiceError", "InternalServerError")
    assert "Request id: 021" in failed.value.message
    with ark(server, "doubao-stream-error", session) as client:
        chunks = list(
            client.chat.completions.create(
                model="doubao-seed-1-6-251015",
                messages=ask,
                tools=tools,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert deltas[0].reasoning_content == "需要查询上海的天气。"
    arguments = "".join(tc.function.arguments or "" for d in deltas for tc in d.tool_calls or [])
    assert json.loads(arguments) == {"city": "上海"}
    assert chunks[0].id.startswith("021764547200000")
    usage = chunks[-1].usage
    assert usage is not None and usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens


# --- Kimi through LiteLLM's moonshot/ provider ---------------------------------------------


def litellm_kimi_loop(server: ServerProcess, session: str, model: str, keep: bool) -> list[str]:
    """kimi-tool-ids walked as a LiteLLM user writes the loop; returns the call ids."""
    base = f"{server.url}/f/kimi/s/kimi-tool-ids/{session}/v1"
    tools = [WEATHER]
    messages: list[Any] = [{"role": "user", "content": "Paris, then Lyon?"}]
    options = {"model": f"moonshot/{model}", "api_base": base, "api_key": "k", "num_retries": 0}
    ids = []
    for weather in ("18 °C", "16 °C"):
        message = litellm.completion(messages=messages, tools=tools, **options).choices[0].message
        assert message.reasoning_content  # read from Kimi's reasoning_content
        (call,) = message.tool_calls
        ids.append(call.id)
        sent = message.model_dump(exclude_none=True)
        if not keep:
            sent.pop("reasoning_content")
        messages += [sent, {"role": "tool", "tool_call_id": call.id, "content": weather}]
    final = litellm.completion(messages=messages, tools=tools, **options)
    assert final.choices[0].message.content == "Paris and Lyon both have mild weather today."
    return ids


def test_litellm_moonshot_keeps_kimis_ids_and_reasoning(
    server: ServerProcess, session: str
) -> None:
    ids = litellm_kimi_loop(server, session, "kimi-k2-thinking", keep=True)
    assert ids == ["functions.get_weather:0", "functions.get_weather:1"]
    assert server.last(session)["violations"] == []


def test_litellm_moonshot_history_without_reasoning_gets_kimis_400(
    server: ServerProcess, session: str
) -> None:
    # LiteLLM 1.110's model list does not mark kimi-k2-thinking as reasoning, so it sends
    # the history as given, and Kimi refuses it (K1).
    with pytest.raises(BadRequestError) as refused:
        litellm_kimi_loop(server, session, "kimi-k2-thinking", keep=False)
    assert (
        "thinking is enabled but reasoning_content is missing in assistant tool call message "
        "at index 1" in str(refused.value)
    )
    assert server.last(session)["violations"][0]["rule"] == "kimi.reasoning_content_missing"


def test_litellm_moonshot_fills_a_placeholder_for_the_models_it_knows_think(
    server: ServerProcess, session: str
) -> None:
    # For kimi-k2.6 LiteLLM writes `reasoning_content: " "` into an assistant tool-call
    # message that lacks it (MoonshotChatConfig.fill_reasoning_content): K1 passes.
    litellm_kimi_loop(server, session, "kimi-k2.6", keep=False)
    sent = server.last(session)["request"]["messages"]
    assert [m["reasoning_content"] for m in sent if m.get("tool_calls")] == [" ", " "]


# --- MiniMax through LiteLLM's minimax/ provider ---------------------------------------------


def litellm_minimax(
    server: ServerProcess, session: str, stream: bool, **extra: Any
) -> tuple[Any, dict[str, Any]]:
    """One call of minimax-think-tags, its result sent back as LiteLLM users do; returns
    the first reply's message and the assistant message LiteLLM sent MiniMax back."""
    base = f"{server.url}/f/minimax/s/minimax-think-tags/{session}/v1"
    tools = [WEATHER]
    messages: list[Any] = [{"role": "user", "content": "Weather in Tokyo?"}]
    options = {"model": "minimax/MiniMax-M2", "api_base": base, "api_key": "k", **extra}
    if stream:
        chunks = list(litellm.completion(messages=messages, tools=tools, stream=True, **options))
        reply: Any = litellm.stream_chunk_builder(chunks, messages=messages)
    else:
        reply = litellm.completion(messages=messages, tools=tools, **options)
    message = reply.choices[0].message
    (call,) = message.tool_calls
    messages += [
        message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "20 °C"},
    ]
    final = litellm.completion(messages=messages, tools=tools, **options)
    assert final.choices[0].message.content == "It is 20 °C in Tokyo."
    return message, server.last(session)["request"]["messages"][1]


THOUGHT = "The user asks about Tokyo; call get_weather."


def test_litellm_minimax_reads_the_think_tags_and_loses_them_from_the_history(
    server: ServerProcess, session: str
) -> None:
    # Not streamed, LiteLLM moves MiniMax's <think>…</think> out of `content` into
    # `reasoning_content`, and sends it back there, where MiniMax does not read it: the
    # <think> its docs say must be kept never goes back (docs/flavours.md#minimax).
    message, sent = litellm_minimax(server, session, stream=False)
    assert message.reasoning_content.strip() == THOUGHT and not message.content.strip()
    assert "<think>" not in sent["content"] and sent["reasoning_content"].strip() == THOUGHT
    # Streamed, stream_chunk_builder keeps the tags in content, and the history is whole.
    message, sent = litellm_minimax(server, session + "-s", stream=True)
    assert message.content == f"<think>\n{THOUGHT}\n</think>\n\n"
    assert sent["content"] == message.content


def test_litellm_minimax_reasoning_split_lands_in_provider_specific_fields(
    server: ServerProcess, session: str
) -> None:
    message, sent = litellm_minimax(server, session, stream=False, reasoning_split=True)
    (detail,) = message.provider_specific_fields["reasoning_details"]
    assert detail["type"] == "reasoning.text" and detail["text"] == THOUGHT
    # LiteLLM sends it back nested, not as the top-level reasoning_details MiniMax reads.
    assert "reasoning_details" not in sent
    assert sent["provider_specific_fields"]["reasoning_details"] == [detail]
