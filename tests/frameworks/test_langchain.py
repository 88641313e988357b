"""LangChain (langchain-openai, langchain-anthropic, langchain-aws, langchain-ollama) with
LangGraph's prebuilt ReAct agent, on Chat Completions, Responses, Messages, Bedrock Converse
and Ollama's /api/chat, streamed and not."""

from __future__ import annotations

import warnings
from typing import Any

import anthropic
import boto3
import httpx
import httpx2
import openai
import pytest
from botocore.config import Config
from langchain_anthropic import ChatAnthropic
from langchain_aws import ChatBedrockConverse
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from langgraph.warnings import LangGraphDeprecatedSinceV10

from mockllm import Session

from .matrix import PARALLEL_TEXT, PROMPTS, Expect, check, fails, get_weather, search

TOOLS = [tool(get_weather), tool(search)]

EXPECTED: dict[tuple[str, str, bool], Expect] = {}
for api in ("chat", "responses", "anthropic"):
    for stream in (False, True):
        EXPECTED["weather-parallel", api, stream] = Expect(text=PARALLEL_TEXT)
        # max_retries=0: the break surfaces; the SDK's own retry would cover the unstreamed case
        EXPECTED["stream-cut", api, stream] = Expect(
            raises=anthropic.APIConnectionError
            if api == "anthropic"
            else openai.APIConnectionError,
        )
    # Unparsable arguments become `invalid_tool_calls`, which the agent does not answer: it
    # stops there with an empty reply, the call unanswered (a framework bug the verdict shows).
    EXPECTED["malformed-arguments", api, False] = Expect(
        text="", failed=fails("calls_answered", "errors_fed_back")
    )
    # Streamed, LangChain partial-parses the cut-off '{"city": "Par' into {"city": "Par"} and
    # runs the tool on it; the prebuilt agent's ToolNode re-raises the tool's own error (it
    # only feeds back argument validation errors), so the run dies with the call unanswered.
    EXPECTED["malformed-arguments", api, True] = Expect(
        raises=ValueError,
        message="no weather for 'Par'",
        failed=fails("calls_answered", "errors_fed_back"),
    )
# Anthropic unstreamed: mockllm sends the cut-off call's complete parameters ({}), the tool's
# argument validation fails and the agent feeds that back as an error result.
EXPECTED["malformed-arguments", "anthropic", False] = Expect(
    text="It is 18 °C and sunny in Paris.", fed_back="city.*Field required", is_error=True
)
# The Anthropic SDK's stream lets the HTTP library's error through unwrapped.
EXPECTED["stream-cut", "anthropic", True] = Expect(raises=httpx2.RemoteProtocolError)

CASES = sorted(EXPECTED)


def model(api: str, stream: bool, mock: Session, scenario: str) -> BaseChatModel:
    if api == "anthropic":
        url = mock.url(scenario, api="anthropic")
        return ChatAnthropic(
            model_name="claude-sonnet-4-6",
            base_url=url,
            api_key="test",
            streaming=stream,
            max_retries=0,
        )  # type: ignore[call-arg]
    return ChatOpenAI(
        model="gpt-4o-mini",
        base_url=mock.url(scenario),
        api_key="test",
        streaming=stream,
        use_responses_api=api == "responses",
        max_retries=0,
    )


def run_agent(chat_model: BaseChatModel, prompt: str, **config: Any) -> str:
    with warnings.catch_warnings():
        # Deprecated in LangGraph 1 for `langchain.agents.create_agent` (another package); it
        # is still the prebuilt agent LangGraph ships, and what its users run.
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        agent = create_react_agent(chat_model, TOOLS)
    state = agent.invoke({"messages": [("user", prompt)]}, config=config or None)
    return str(state["messages"][-1].text)


@pytest.mark.parametrize(("scenario", "api", "stream"), CASES)
def test_langgraph_agent(mock: Session, scenario: str, api: str, stream: bool) -> None:
    chat_model = model(api, stream, mock, scenario)
    check(lambda: run_agent(chat_model, PROMPTS[scenario]), mock, EXPECTED[scenario, api, stream])


def test_chat_openai_drops_deepseek_reasoning_content(mock: Session) -> None:
    """A framework bug the mock catches: ChatOpenAI keeps DeepSeek's `reasoning_content` out
    of the assistant message it sends back, and DeepSeek (in thinking mode) answers 400."""
    chat_model = ChatOpenAI(
        model="deepseek-reasoner",
        base_url=mock.url("deepseek-reasoning"),
        api_key="test",
        max_retries=0,
    )
    expect = Expect(
        raises=openai.BadRequestError,
        message="Missing `reasoning_content` field in the assistant message",  # deepseek-reasoner's text
        failed=fails("requests_accepted"),  # the refusal is the verdict's too
    )
    check(lambda: run_agent(chat_model, PROMPTS["deepseek-reasoning"]), mock, expect)
    assert "reasoning_content" not in mock.requests()[1].request["messages"][1]


def test_an_uncapped_tool_loop_runs_until_the_recursion_limit(mock: Session) -> None:
    """The prebuilt agent has no cap of its own: LangGraph's default recursion limit is
    10 007 steps (two per model call), so a looping model gets ~5 000 calls. With a limit
    the agent stops quietly, replacing the last reply's call with an apology."""
    chat_model = model("chat", False, mock, "tool-loop")
    expect = Expect(
        text="Sorry, need more steps to process this request.",
        failed=fails("no_tool_loop", "calls_answered"),
    )
    check(lambda: run_agent(chat_model, PROMPTS["tool-loop"], recursion_limit=50), mock, expect)
    assert len(mock.requests()) == 25


@pytest.mark.parametrize("stream", [False, True])
def test_chat_bedrock_converse_closes_the_parallel_round_trip(mock: Session, stream: bool) -> None:
    """langchain-aws's ChatBedrockConverse on a boto3 client pointed at mockllm (any
    credentials): Converse, or ConverseStream with `streaming=True`."""
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=mock.url("weather-parallel", api="bedrock"),
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1}),
    )
    # The region and credentials again: without them langchain-aws asks the EC2 instance
    # metadata service (169.254.169.254) for credentials, which the network guard refuses.
    chat_model = ChatBedrockConverse(
        model="us.anthropic.claude-sonnet-4-6",
        client=client,
        streaming=stream,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    check(
        lambda: run_agent(chat_model, PROMPTS["weather-parallel"]),
        mock,
        Expect(text=PARALLEL_TEXT),
    )
    assert {e.api for e in mock.requests()} == {"bedrock-converse"}
    assert [e.stream for e in mock.requests()] == [stream, stream]


def chat_ollama(mock: Session, scenario: str) -> BaseChatModel:
    """langchain-ollama's ChatOllama at mockllm's URL (its `base_url` is the `ollama`
    client's host); `validate_model_on_init` looks the model up in GET /api/tags."""
    from langchain_ollama import ChatOllama

    return ChatOllama(
        model="llama3.2", base_url=mock.url(scenario, api="ollama"), validate_model_on_init=True
    )


def test_chat_ollama_closes_the_parallel_round_trip(mock: Session) -> None:
    """ChatOllama through LangGraph's agent: it always streams /api/chat (`invoke` adds the
    NDJSON chunks up), takes the calls' arguments as objects and sends them back so."""
    chat_model = chat_ollama(mock, "weather-parallel")
    check(
        lambda: run_agent(chat_model, PROMPTS["weather-parallel"]),
        mock,
        Expect(text=PARALLEL_TEXT),
    )
    requests = mock.requests()
    assert {e.api for e in requests} == {"ollama"} and [e.stream for e in requests] == [True] * 2
    assert requests[1].request["messages"][1]["tool_calls"][0]["function"]["arguments"] == {
        "city": "北京"
    }


def test_chat_ollama_meets_a_cut_stream(mock: Session) -> None:
    """stream-cut: the NDJSON stream is reset inside the call's line; the ollama client
    under ChatOllama lets httpx's RemoteProtocolError through, and the agent dies with the
    call never made (no retry of its own: a harness must retry the request itself)."""
    chat_model = chat_ollama(mock, "stream-cut")
    check(
        lambda: run_agent(chat_model, PROMPTS["stream-cut"]),
        mock,
        Expect(raises=httpx.RemoteProtocolError),
    )


def test_chat_ollama_validates_its_model_in_the_scenarios_models(mock: Session) -> None:
    """validate_model_on_init looks the model up in GET /api/tags: a model the scenario
    names (`expect.model`) is there; one no scenario names and no default is refused by
    ChatOllama itself, before any request."""
    from langchain_ollama import ChatOllama

    mock.add_scenario(
        "name: ollama-named\nturns:\n  - expect: {model: {equals: mistral-nemo}}\n"
        "    reply: {text: hi}\n"
    )
    url = mock.url("ollama-named", api="ollama")
    found = ChatOllama(model="mistral-nemo", base_url=url, validate_model_on_init=True)
    assert found.invoke("hi").content == "hi"
    with pytest.raises(ValueError, match="not found in Ollama"):
        ChatOllama(model="phi4", base_url=url, validate_model_on_init=True)
