"""LangChain's integrations for Azure OpenAI (`AzureChatOpenAI`, docs/azure.md) and Mistral
(`ChatMistralAI`, docs/flavours.md#mistral), each pointed at mockllm as its users point it
at the provider: a tool loop each, the history as LangChain builds it."""

from __future__ import annotations

from langchain_core.messages import HumanMessage, ToolMessage
from langchain_mistralai import ChatMistralAI
from langchain_openai import AzureChatOpenAI

from mockllm import Client
from tests.support import ServerProcess

VERSION = "2024-10-21"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
TEMPERATURES = {"Paris": "18 °C", "Lyon": "21 °C"}


def test_azure_chat_openai_runs_its_tool_loop(server: ServerProcess, session: str) -> None:
    endpoint = Client(server.url).url("weather-single", session, api="azure")
    llm = AzureChatOpenAI(
        azure_endpoint=endpoint,
        azure_deployment="gpt-4o",
        api_version=VERSION,
        api_key="k",
        max_retries=0,
    ).bind_tools([WEATHER])
    ask = HumanMessage("What is the weather in Paris?")
    first = llm.invoke([ask])
    (call,) = first.tool_calls
    assert call["args"] == {"city": "Paris"}
    final = llm.invoke([ask, first, ToolMessage("18 °C", tool_call_id=call["id"])])
    assert "18" in str(final.content)
    entries = Client(server.url).session(session).requests()
    assert all("/openai/deployments/gpt-4o/" in e.path for e in entries)
    assert entries[-1].turn == 1 and not entries[-1].violations
    # the body says no model (the deployment does): the log still reads the tool result
    assert Client(server.url).session(session).verdict().ok


def test_chat_mistral_ai_runs_its_tool_loop(server: ServerProcess, session: str) -> None:
    url = Client(server.url).url("mistral-tool-ids", session, flavor="mistral")
    llm = ChatMistralAI(model="mistral-large-latest", endpoint=url, api_key="k", max_retries=0)  # type: ignore[call-arg]
    tools = llm.bind_tools([WEATHER])
    ask = HumanMessage("Weather in Paris and Lyon?")
    first = tools.invoke([ask])
    assert [c["args"]["city"] for c in first.tool_calls] == ["Paris", "Lyon"]
    answers = [
        ToolMessage(TEMPERATURES[c["args"]["city"]], tool_call_id=str(c["id"]))
        for c in first.tool_calls
    ]
    final = tools.invoke([ask, first, *answers])
    assert final.content == "Paris has 18 °C and Lyon 21 °C."
    (_, second) = Client(server.url).session(session).requests()
    assert second.turn == 1 and not second.violations
