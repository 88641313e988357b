"""Side requests (docs/scenarios.md, "Side requests"): requests beside the agent loop are
answered by their own rule, never counted as a turn or an attempt, logged with their mark,
left out of the verdict; through real HTTP with the official SDKs."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types

from tests.support import ServerProcess
from tests.support.clients import openai_client
from tests.support.doc_examples import example_server, examples_server_fixture
from tests.support.redis_server import RedisServer

TITLE_SYSTEM = "You are a title generator. You output ONLY a thread title."
ASK: list[Any] = [{"role": "user", "content": "read the README"}]
READ = {
    "type": "function",
    "function": {
        "name": "read",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}
EXTRA = {
    "side-fault": """
name: side-fault
side_requests:
  - name: title
    match: {tools: none, system: {contains: title}}
    fault: {http: {status: 500, headers: {x-should-retry: "false"}}}
turns:
  - reply: {text: agent answer}
""",
    "no-side": """
name: no-side
turns:
  - fault: {http: {status: 429, headers: {retry-after-ms: 1}}, times: 2}
    reply:
      tool_calls: [{name: read, arguments: {path: README.md}}]
  - reply: {text: The README says hello.}
""",
    "qwen-seeded-2": """
name: qwen-seeded-2
seed: [Got it.]
turns:
  - reply:
      tool_calls: [{name: read, arguments: {path: README.md}}]
""",
    "claude-side": """
name: claude-side
include: [harness/claude-code]
turns:
  - reply:
      tool_calls: [{name: Read, arguments: {file_path: /repo/README.md}}]
  - reply: {text: The README says hello.}
""",
    "gemini-router": """
name: gemini-router
include: [harness/gemini-cli]
turns:
  - reply:
      tool_calls: [{name: read_file, arguments: {absolute_path: /repo/README.md}}]
  - reply: {text: The README says hello.}
""",
    "side-stream-json": """
name: side-stream-json
side_requests:
  - name: router
    match: {json: true, tools: none, api: [openai-chat, openai-responses]}
    reply: {json: valid}
turns:
  - reply: {text: agent}
""",
}


server = examples_server_fixture(extra=EXTRA)


def _client(server: ServerProcess, scenario: str, session: str, **kw: Any) -> openai.OpenAI:
    return openai_client(server, scenario, session, **{"max_retries": 2, **kw})


def _opencode_run(server: ServerProcess, scenario: str, session: str) -> list[str]:
    """What opencode does on a prompt: the title request and the agent request side by side
    (the title first here), then the agent loop. Returns what it printed."""
    printed = []
    with _client(server, scenario, session) as client:
        title = client.chat.completions.create(
            model="m",
            messages=[
                {"role": "system", "content": TITLE_SYSTEM},
                {"role": "user", "content": "read the README"},
            ],
        )
        printed.append(f"title: {title.choices[0].message.content}")
        history: list[Any] = [
            {"role": "system", "content": "You are opencode, an agent."},
            {"role": "user", "content": "read the README"},
        ]
        while True:
            reply = client.chat.completions.create(model="m", messages=history, tools=[READ])
            message = reply.choices[0].message
            if not message.tool_calls:
                printed.append(f"agent: {message.content}")
                return printed
            history.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                printed.append(f"agent calls {call.function.name}({call.function.arguments})")
                history.append({"role": "tool", "tool_call_id": call.id, "content": "hello"})


def test_opencode_title_and_two_429s_reach_the_agent(server: ServerProcess, session: str) -> None:
    printed = _opencode_run(server, "title-and-429", session)
    assert printed == [
        "title: Reading the README",
        'agent calls read({"path":"README.md"})',
        "agent: The README says hello.",
    ]
    entries = server.requests(session=session)
    rows = [(e["turn"], e["attempt"], e["response"]["status"], e.get("side")) for e in entries]
    side = {
        "name": "title",
        "why": "side request 'title': system prompt containing 'You are a title generator', "
        "no tools",
    }
    assert rows == [
        (None, None, 200, side),
        (0, 1, 429, None),  # both 429s reach the agent's own request
        (0, 2, 429, None),
        (0, 3, 200, None),
        (1, 1, 200, None),
    ]
    verdict = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    assert verdict["ok"], verdict
    transcript = server.http.get("/_mockllm/transcript", params={"session": session}).text
    assert "· side request title · openai-chat ·" in transcript
    assert "· turn 0 (attempt 2) ·" in transcript


def test_without_the_side_rule_the_title_takes_an_attempt(
    server: ServerProcess, session: str
) -> None:
    """The failure this feature fixes: counted as turn 0, the title request spends the first
    429 and the agent sees only one (and the title gets the agent's tool call)."""
    client = _client(server, "no-side", session, max_retries=0)
    with client, pytest.raises(openai.RateLimitError):
        client.chat.completions.create(
            model="m", messages=[{"role": "system", "content": TITLE_SYSTEM}]
        )
    attempts = [(e["turn"], e["attempt"], e.get("side")) for e in server.requests(session=session)]
    assert attempts == [(0, 1, None)]


def test_bundled_opencode_rule_set(server: ServerProcess, session: str) -> None:
    printed = _opencode_run(server, "opencode-read", session)
    assert printed[0] == "title: Mock session"
    assert server.requests(session=session)[0]["side"]["rules"] == "harness/opencode"


def test_side_request_fault_always_applies_and_is_not_counted(
    server: ServerProcess, session: str
) -> None:
    with _client(server, "side-fault", session, max_retries=0) as client:
        for _ in range(2):
            with pytest.raises(openai.InternalServerError):
                client.chat.completions.create(
                    model="m", messages=[{"role": "system", "content": "make a title"}]
                )
        agent = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], tools=[READ]
        )
    assert agent.choices[0].message.content == "agent answer"
    entries = server.requests(session=session)
    assert [e["attempt"] for e in entries] == [None, None, 1]
    assert entries[0]["response"]["fault"]["kind"] == "http"


def test_side_reply_streams_with_the_sdk_accumulator(server: ServerProcess, session: str) -> None:
    schema = {
        "type": "object",
        "properties": {"model_choice": {"type": "string", "enum": ["flash", "pro"]}},
        "required": ["model_choice"],
        "additionalProperties": False,
    }
    with (
        _client(server, "side-stream-json", session) as client,
        client.chat.completions.stream(
            model="m",
            messages=[{"role": "user", "content": "route"}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "route", "schema": schema, "strict": True},
            },
        ) as stream,
    ):
        done = stream.get_final_completion()
    value = json.loads(done.choices[0].message.content or "")
    assert value["model_choice"] in ("flash", "pro")
    assert server.last(session)["side"]["name"] == "router"


def test_claude_code_nonessential_requests(server: ServerProcess, session: str) -> None:
    url = f"{server.url}/s/claude-side/{session}"
    with anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client:
        quota = client.messages.create(
            model="claude-haiku-4-5",
            max_tokens=1,
            messages=[{"role": "user", "content": "quota"}],
        )
        topic = client.messages.create(
            model="claude-haiku-4-5",
            max_tokens=512,
            system="Analyze if this message indicates a new conversation topic.",
            messages=[{"role": "user", "content": "read the README"}],
        )
        agent = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=512,
            system="You are Claude Code.",
            messages=[{"role": "user", "content": "read the README"}],
            tools=[{"name": "Read", "input_schema": {"type": "object"}}],
        )
    assert quota.content[0].text == "ok"
    assert json.loads(topic.content[0].text) == {"isNewTopic": False, "title": None}
    assert agent.content[0].type == "tool_use"
    names = [(e.get("side") or {}).get("name") for e in server.requests(session=session)]
    assert names == ["quota", "topic", None]


def test_gemini_cli_router_gets_json_from_its_schema(server: ServerProcess, session: str) -> None:
    client = genai.Client(
        api_key="k", http_options={"base_url": f"{server.url}/s/gemini-router/{session}"}
    )
    schema = {
        "type": "OBJECT",
        "properties": {
            "reasoning": {"type": "STRING"},
            "model_choice": {"type": "STRING", "enum": ["flash", "pro"]},
        },
        "required": ["reasoning", "model_choice"],
    }
    routed = client.models.generate_content(
        model="gemini-2.5-flash-lite",
        contents="read the README",
        config=types.GenerateContentConfig(
            system_instruction="You are a specialized Task Routing AI.",
            response_mime_type="application/json",
            response_schema=schema,
        ),
    )
    choice = json.loads(routed.text or "")
    assert choice["model_choice"] in ("flash", "pro") and isinstance(choice["reasoning"], str)
    tool = types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name="read_file",
                parameters_json_schema={
                    "type": "object",
                    "properties": {"absolute_path": {"type": "string"}},
                },
            )
        ]
    )
    agent = client.models.generate_content(
        model="gemini-2.5-pro",
        contents="read the README",
        config=types.GenerateContentConfig(tools=[tool]),
    )
    assert agent.function_calls and agent.function_calls[0].name == "read_file"
    entries = server.requests(session=session)
    assert [(e["turn"], (e.get("side") or {}).get("name")) for e in entries] == [
        (None, "router"),
        (0, None),
    ]


def test_side_requests_leave_the_verdict_alone(server: ServerProcess, session: str) -> None:
    """The verdict judges the agent's requests: side requests are counted apart."""
    _opencode_run(server, "opencode-read", session)
    verdict = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    assert verdict["ok"] and (verdict["requests"], verdict["side_requests"]) == (2, 1)


def test_side_request_is_still_checked_against_the_provider_rules(
    server: ServerProcess, session: str
) -> None:
    """A side request whose history breaks a provider rule gets the provider's 400 (strict),
    logged with its side mark."""
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": TITLE_SYSTEM},
            {"role": "tool", "tool_call_id": "call_nope", "content": "x"},
        ],
    }
    url = server.openai_url("title-and-429", session) + "/chat/completions"
    r = httpx.post(url, json=body)
    assert r.status_code == 400, r.text
    entry = server.last(session)
    assert entry["side"]["name"] == "title" and entry["violations"]


def test_two_replicas_on_redis_count_alike(redis: RedisServer, session: str) -> None:
    """Stateless: the side rule, the seed and the count are the request's; the attempts are
    the shared store's. The title on one replica, the agent's attempts spread over two."""
    state = ("--state", redis.url())
    with example_server(*state, extra=EXTRA) as a, example_server(*state, extra=EXTRA) as b:
        with _client(a, "title-and-429", session, max_retries=0) as on_a:
            title = on_a.chat.completions.create(
                model="m", messages=[{"role": "system", "content": TITLE_SYSTEM}]
            )
            assert title.choices[0].message.content == "Reading the README"
            with pytest.raises(openai.RateLimitError):
                on_a.chat.completions.create(model="m", messages=[*ASK], tools=[READ])
        with _client(b, "title-and-429", session, max_retries=1) as on_b:
            served = on_b.chat.completions.create(model="m", messages=[*ASK], tools=[READ])
        assert served.choices[0].message.tool_calls
        seeded = [*ASK, {"role": "assistant", "content": "Got it."}, *ASK]
        bodies = [
            httpx.post(
                s.openai_url("qwen-seeded-2", session) + "/chat/completions",
                json={"model": "m", "messages": seeded, "tools": [READ]},
            ).content
            for s in (a, b)
        ]
        entries = a.requests(session=session)
    assert [(e["turn"], e["attempt"]) for e in entries[:4]] == [
        (None, None),
        (0, 1),
        (0, 2),
        (0, 3),
    ]
    assert bodies[0] != bodies[1]  # attempts 1 and 2 of turn 0: each its own ids
    assert [e["why"] for e in entries[4:]] == [
        "counted: 0 assistant replies in the history, 1 seeded left out"
    ] * 2
