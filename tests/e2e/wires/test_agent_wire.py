"""What agent CLIs send besides plain turns, through a real server and the official SDKs:
base-URL probes, token counting, Anthropic system messages inside `messages`, thinking
blocks mockllm must sign itself, Responses `namespace` tools, and refused WebSocket
upgrades (docs/agents.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types as genai_types

from tests.support import ServerProcess

MODEL = "claude-sonnet-4-6"


def _post_yaml(server: ServerProcess, text: str) -> None:
    r = server.http.post(
        "/_mockllm/scenarios", content=text, headers={"content-type": "application/yaml"}
    )
    assert r.status_code in (200, 201), r.text


def _report(server: ServerProcess, session: str) -> subprocess.CompletedProcess[str]:
    assert server.log_file is not None
    command = [sys.executable, "-m", "mockllm", "report", str(server.log_file)]
    return subprocess.run([*command, "--session", session], capture_output=True, text=True)


# --- probes on the base URL ----------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/v1", "/s/hello", "/s/hello/probe-session", "/s/x/y/"])
@pytest.mark.parametrize("method", ["HEAD", "GET"])
def test_base_url_probes_are_answered_200_and_not_logged(
    server: ServerProcess, session: str, method: str, path: str
) -> None:
    path = path.replace("probe-session", session)
    before = server.requests(session=session)
    r = server.http.request(method, path)
    assert r.status_code == 200, r.text
    if method == "GET":
        assert "mockllm" in r.json()
    assert server.requests(session=session) == before


def test_a_session_with_a_probe_passes_the_report(server: ServerProcess, session: str) -> None:
    assert server.http.head(f"/s/hello/{session}").status_code == 200
    client = anthropic.Anthropic(base_url=f"{server.url}/s/hello/{session}", api_key="t")
    client.messages.create(model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "x"}])
    done = _report(server, session)
    assert done.returncode == 0, done.stdout
    assert "(1 request)" in done.stdout


# --- token counting ------------------------------------------------------------------------


def test_anthropic_count_tokens_is_deterministic_and_outside_the_turns(
    server: ServerProcess, session: str
) -> None:
    client = anthropic.Anthropic(base_url=f"{server.url}/s/tool-loop/{session}", api_key="t")
    messages: Any = [{"role": "user", "content": "how many tokens is this sentence?"}]
    first = client.messages.count_tokens(model=MODEL, messages=messages, system="be brief")
    again = client.messages.count_tokens(model=MODEL, messages=messages, system="be brief")
    assert first.input_tokens == again.input_tokens > 0
    counts = server.requests(session=session)  # logged as side requests, not turns
    assert [(e["side"]["name"], e["turn"], e["response"]["status"]) for e in counts] == [
        ("count_tokens", None, 200)
    ] * 2
    assert json.loads(counts[0]["response"]["body"]) == {"input_tokens": first.input_tokens}
    # the turn after the counts is still turn 0, and the verdict leaves the counts out
    tools: Any = [{"name": "search", "input_schema": {"type": "object"}}]
    reply = client.messages.create(model=MODEL, max_tokens=50, messages=messages, tools=tools)
    assert reply.stop_reason == "tool_use"
    assert [e["turn"] for e in server.requests(session=session)] == [None, None, 0]
    verdict = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    assert verdict["side_requests"] == 2
    transcript = server.http.get("/_mockllm/transcript", params={"session": session}).text
    assert "side request count_tokens" in transcript


def test_anthropic_count_tokens_refuses_what_the_api_refuses(
    server: ServerProcess, session: str
) -> None:
    client = anthropic.Anthropic(base_url=f"{server.url}/s/hello/{session}", api_key="t")
    with pytest.raises(anthropic.BadRequestError) as caught:
        robot: Any = [{"role": "robot", "content": "x"}]
        client.messages.count_tokens(model=MODEL, messages=robot)
    assert "messages.0.role" in str(caught.value)
    (refused,) = server.requests(session=session)  # a refused count is logged too
    assert refused["side"]["name"] == "count_tokens" and refused["response"]["status"] == 400


def test_gemini_count_tokens(server: ServerProcess, session: str) -> None:
    client = genai.Client(
        api_key="t",
        http_options=genai_types.HttpOptions(base_url=f"{server.url}/s/hello/{session}"),
    )
    counted = client.models.count_tokens(model="gemini-2.5-flash", contents="count these words")
    again = client.models.count_tokens(model="gemini-2.5-flash", contents="count these words")
    assert counted.total_tokens == again.total_tokens
    assert counted.total_tokens is not None and counted.total_tokens > 0
    logged = server.requests(session=session)
    assert [(e["api"], e["side"]["name"], e["turn"]) for e in logged] == [
        ("gemini", "count_tokens", None)
    ] * 2


# --- Anthropic: a system message inside `messages` -----------------------------------------

MID_SYSTEM: Any = [
    {"role": "user", "content": "hello"},
    {"role": "system", "content": [{"type": "text", "text": "Reply in French."}]},
]
BETA = "mid-conversation-system-2026-04-07"
SYSTEM_SCENARIO = """
name: mid-system
turns:
  - expect:
      system: {contains: Reply in French.}
    reply: {text: Bonjour}
"""


def test_system_message_inside_messages_is_system_text_with_the_beta(
    server: ServerProcess, session: str
) -> None:
    _post_yaml(server, SYSTEM_SCENARIO)
    client = anthropic.Anthropic(base_url=f"{server.url}/s/mid-system/{session}", api_key="t")
    reply = client.messages.create(
        model=MODEL,
        max_tokens=50,
        system="You are terse.",
        messages=MID_SYSTEM,
        extra_headers={"anthropic-beta": f"claude-code-20250219,{BETA}"},
    )
    assert reply.content[0].type == "text" and reply.content[0].text == "Bonjour"
    (entry,) = server.requests(session=session)
    assert [m["role"] for m in entry["conversation"]] == ["system", "user", "system"]
    assert entry["conversation"][2]["text"] == "Reply in French."


def test_system_message_inside_messages_on_a_model_that_takes_it(
    server: ServerProcess, session: str
) -> None:
    _post_yaml(server, SYSTEM_SCENARIO)
    client = anthropic.Anthropic(base_url=f"{server.url}/s/mid-system/{session}", api_key="t")
    for model in ("claude-opus-4-8", "claude-opus-5-5", "claude-opus-5"):
        reply = client.messages.create(model=model, max_tokens=50, messages=MID_SYSTEM)
        assert reply.content[0].type == "text"


def test_system_message_inside_messages_refused_without_the_beta(
    server: ServerProcess, session: str
) -> None:
    client = anthropic.Anthropic(
        base_url=f"{server.url}/s/hello/{session}", api_key="t", max_retries=0
    )
    for model in (MODEL, "claude-opus-4-7", "claude-opus-4-20250514"):
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(model=model, max_tokens=50, messages=MID_SYSTEM)
        assert caught.value.body["error"]["message"] == (
            "role 'system' is not supported on this model"
        )


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        (
            [{"role": "system", "content": "x"}, {"role": "user", "content": "hi"}],
            "messages.0: use the top-level 'system' parameter for the initial system prompt",
        ),
        (
            [
                {"role": "user", "content": "hi"},
                {"role": "system", "content": "x"},
                {"role": "user", "content": "again"},
            ],
            "messages.1: role 'system' must precede an 'assistant' message or end the array",
        ),
    ],
)
def test_system_message_placement(
    server: ServerProcess, session: str, messages: Any, expected: str
) -> None:
    client = anthropic.Anthropic(
        base_url=f"{server.url}/s/hello/{session}", api_key="t", max_retries=0
    )
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model="claude-opus-4-8", max_tokens=50, messages=messages)
    assert caught.value.body["error"]["message"].startswith(expected)
    directive: Any = [{"role": "user", "content": "hi"}, {"role": "system", "content": []}]
    directive.append({"role": "user", "content": "again"})
    client.messages.create(model="claude-opus-4-8", max_tokens=50, messages=directive)


# --- Anthropic: thinking on, a tool-use turn scripted without reasoning --------------------


TWO_CALLS = """
name: two-calls
turns:
  - reply:
      tool_calls: [{name: get_weather, arguments: {city: Paris}}]
  - reply:
      tool_calls: [{name: get_weather, arguments: {city: Lyon}}]
  - reply: {text: done}
"""


@pytest.mark.parametrize("stream", [False, True])
def test_thinking_on_serves_a_signed_placeholder_that_its_echo_passes(
    server: ServerProcess, session: str, stream: bool
) -> None:
    _post_yaml(server, TWO_CALLS)
    client = anthropic.Anthropic(base_url=f"{server.url}/s/two-calls/{session}", api_key="t")
    tools: Any = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    messages: Any = [{"role": "user", "content": "weather in Paris?"}]
    thinking: Any = {"type": "adaptive"}
    for _ in range(2):
        reply: Any
        if stream:
            with client.messages.stream(
                model="claude-opus-4-8",
                max_tokens=2000,
                messages=messages,
                tools=tools,
                thinking=thinking,
            ) as s:
                reply = s.get_final_message()
        else:
            reply = client.messages.create(
                model="claude-opus-4-8",
                max_tokens=2000,
                messages=messages,
                tools=tools,
                thinking=thinking,
            )
        assert reply.stop_reason == "tool_use"
        first = reply.content[0]
        assert first.type == "thinking" and first.thinking == "" and first.signature
        use = next(b for b in reply.content if b.type == "tool_use")
        messages += [
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in reply.content],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": use.id,
                        "content": "error: timeout",
                        "is_error": True,
                    }
                ],
            },
        ]
    entries = server.requests(session=session)
    assert [e["response"]["status"] for e in entries] == [200, 200]
    assert all(not e["violations"] for e in entries)


def test_thinking_off_serves_no_placeholder(server: ServerProcess, session: str) -> None:
    _post_yaml(server, TWO_CALLS)
    client = anthropic.Anthropic(base_url=f"{server.url}/s/two-calls/{session}", api_key="t")
    tools: Any = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    reply = client.messages.create(
        model=MODEL, max_tokens=200, messages=[{"role": "user", "content": "x"}], tools=tools
    )
    assert next(b.type for b in reply.content) != "thinking"


# --- Responses: namespace tools (Codex's MCP tools) and custom tools -----------------------

NAMESPACE_SCENARIO = """
name: mcp-order
turns:
  - expect:
      tools: [mcp__orders__lookup_order, exec]
    reply:
      tool_calls: [{name: mcp__orders__lookup_order, arguments: {order_id: A1}}]
  - expect:
      tool_results: [{contains: shipped}]
    reply:
      tool_calls: [{name: exec, arguments: "await tools.exec_command({cmd: 'ls'})"}]
  - reply: {text: Order A1 has shipped.}
"""
NAMESPACE_TOOLS: Any = [
    {
        "type": "namespace",
        "name": "mcp__orders",
        "description": "the orders MCP server",
        "tools": [
            {
                "type": "function",
                "name": "lookup_order",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            }
        ],
    }
]
# Codex's "lite" requests offer its own tools in an input item, in namespace `functions`.
ADDITIONAL_TOOLS: Any = {
    "type": "additional_tools",
    "role": "developer",
    "tools": [
        {
            "type": "namespace",
            "name": "functions",
            "description": "",
            "tools": [{"type": "custom", "name": "exec", "description": "run JavaScript"}],
        }
    ],
}


@pytest.mark.parametrize("stream", [False, True])
def test_namespace_tools_are_flattened_emitted_with_their_namespace_and_joined_back(
    server: ServerProcess, session: str, stream: bool
) -> None:
    _post_yaml(server, NAMESPACE_SCENARIO)
    client = openai.OpenAI(base_url=f"{server.url}/s/mcp-order/{session}/v1", api_key="t")
    history: list[Any] = [ADDITIONAL_TOOLS, {"role": "user", "content": "where is order A1?"}]

    def ask() -> Any:
        if stream:
            with client.responses.stream(
                model="gpt-5.5", input=history, tools=NAMESPACE_TOOLS, store=False
            ) as s:
                return s.get_final_response()
        return client.responses.create(
            model="gpt-5.5", input=history, tools=NAMESPACE_TOOLS, store=False
        )

    first = ask()
    (call,) = first.output
    raw = call.model_dump()
    assert (raw["type"], raw["name"], raw["namespace"]) == (
        "function_call",
        "lookup_order",
        "mcp__orders",
    )
    history += [
        raw,
        {"type": "function_call_output", "call_id": raw["call_id"], "output": "shipped"},
    ]
    second = ask()
    (custom,) = second.output
    raw = custom.model_dump()
    assert raw["type"] == "custom_tool_call" and raw["name"] == "exec"
    assert raw.get("namespace") is None
    assert raw["input"] == "await tools.exec_command({cmd: 'ls'})"
    history += [raw, {"type": "custom_tool_call_output", "call_id": raw["call_id"], "output": "ok"}]
    third = ask()
    assert third.output_text == "Order A1 has shipped."
    entries = server.requests(session=session)
    assert [(e["turn"], e["response"]["status"]) for e in entries] == [(0, 200), (1, 200), (2, 200)]
    assert entries[0]["tools"] == ["mcp__orders__lookup_order", "exec"]
    # a custom tool takes text: its call is no "arguments are not valid JSON" for the verdict
    assert "problem" not in entries[1]["response"]["tool_calls"][0]
    assert entries[1]["conversation"][-2]["tool_calls"][0]["name"] == "mcp__orders__lookup_order"


def test_a_namespace_call_echoed_without_its_namespace_diverges(
    server: ServerProcess, session: str
) -> None:
    _post_yaml(server, NAMESPACE_SCENARIO)
    client = openai.OpenAI(
        base_url=f"{server.url}/s/mcp-order/{session}/v1", api_key="t", max_retries=0
    )
    history: list[Any] = [ADDITIONAL_TOOLS, {"role": "user", "content": "where is order A1?"}]
    raw = client.responses.create(model="gpt-5.5", input=history, tools=NAMESPACE_TOOLS).output[0]
    echoed = {k: v for k, v in raw.model_dump().items() if k != "namespace"}
    history += [
        echoed,
        {"type": "function_call_output", "call_id": echoed["call_id"], "output": "x"},
    ]
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-5.5", input=history, tools=NAMESPACE_TOOLS)
    assert "expected 'mcp__orders__lookup_order', got 'lookup_order'" in str(caught.value)
