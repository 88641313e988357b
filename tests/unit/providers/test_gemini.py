"""`mockllm.providers.gemini` in-process: parsing (both spellings, turns, pairing), the exact
bytes rendered (whole calls, signatures, unsendable arguments), errors and the history rules
(tests/e2e/wires/test_gemini_e2e.py drives the same through the real SDKs over HTTP)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockllm.core.conversation import ToolChoice
from mockllm.core.engine import Resolved
from mockllm.core.faults import stream_delivery
from mockllm.core.scenario import Fault, Scenario, Truncate
from mockllm.core.validation import RuleContext
from mockllm.errors import RequestError
from mockllm.loading.loader import load_mapping
from mockllm.providers.base import Parsed
from mockllm.providers.gemini import Gemini, json_schema
from mockllm.providers.gemini_rules import RULES
from mockllm.state.memory import MemoryStore
from mockllm.state.store import answer_turn

from ..stores import at_once, engine_of

ROUTE = "v1beta/models/gemini-2.5-flash:generateContent"
STREAM = "v1/models/gemini-3-pro-preview:streamGenerateContent"
GEMINI = Gemini()


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": args}}


def answer(name: str, value: Any, **extra: Any) -> dict[str, Any]:
    return {"functionResponse": {"name": name, "response": value, **extra}}


def resolve(
    turns: list[dict[str, Any]], body: dict[str, Any], route: str = ROUTE
) -> tuple[Resolved, Parsed]:
    scenario: Scenario = load_mapping({"name": "unit", "turns": turns})
    parsed = GEMINI.parse_at(body, route)
    engine = engine_of(scenario)
    store, conv = MemoryStore(engine, 1), parsed.conversation
    answered = at_once(answer_turn(store, engine, scenario, "s", conv, None, lambda _: ()))[1]
    assert answered.resolved is not None, answered.error
    return answered.resolved, parsed


# --- parsing --------------------------------------------------------------------------------


def test_path_says_model_and_stream_and_both_spellings_are_read() -> None:
    body = {
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "contents": [user("Paris?")],
        "tools": [
            {
                "function_declarations": [
                    {"name": "a", "parameters_json_schema": {"type": "object"}}
                ]
            },
            {
                "functionDeclarations": [
                    {"name": "b", "parameters": {"type": "OBJECT", "nullable": True}}
                ]
            },
            {"googleSearch": {}},
        ],
        "tool_config": {
            "function_calling_config": {"mode": "ANY", "allowed_function_names": ["b"]}
        },
    }
    conv = GEMINI.parse_at(body, STREAM).conversation
    assert (conv.model, conv.stream, conv.system) == ("gemini-3-pro-preview", True, "Be brief.")
    assert [(t.name, t.parameters) for t in conv.tools] == [
        ("a", {"type": "object"}),
        ("b", {"type": ["object", "null"]}),
    ]
    assert conv.tool_choice == ToolChoice("tool", "b")


@pytest.mark.parametrize(
    ("config", "choice"),
    [
        ({"mode": "AUTO"}, ToolChoice("auto")),
        ({"mode": "VALIDATED"}, ToolChoice("auto")),
        ({"mode": "NONE"}, ToolChoice("none")),
        ({"mode": "ANY"}, ToolChoice("required")),
        ({"mode": "ANY", "allowedFunctionNames": ["a", "b"]}, ToolChoice("required")),
        ({}, ToolChoice("auto")),
    ],
)
def test_function_calling_config_as_tool_choice(config: dict[str, Any], choice: ToolChoice) -> None:
    body = {"contents": [user("x")], "toolConfig": {"functionCallingConfig": config}}
    assert GEMINI.parse_at(body, ROUTE).conversation.tool_choice == choice


def test_model_contents_merge_into_one_turn_and_results_pair() -> None:
    """Streamed AFC replays one model content per chunk; results answer by id, else by name
    in order; a result for no call stays unpaired."""
    body = {
        "contents": [
            user("Weather and time?"),
            {"role": "model", "parts": [{"text": "Check"}, {"text": "ing.", "thought": False}]},
            {"role": "model", "parts": [{"text": "hmm", "thought": True}, call("w", city="P")]},
            {"role": "model", "parts": [{"functionCall": {"id": "t1", "name": "t", "args": None}}]},
            {
                "role": "user",
                "parts": [
                    answer("t", {"result": "noon"}, id="t1"),
                    answer("w", {"error": "down"}),
                    answer("x", {"a": 1, "b": 2}),
                    {"text": "thanks"},
                ],
            },
        ]
    }
    conv = GEMINI.parse_at(body, ROUTE).conversation
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "user"]
    reply = conv.messages[1]
    assert (reply.text, reply.reasoning, reply.at) == ("Checking.", "hmm", "contents[1]")
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("turn0.call0", "w", '{"city":"P"}'),
        ("turn0.call1", "t", "{}"),
    ]
    assert [
        (r.call_id, r.content, r.is_error, r.paired) for r in conv.messages[2].tool_results
    ] == [
        ("turn0.call1", "noon", False, "by id"),
        ("turn0.call0", "down", True, "by name and position"),
        ("x", '{"a":1,"b":2}', False, "unpaired"),
    ]
    assert conv.turn == 1 and conv.latest_user_text == "thanks"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"contents": []}, "* GenerateContentRequest.contents: contents is not specified\n"),
        (
            {"contents": [user("a"), {"role": "model", "parts": []}]},
            "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.\n",
        ),
        (
            {"contents": [{"role": "system", "parts": [{"text": "x"}]}]},
            "Please use a valid role: user, model.",
        ),
        ({"contents": "x"}, "Invalid value at 'contents': expected a list of Content objects."),
        ({"contents": [1]}, "Invalid value at 'contents[0]': expected a Content object."),
        (
            {"contents": [user("a")], "systemInstruction": 1},
            "Invalid value at 'system_instruction': expected a Content object.",
        ),
        (
            {"contents": [user("a")], "tools": {}},
            "Invalid value at 'tools': expected a list of Tool objects.",
        ),
        (
            {"contents": [user("a")], "tools": [{"functionDeclarations": [{}]}]},
            "* GenerateContentRequest.tools[0].function_declarations[0].name: Name cannot be empty.\n",
        ),
        (
            {"contents": [user("a")], "toolConfig": {"functionCallingConfig": {"mode": "X"}}},
            "Invalid value at 'tool_config.function_calling_config.mode', \"X\"",
        ),
        ([], "Invalid JSON payload received. Expected an object."),
    ],
)
def test_malformed_requests_are_refused_in_the_api_s_words(body: Any, message: str) -> None:
    with pytest.raises(RequestError) as refused:
        GEMINI.parse_at(body, ROUTE)
    assert (refused.value.status, refused.value.message) == (400, message)
    assert json.loads(GEMINI.error_body(refused.value, ""))["error"]["status"] == "INVALID_ARGUMENT"


def test_gemini_schema_dialect_reads_as_json_schema() -> None:
    schema = {
        "type": "OBJECT",
        "properties": {"tags": {"type": "ARRAY", "items": {"type": "STRING"}}},
        "any_of": [{"type": "INTEGER"}],
        "required": ["tags"],
    }
    assert json_schema(schema) == {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
        "anyOf": [{"type": "integer"}],
        "required": ["tags"],
    }


# --- rendering ------------------------------------------------------------------------------


WEATHER = [
    {
        "reply": {
            "reasoning": "Use the tool.",
            "text": "Checking.",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        }
    }
]


def test_a_reply_renders_with_thought_text_call_and_usage() -> None:
    resolved, parsed = resolve(WEATHER, {"contents": [user("Paris?")]})
    body = json.loads(GEMINI.render(resolved, parsed).data)
    assert body["candidates"] == [
        {
            "content": {
                "parts": [
                    {"text": "Use the tool.", "thought": True},
                    {"text": "Checking."},
                    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                ],
                "role": "model",
            },
            "finishReason": "STOP",
            "index": 0,
        }
    ]
    usage = body["usageMetadata"]
    assert usage["thoughtsTokenCount"] == resolved.reasoning_tokens
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + resolved.output_tokens
    assert body["modelVersion"] == "gemini-2.5-flash" and len(body["responseId"]) == 23


def test_stream_frames_and_a_cut_inside_a_whole_call() -> None:
    resolved, parsed = resolve(WEATHER, {"contents": [user("Paris?")]}, STREAM)
    events = GEMINI.render_stream(resolved, parsed).events
    assert [e.part for e in events] == ["reasoning", "text", "call:0", "tail"]
    assert all(e.data.startswith(b"data: {") and e.data.endswith(b"}\r\n\r\n") for e in events)
    parts = [json.loads(e.data[6:])["candidates"][0]["content"]["parts"] for e in events]
    signed = parts[2][0]
    assert signed["thoughtSignature"] and "thoughtSignature" not in parts[1][0]  # Gemini 3
    assert parts[3] == [{"text": ""}]
    cut = stream_delivery(Fault(Truncate(call=0)), events, None).chunks
    assert cut[:2] == [events[0].data, events[1].data]
    assert cut[2] == events[2].data[: events[2].inside] and b'"args":{"ci' in cut[2]


@pytest.mark.parametrize(
    ("finish", "reason"), [("tool_calls", "MALFORMED_FUNCTION_CALL"), ("length", "MAX_TOKENS")]
)
def test_arguments_that_are_not_an_object_are_sent_as_no_content(finish: str, reason: str) -> None:
    turns = [
        {
            "reply": {
                "text": "x",
                "tool_calls": [{"name": "f", "arguments": '{"a": '}],
                "finish": finish,
            }
        }
    ]
    resolved, parsed = resolve(turns, {"contents": [user("?")]})
    plain = json.loads(GEMINI.render(resolved, parsed).data)
    (frame,) = GEMINI.render_stream(resolved, parsed).events
    assert plain == json.loads(frame.data[6:]) and plain["candidates"] == [
        {"finishReason": reason, "index": 0}
    ]
    assert set(plain["usageMetadata"]) == {"promptTokenCount", "totalTokenCount"}
    sent = GEMINI.as_sent(resolved).reply
    assert (sent.text, sent.tool_calls) == ("", ())
    (note,) = GEMINI.render(resolved, parsed).notes
    assert note.endswith(f"finishReason {reason} with no content")
    assert GEMINI.render_stream(resolved, parsed).notes == (note,)  # the stream says it too
    assert GEMINI.as_sent(resolve(WEATHER, {"contents": [user("?")]})[0]) is not None


def test_errors_carry_status_names_and_retry_info() -> None:
    fault = GEMINI.fault_error(429, headers=(("retry-after", "26"),))
    assert json.loads(GEMINI.error_body(fault, ""))["error"] == {
        "code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details. "
        "For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "26s"}],
    }
    overloaded = GEMINI.fault_error(529)
    assert (overloaded.status, overloaded.error_type) == (503, "UNAVAILABLE")
    assert GEMINI.fault_error(418).error_type == "INVALID_ARGUMENT"
    assert GEMINI.fault_error(502).error_type == "INTERNAL"
    (frame,) = GEMINI.stream_error_events(GEMINI.fault_error(500), 3)
    assert frame.startswith(b'data: {"error":{"code":500,') and frame.endswith(b"\r\n\r\n")
    assert json.loads(GEMINI.model_body("models/x"))["name"] == "models/x"
    assert len(json.loads(GEMINI.models_body())["models"]) >= 3


# --- rules ----------------------------------------------------------------------------------


def violations(contents: list[Any], model: str = "gemini-2.5-flash") -> list[str]:
    body = {"contents": contents}
    conv = GEMINI.parse_at(body, f"v1beta/models/{model}:generateContent").conversation
    scenario = load_mapping({"name": "r", "turns": [{"reply": {"text": "x"}}]})
    return [v.rule for v in RULES.run(body, RuleContext(conv, scenario))]


def test_the_rules_read_turns() -> None:
    reply = {"role": "model", "parts": [call("a"), call("b")]}
    assert (
        violations(
            [user("q"), reply, {"role": "user", "parts": [answer("a", {}), answer("b", {})]}]
        )
        == []
    )
    assert violations([user("q"), reply, {"role": "user", "parts": [answer("a", {})]}]) == [
        "gemini.response_count"
    ]
    assert violations([user("q"), {"role": "user", "parts": [answer("a", {})]}]) == [
        "gemini.response_without_call"
    ]
    assert violations([reply]) == ["gemini.call_without_user_turn"]
    split = [
        user("q"),
        {"role": "model", "parts": [{"text": "t"}]},
        {"role": "model", "parts": [call("a")]},
    ]
    assert violations([*split, {"role": "user", "parts": [answer("a", {})]}]) == []


def test_gemini_3_wants_the_signature_back_on_each_step_since_the_user_spoke() -> None:
    unsigned = {"role": "model", "parts": [call("a")]}
    signed = {"role": "model", "parts": [{**call("a"), "thoughtSignature": "c2ln"}]}
    back = {"role": "user", "parts": [answer("a", {})]}
    assert violations([user("q"), unsigned, back], "gemini-3-pro-preview") == [
        "gemini.thought_signature_missing"
    ]
    assert violations([user("q"), signed, back], "gemini-3-pro-preview") == []
    assert (
        violations([user("q"), unsigned, back, user("next"), signed, back], "gemini-3-pro-preview")
        == []
    )
    assert violations([user("q"), unsigned, back], "gemini-2.5-flash") == []
