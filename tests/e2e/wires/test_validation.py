"""Provider history rules (docs/validation.md): each rule drives the official SDK into the
violation — the SDK's exception class, the status and the provider's exact text — and the
same history in warn mode is served and logged."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors

from tests.support import TOOL_PARAMETERS, ServerProcess, running_server

OPENAI_TOOL = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS},
}
CHAT_TOOLS = [
    OPENAI_TOOL,
    {"type": "function", "function": {"name": "get_time", "parameters": TOOL_PARAMETERS}},
]
RESP_TOOLS = [
    {"type": "function", "name": n, "parameters": TOOL_PARAMETERS, "strict": False}
    for n in ("get_weather", "get_time")
]
CLAUDE_TOOLS = [{"name": n, "input_schema": TOOL_PARAMETERS} for n in ("get_weather", "get_time")]
USER = {"role": "user", "content": "Weather and time in Paris?"}
PATHS = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
}
GEMINI_TOOLS = [
    {
        "functionDeclarations": [
            {"name": n, "parametersJsonSchema": TOOL_PARAMETERS}
            for n in ("get_weather", "get_time")
        ]
    }
]
GEMINI_USER = {"role": "user", "parts": [{"text": "Weather and time in Paris?"}]}


def first_reply(
    server: ServerProcess, api: str, scenario: str, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Turn 0 of `scenario`, raw: the ids a bad history will then misuse."""
    bodies: dict[str, dict[str, Any]] = {
        "chat": {"model": "gpt-4o-mini", "messages": [USER], "tools": CHAT_TOOLS},
        "responses": {"model": "gpt-4.1", "input": [USER], "tools": RESP_TOOLS},
        "anthropic": {
            "model": "claude-sonnet-4-6",
            "max_tokens": 1024,
            "messages": [USER],
            "tools": CLAUDE_TOOLS,
        },
        "gemini": {"contents": [GEMINI_USER], "tools": GEMINI_TOOLS},
    }
    body = bodies[api] | (extra or {})
    path = PATHS[api]
    if api == "gemini":  # the model goes in the path
        path = path.replace("gemini-2.5-flash", str(body.pop("model", "gemini-2.5-flash")))
    r = httpx.post(f"{server.url}/s/{scenario}/setup{path}", json=body)
    assert r.status_code == 200, r.text
    result: dict[str, Any] = r.json()
    return result


# --- request builders: (first reply) → the bad request body -----------------------------


def chat(
    messages: Callable[[dict[str, Any], list[dict[str, Any]]], list[Any]], **extra: Any
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def build(first: dict[str, Any]) -> dict[str, Any]:
        assistant = first["choices"][0]["message"]
        return {
            "model": "gpt-4o-mini",
            "messages": messages(assistant, assistant.get("tool_calls") or []),
            "tools": CHAT_TOOLS,
            **extra,
        }

    return build


def tool(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def chat_body(**body: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda first: {"model": "gpt-4o-mini", "messages": [USER], **body}


def schema_tool(parameters: Any, strict: bool = False) -> list[Any]:
    return [
        {
            "type": "function",
            "function": {"name": "get_weather", "parameters": parameters, "strict": strict},
        }
    ]


def responses(
    items: Callable[[list[dict[str, Any]]], list[Any]], **extra: Any
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def build(first: dict[str, Any]) -> dict[str, Any]:
        return {
            "model": "gpt-4.1",
            "input": [USER, *items(first["output"])],
            "tools": RESP_TOOLS,
            **extra,
        }

    return build


def output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "ok"}


def claude(
    messages: Callable[[list[dict[str, Any]], list[str]], list[Any]], **extra: Any
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def build(first: dict[str, Any]) -> dict[str, Any]:
        content = first["content"]
        ids = [b["id"] for b in content if b["type"] == "tool_use"]
        body = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 1024,
            "messages": [USER, *messages(content, ids)],
            "tools": CLAUDE_TOOLS,
        }
        return body | extra

    return build


def result(tool_use_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": "ok"}


THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2048}


def with_first_block(
    change: Callable[[dict[str, Any]], dict[str, Any]],
) -> Callable[[list[dict[str, Any]], list[str]], list[Any]]:
    def messages(content: list[dict[str, Any]], ids: list[str]) -> list[Any]:
        edited = [change(content[0]), *content[1:]]
        return [
            {"role": "assistant", "content": edited},
            {"role": "user", "content": [result(ids[0])]},
        ]

    return messages


def gemini(
    contents: Callable[[dict[str, Any]], list[Any]], model: str = "gemini-2.5-flash"
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A generate_content call: the reply's content (as the SDK replays it) → the contents."""

    def build(first: dict[str, Any]) -> dict[str, Any]:
        reply = first["candidates"][0]["content"]
        return {"model": model, "contents": [GEMINI_USER, *contents(reply)]}

    return build


def answers(*names: str) -> dict[str, Any]:
    parts = [{"functionResponse": {"name": n, "response": {"result": "ok"}}} for n in names]
    return {"role": "user", "parts": parts}


def unsigned(reply: dict[str, Any]) -> dict[str, Any]:
    return {
        **reply,
        "parts": [{k: v for k, v in p.items() if k != "thoughtSignature"} for p in reply["parts"]],
    }


GEMINI_3 = {"model": "gemini-3-pro-preview"}


@dataclass
class Case:
    rule: str
    api: str
    scenario: str
    build: Callable[[dict[str, Any]], dict[str, Any]]
    message: str  # exact, or a regular expression when it starts with "re:"
    param: str | None = None
    setup: dict[str, Any] | None = None  # extra fields for the turn-0 request

    @property
    def id(self) -> str:
        return self.rule


CASES = [
    # --- Chat Completions ---------------------------------------------------------------
    Case(
        "chat.tool_call_unanswered",
        "chat",
        "rules",
        chat(lambda a, c: [USER, a, tool(c[0]["id"])]),
        "re:An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        r"'tool_call_id'\. The following tool_call_ids did not have response messages: call_\w{24}$",
        "messages.[3].role",
    ),
    Case(
        "chat.tool_without_call",
        "chat",
        "rules",
        chat(lambda a, c: [USER, tool("call_x")]),
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        "messages.[1].role",
    ),
    Case(
        "chat.unknown_tool_call_id",
        "chat",
        "rules",
        chat(lambda a, c: [USER, a, tool(c[0]["id"]), tool("call_nope")]),
        "Invalid parameter: 'tool_call_id' of 'call_nope' not found in 'tool_calls' of previous message.",
        "messages.[3].tool_call_id",
    ),
    Case(
        "chat.tool_choice_without_tools",
        "chat",
        "rules",
        chat_body(tool_choice="auto"),
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
        "tool_choice",
    ),
    Case(
        "chat.parallel_tool_calls_without_tools",
        "chat",
        "rules",
        chat_body(parallel_tool_calls=False),
        "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.",
        "parallel_tool_calls",
    ),
    Case(
        "chat.schema_missing_properties",
        "chat",
        "rules",
        chat_body(tools=schema_tool({"type": "object"})),
        "Invalid schema for function 'get_weather': In context=(), object schema missing properties.",
        "tools[0].function.parameters",
    ),
    Case(
        "chat.strict_required_incomplete",
        "chat",
        "rules",
        chat_body(
            tools=schema_tool(
                {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "additionalProperties": False,
                },
                strict=True,
            )
        ),
        "Invalid schema for function 'get_weather': In context=(), 'required' is required to be supplied and to be "
        "an array including every key in properties. Missing 'city'.",
        "tools[0].function.parameters",
    ),
    Case(
        "chat.strict_additional_properties",
        "chat",
        "rules",
        chat_body(
            tools=schema_tool(
                {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
                strict=True,
            )
        ),
        "Invalid schema for function 'get_weather': In context=(), 'additionalProperties' is required to be supplied "
        "and to be false.",
        "tools[0].function.parameters",
    ),
    Case(
        "chat.schema_not_object",
        "chat",
        "rules",
        chat_body(tools=schema_tool({"type": "string"})),
        "Invalid schema for function 'get_weather': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"string\"'.",
        "tools[0].function.parameters",
    ),
    Case(
        "chat.schema_invalid",
        "chat",
        "rules",
        chat_body(tools=schema_tool({"type": "object", "properties": {"city": {"type": "text"}}})),
        "re:^Invalid schema for function 'get_weather': 'text' is not valid under any of the given schemas$",
        "tools[0].function.parameters",
    ),
    Case(
        "chat.tool_choice_unknown_tool",
        "chat",
        "rules",
        chat_body(
            tools=[OPENAI_TOOL], tool_choice={"type": "function", "function": {"name": "get_time"}}
        ),
        "Invalid value for 'tool_choice': function 'get_time' is not in 'tools'.",
        "tool_choice",
    ),
    Case(
        "deepseek.reasoning_content_missing",
        "chat",
        "rules-deepseek",
        chat(
            lambda a, c: [
                USER,
                {k: v for k, v in a.items() if k != "reasoning_content"},
                tool(c[0]["id"]),
            ],
            model="deepseek-v4-pro",
        ),
        "The `reasoning_content` in the thinking mode must be passed back to the API.",
        None,
    ),
    Case(  # the V3.2 models name the message
        "deepseek.reasoning_content_missing/v3",
        "chat",
        "rules-deepseek",
        chat(
            lambda a, c: [
                USER,
                {k: v for k, v in a.items() if k != "reasoning_content"},
                tool(c[0]["id"]),
            ],
            model="deepseek-reasoner",
        ),
        "Missing `reasoning_content` field in the assistant message at message index 1. For "
        "more information, please refer to "
        "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
        None,
    ),
    Case(
        "kimi.reasoning_content_missing",
        "chat",
        "rules-kimi",
        chat(
            lambda a, c: [
                USER,
                {k: v for k, v in a.items() if k != "reasoning_content"},
                tool(c[0]["id"]),
            ],
            model="kimi-k2-thinking",
        ),
        "thinking is enabled but reasoning_content is missing in assistant tool call message "
        "at index 1",
        None,
    ),
    Case(
        "qwen.thinking_requires_stream",
        "chat",
        "rules-qwen",
        chat_body(model="qwen-plus", enable_thinking=True),
        "parameter.enable_thinking must be set to false for non-streaming calls",
        None,
    ),
    Case(
        "deepseek.forced_tool_choice",
        "chat",
        "rules-deepseek",
        chat_body(model="deepseek-reasoner", tools=[OPENAI_TOOL], tool_choice="required"),
        "Thinking mode does not support this tool_choice",
        None,
    ),
    # --- Responses ------------------------------------------------------------------------
    Case(
        "responses.call_without_output",
        "responses",
        "rules",
        responses(lambda out: [*out, output(out[1]["call_id"])]),
        r"re:^No tool output found for function call call_\w{24}\.$",
        "input",
    ),
    Case(
        "responses.output_without_call",
        "responses",
        "rules",
        responses(
            lambda out: [
                *out,
                output(out[1]["call_id"]),
                output(out[2]["call_id"]),
                output("call_ghost"),
            ]
        ),
        "No tool call found for function call output with call_id call_ghost.",
        "input",
    ),
    Case(
        "responses.item_id_prefix",
        "responses",
        "rules",
        responses(
            lambda out: [
                out[0],
                {**out[1], "id": "msg_123"},
                out[2],
                output(out[1]["call_id"]),
                output(out[2]["call_id"]),
            ]
        ),
        "Invalid 'input[2].id': 'msg_123'. Expected an ID that begins with 'fc'.",
        "input[2].id",
    ),
    Case(
        "responses.function_call_without_reasoning",
        "responses",
        "rules-thinking",
        responses(lambda out: [out[1], output(out[1]["call_id"])]),
        r"re:^Item 'fc_[0-9a-f]{50}' of type 'function_call' was provided without its required 'reasoning' item: 'rs_[0-9a-f]{50}'\.$",
        "input",
    ),
    Case(
        "responses.reasoning_without_following_item",
        "responses",
        "rules-thinking",
        responses(lambda out: [out[0]]),
        r"re:^Item 'rs_[0-9a-f]{50}' of type 'reasoning' was provided without its required following item\.$",
        "input",
    ),
    Case(
        "responses.strict_schema",
        "responses",
        "rules",
        lambda first: {
            "model": "gpt-4.1",
            "input": "hi",
            "tools": [
                {
                    "type": "function",
                    "name": "get_weather",
                    "strict": True,
                    "parameters": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "additionalProperties": False,
                    },
                }
            ],
        },
        "Invalid schema for function 'get_weather': In context=(), 'required' is required to be supplied and to be "
        "an array including every key in properties. Missing 'city'.",
        "tools[0].parameters",
    ),
    # --- Anthropic ------------------------------------------------------------------------
    Case(
        "anthropic.tool_use_unanswered",
        "anthropic",
        "rules",
        claude(
            lambda c, ids: [
                {"role": "assistant", "content": c},
                {"role": "user", "content": [result(ids[0])]},
            ]
        ),
        r"re:^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01\w{22}\. "
        r"Each `tool_use` block must have a corresponding `tool_result` block in the next message\.$",
    ),
    Case(
        "anthropic.tool_results_not_first",
        "anthropic",
        "rules",
        claude(
            lambda c, ids: [
                {"role": "assistant", "content": c},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "here"}, result(ids[0]), result(ids[1])],
                },
            ]
        ),
        "messages.2: Did not find 2 `tool_result` block(s) at the beginning of this message. Messages following "
        "`tool_use` blocks must begin with a matching number of `tool_result` blocks.",
    ),
    Case(
        "anthropic.tool_results_not_first/split",
        "anthropic",
        "rules",
        claude(
            lambda c, ids: [
                {"role": "assistant", "content": c},
                {"role": "user", "content": [result(ids[0])]},
                {"role": "user", "content": [result(ids[1])]},
            ]
        ),
        "messages.2: Did not find 2 `tool_result` block(s) at the beginning of this message. Messages following "
        "`tool_use` blocks must begin with a matching number of `tool_result` blocks.",
    ),
    Case(
        "anthropic.tool_use_ids_not_unique",
        "anthropic",
        "rules",
        claude(
            lambda c, ids: [
                {"role": "assistant", "content": [c[1], {**c[2], "id": ids[0]}]},
                {"role": "user", "content": [result(ids[0]), result(ids[0])]},
            ]
        ),
        "messages.1.content.1: `tool_use` ids must be unique",
    ),
    Case(
        "anthropic.unexpected_tool_use_id",
        "anthropic",
        "rules",
        claude(
            lambda c, ids: [
                {"role": "assistant", "content": c},
                {
                    "role": "user",
                    "content": [result(ids[0]), result(ids[1]), result("toolu_ghost")],
                },
            ]
        ),
        "messages.2.content.2: unexpected `tool_use_id` found in `tool_result` blocks: toolu_ghost. Each `tool_result` "
        "block must have a corresponding `tool_use` block in the previous message.",
    ),
    Case(
        "anthropic.thinking_block_missing",
        "anthropic",
        "rules-thinking",
        claude(
            lambda c, ids: [
                {"role": "assistant", "content": c[1:]},
                {"role": "user", "content": [result(ids[0])]},
            ],
            **THINKING,
        ),
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is "
        "enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of "
        "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid "
        "this requirement, disable `thinking`. Please consult our documentation at "
        "https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
        setup=THINKING,
    ),
    Case(
        "anthropic.thinking_block_modified",
        "anthropic",
        "rules-thinking",
        claude(
            with_first_block(lambda b: {**b, "thinking": b["thinking"] + " (edited)"}), **THINKING
        ),
        "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be "
        "modified. These blocks must remain as they were in the original response.",
        setup=THINKING,
    ),
    Case(
        "anthropic.thinking_signature_invalid",
        "anthropic",
        "rules-thinking",
        claude(with_first_block(lambda b: {**b, "signature": "forged"}), **THINKING),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
        setup=THINKING,
    ),
    Case(
        "anthropic.thinking_forced_tool_choice",
        "anthropic",
        "rules-thinking",
        claude(lambda c, ids: [], tool_choice={"type": "any"}, **THINKING),
        "Thinking may not be enabled when tool_choice forces tool use.",
        setup=THINKING,
    ),
    Case(
        "anthropic.schema_invalid",
        "anthropic",
        "rules",
        claude(
            lambda c, ids: [],
            tools=[
                {
                    "name": "get_weather",
                    "input_schema": {"type": "object", "properties": {"city": {"type": 5}}},
                }
            ],
        ),
        "tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 "
        "(https://json-schema.org/draft/2020-12). Learn more about tool use at "
        "https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview.",
    ),
    Case(
        "anthropic.max_tokens_missing",
        "anthropic",
        "rules",
        lambda first: {"model": "claude-sonnet-4-6", "messages": [USER]},
        "max_tokens: Field required",
    ),
    Case(
        "anthropic.max_tokens_not_above_budget",
        "anthropic",
        "rules",
        claude(
            lambda c, ids: [], thinking={"type": "enabled", "budget_tokens": 2048}, max_tokens=1024
        ),
        "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
        "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
    ),
    Case(
        "anthropic.max_tokens_over_limit",
        "anthropic",
        "rules",
        claude(lambda c, ids: [], model="claude-3-5-sonnet-20240620", max_tokens=10000),
        "max_tokens: 10000 > 4096, which is the maximum allowed number of output tokens for claude-3-5-sonnet-20240620",
    ),
    # --- Gemini ---------------------------------------------------------------------------
    Case(
        "gemini.response_count",
        "gemini",
        "rules",
        gemini(lambda reply: [reply, answers("get_weather")]),
        "Please ensure that the number of function response parts is equal to the number of function call "
        "parts of the function call turn.",
    ),
    Case(
        "gemini.response_without_call",
        "gemini",
        "rules",
        gemini(lambda reply: [answers("get_weather")]),
        "Please ensure that function response turn comes immediately after a function call turn.",
    ),
    Case(
        "gemini.call_without_user_turn",
        "gemini",
        "rules",
        lambda first: {
            "model": "gemini-2.5-flash",
            "contents": [first["candidates"][0]["content"]],
        },
        "Please ensure that function call turn comes immediately after a user turn or after a function "
        "response turn.",
    ),
    Case(
        "gemini.thought_signature_missing",
        "gemini",
        "rules",
        gemini(
            lambda reply: [unsigned(reply), answers("get_weather", "get_time")],
            model="gemini-3-pro-preview",
        ),
        "Function call is missing a thought_signature in functionCall parts. This is required for tools to "
        "work correctly, and missing thought_signature may lead to degraded model performance. Additional "
        "data, function call `default_api:get_weather` , position 2. Please refer to "
        "https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
        setup=GEMINI_3,
    ),
]


def send(server: ServerProcess, case: Case, session: str, body: dict[str, Any]) -> Any:
    """Through the official SDK's own request path (its typed methods refuse some bad bodies)."""
    base = f"{server.url}/s/{case.scenario}/{session}"
    if case.api == "gemini":  # generate_content: contents as the SDK's own types read them
        with genai.Client(api_key="k", http_options={"base_url": base}) as client:
            config = {"tools": GEMINI_TOOLS, "automatic_function_calling": {"disable": True}}
            return client.models.generate_content(
                model=body["model"], contents=body["contents"], config=config
            )
    if case.api == "anthropic":
        with anthropic.Anthropic(base_url=base, api_key="k", max_retries=0) as client:
            return client.post("/v1/messages", body=body, cast_to=object)
    with openai.OpenAI(base_url=base + "/v1", api_key="k", max_retries=0) as client:
        return client.post(PATHS[case.api].removeprefix("/v1"), body=body, cast_to=object)


def matches(expected: str, got: str) -> bool:
    return (
        re.search(expected[3:], got) is not None if expected.startswith("re:") else got == expected
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_strict_rejects_like_the_provider(
    server: ServerProcess, session: str, case: Case
) -> None:
    body = case.build(first_reply(server, case.api, case.scenario, case.setup))
    if case.api == "gemini":  # google.rpc status names, no param
        with pytest.raises(genai_errors.ClientError) as google:
            send(server, case, session, body)
        assert (google.value.code, google.value.status) == (400, "INVALID_ARGUMENT")
        assert matches(case.message, str(google.value.message)), google.value.message
        assert_logged(server, session, case, str(google.value.message))
        return
    error_class: type[anthropic.BadRequestError | openai.BadRequestError] = (
        anthropic.BadRequestError if case.api == "anthropic" else openai.BadRequestError
    )
    with pytest.raises(error_class) as caught:
        send(server, case, session, body)
    error = caught.value
    assert isinstance(error, (anthropic.BadRequestError, openai.BadRequestError))
    assert error.status_code == 400
    if case.api == "anthropic":
        assert (
            error.body["type"] == "error" and error.body["error"]["type"] == "invalid_request_error"
        )
        message = error.body["error"]["message"]
    else:
        got: Any = error.body
        message, param = got["message"], got.get("param")  # Kimi's envelope has none
        assert param == case.param and got["type"] == "invalid_request_error"
    assert matches(case.message, message), message
    assert_logged(server, session, case, message)


def assert_logged(server: ServerProcess, session: str, case: Case, message: str) -> None:
    entry = server.last(session)
    rule = case.rule.split("/")[0]
    assert entry["violations"][0] == {"rule": rule, "message": message}
    assert entry["response"]["error"] == {"kind": rule, "message": message}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_warn_serves_and_logs(warn_server: ServerProcess, session: str, case: Case) -> None:
    body = case.build(first_reply(warn_server, case.api, case.scenario, case.setup))
    send(warn_server, case, session, body)  # no exception: served
    entry = warn_server.last(session)
    assert entry["response"]["status"] == 200
    assert case.rule.split("/")[0] in [v["rule"] for v in entry["violations"]]


def test_off_skips_the_rules(session: str) -> None:
    with running_server("--validation", "off") as s:
        r = httpx.post(
            f"{s.url}/s/rules/{session}/v1/chat/completions",
            json={"model": "m", "messages": [USER, tool("call_x")], "tool_choice": "auto"},
        )
        assert r.status_code == 200 and s.last(session)["violations"] == []


def test_scenario_validation_key_overrides_the_server(server: ServerProcess, session: str) -> None:
    name = f"lenient-{session}"
    scenario = {"name": name, "validation": "warn", "turns": [{"reply": {"text": "served"}}]}
    assert httpx.post(f"{server.url}/_mockllm/scenarios", json=scenario).status_code == 201
    r = httpx.post(
        f"{server.url}/s/{name}/{session}/v1/chat/completions",
        json={"model": "m", "messages": [USER, tool("call_x")]},
    )
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "served"
    assert server.last(session)["violations"][0]["rule"] == "chat.tool_without_call"


def test_deepseek_flavor_flag_swaps_wordings(session: str) -> None:
    with running_server("--flavor", "deepseek") as s:
        r = httpx.post(
            f"{s.url}/s/rules/{session}/v1/chat/completions",
            json={"model": "deepseek-chat", "messages": [USER, tool("x")]},
        )
    assert r.status_code == 400
    assert r.json()["error"] == {
        "message": "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }


def test_every_rule_is_tested_and_documented() -> None:
    from mockllm.providers import ADAPTERS
    from tests.e2e.wires.test_bedrock_rules import RULES as BEDROCK  # both sides through boto3
    from tests.e2e.wires.test_mistral_e2e import RULES as MISTRAL  # through mistralai
    from tests.e2e.wires.test_ollama_e2e import RULES as OLLAMA  # through the ollama client

    names = {rule.name for adapter in ADAPTERS.values() for rule in adapter.rules.rules}
    tested = {name for name, _, _ in (*BEDROCK, *MISTRAL, *OLLAMA)}
    assert names == {c.rule.split("/")[0] for c in CASES} | tested
    from tests.support import ROOT

    doc = (ROOT / "docs" / "validation.md").read_text()
    assert all(f"`{name}`" in doc for name in names | {"history_diverged", "scenario_exhausted"})
