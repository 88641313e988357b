"""The providers' own integrations against their flavours (docs/flavours.md): LangChain's
langchain-deepseek (ChatDeepSeek) and langchain-qwq (ChatQwen), and Z.ai's zai-sdk, each
pointed at a `/f/FLAVOR/` base URL as its users point it at the provider."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_deepseek import ChatDeepSeek
from langchain_openai.chat_models.base import OpenAIInvalidRequestError
from langchain_qwq import ChatQwen
from zai import ZaiClient

from ..support import ServerProcess


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
