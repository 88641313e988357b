"""In-process: the output-format readers, structured replies, side-request rules, seeds and
keyed turns (docs/scenarios.md) — examples, and hypothesis over hostile values."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllm.core.conversation import Conversation, Message, OutputFormat, Tool, ToolResult
from mockllm.core.matching import UNMATCHED, WHY, differences, located
from mockllm.core.side import side_request
from mockllm.core.structured import structured
from mockllm.errors import RequestError
from mockllm.loading.loader import load_mapping
from mockllm.providers import output_formats
from mockllm.providers.gemini import field
from tests.support.hypothesis_profiles import examples

SETTINGS = settings(
    max_examples=examples(200), derandomize=True, suppress_health_check=list(HealthCheck)
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"],
    "additionalProperties": False,
}


def conv(*messages: Message, **kw: Any) -> Conversation:
    return Conversation("m", messages, **kw)


def test_each_wire_reads_its_json_request() -> None:
    chat = {"type": "json_schema", "json_schema": {"name": "w", "schema": SCHEMA}}
    assert output_formats.openai_chat(chat) == OutputFormat("json_schema", SCHEMA, "w")
    assert output_formats.openai_chat({"type": "json_object"}) == OutputFormat("json_object")
    assert output_formats.openai_chat({"type": "text"}) is None
    text = {"format": {"type": "json_schema", "name": "w", "schema": SCHEMA}}
    assert output_formats.openai_responses(text) == OutputFormat("json_schema", SCHEMA, "w")
    ga = {"output_config": {"format": {"type": "json_schema", "schema": SCHEMA}}}
    beta = {"output_format": {"type": "json_schema", "schema": SCHEMA}}
    assert output_formats.anthropic(ga) == output_formats.anthropic(beta) != None  # noqa: E711
    gemini = {"responseMimeType": "application/json", "responseSchema": {"type": "OBJECT"}}
    assert output_formats.gemini(gemini, field) == OutputFormat("json_schema", {"type": "object"})
    mode = {"response_mime_type": "application/json"}
    assert output_formats.gemini(mode, field) == OutputFormat("json_object")
    assert output_formats.gemini({"responseMimeType": "text/plain"}, field) is None


def test_gemini_schema_types_become_json_schema() -> None:
    found = output_formats.gemini(
        {
            "responseMimeType": "application/json",
            "responseSchema": {
                "type": "OBJECT",
                "properties": {"type": {"type": "STRING", "nullable": True}},
                "propertyOrdering": ["type"],
            },
        },
        field,
    )
    assert found is not None
    assert found.schema == {"type": "object", "properties": {"type": {"type": ["string", "null"]}}}


@SETTINGS
@given(JSON, JSON)
def test_the_readers_never_fail_on_any_value(value: Any, inner: Any) -> None:
    for reader in (output_formats.openai_chat, output_formats.openai_responses):
        reader(value)
        reader({"type": "json_schema", "json_schema": inner, "format": inner})
    output_formats.anthropic({"output_config": value, "output_format": inner})
    output_formats.gemini(value, field)
    output_formats.gemini({"responseMimeType": "application/json", "responseSchema": value}, field)


@SETTINGS
@given(JSON, st.sampled_from(["valid", "wrong_type", "not_json", "in_prose", "missing_required"]))
def test_structured_replies_from_any_schema_fail_only_as_a_400(schema: Any, kind: str) -> None:
    scenario = load_mapping({"name": "s", "turns": [{"reply": {"json": kind}}]})
    request = conv(Message("user", "x"), output=OutputFormat("json_schema", schema))
    try:
        reply = structured(scenario, 0, scenario.turns[0].reply, request, "turn 0")
    except RequestError as e:
        assert e.status == 400 and e.kind == "generate_failed"
        return
    assert isinstance(reply.text, str) and reply.json is None


def test_valid_passes_the_schema_and_is_deterministic() -> None:
    scenario = load_mapping({"name": "s", "turns": [{"reply": {"json": "valid"}}]})
    request = conv(Message("user", "x"), output=OutputFormat("json_schema", SCHEMA))
    texts = {structured(scenario, 0, scenario.turns[0].reply, request, "t").text for _ in "ab"}
    (text,) = texts
    jsonschema.validate(json.loads(text), SCHEMA)


SIDE = load_mapping(
    {
        "name": "side",
        "include": ["harness/opencode"],
        "side_requests": [
            {"name": "router", "match": {"json": True, "api": "gemini"}, "reply": {"json": "valid"}}
        ],
        "seed": [{"contains": "Got it."}],
        "turns": [
            {"match": {"tool_results": {"regex": "^ok"}}, "reply": {"text": "after"}},
            {"reply": {"text": "counted"}},
        ],
    }
)


def test_side_requests_in_order_own_first() -> None:
    title = conv(Message("system", "You are a title generator"), Message("user", "hi"))
    found = side_request(SIDE, title, "openai-chat")
    assert found is not None and found.rule.origin == "harness/opencode" and found.turn == -2
    asked = conv(Message("user", "x"), output=OutputFormat("json_object"))
    assert side_request(SIDE, asked, "openai-chat") is None
    router = side_request(SIDE, asked, "gemini")
    assert router is not None and router.rule.name == "router"
    offered = conv(*title.messages, tools=(Tool("read"),))
    assert differences(SIDE.side_requests[1].match, offered) == ["tools are offered (read)"]


def test_seeds_and_keyed_turns() -> None:
    seeded = conv(Message("user", "ctx"), Message("assistant", "Got it."), Message("user", "go"))
    picked = located(seeded, SIDE)  # the seed left out: turn 0 is due, and it is keyed
    assert picked.turn == 0 and len(picked.messages) == 2 and UNMATCHED in picked.memo
    replied = conv(*seeded.messages, Message("assistant", "after"), Message("user", "more"))
    counted = located(replied, SIDE)
    assert (counted.turn, counted.memo[WHY]) == (
        1,
        "counted: 1 assistant reply in the history (no keyed turn matched)",
    )
    results = conv(
        Message("user", "go"),
        Message("assistant", "calling"),
        Message("tool", tool_results=(ToolResult("c", "ok!"),)),
    )
    keyed = located(results, SIDE)
    assert (keyed.turn, keyed.memo[WHY]) == (0, "matched turn 0: a tool result matching /^ok/")
    none = located(conv(Message("user", "go")), SIDE)
    assert UNMATCHED in none.memo and "no turn of scenario 'side'" in str(none.memo[UNMATCHED])


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "system"]), st.text()), max_size=6))
def test_located_is_a_pure_function_of_the_request(messages: list[tuple[str, str]]) -> None:
    request = conv(*(Message(role, text) for role, text in messages))
    a, b = located(request, SIDE), located(request, SIDE)
    assert a.turn == b.turn and a.memo.get(WHY) == b.memo.get(WHY)
    assert isinstance(side_request(SIDE, request, "gemini") is None, bool)


@pytest.mark.parametrize("text", ["Got it.", "Got it. Thanks"])
def test_a_seed_is_never_a_reply_with_calls(text: str) -> None:
    from mockllm.core.conversation import ToolCall

    with_call = Message("assistant", text, tool_calls=(ToolCall("c", "read", "{}"),))
    assert located(conv(Message("user", "x"), with_call), SIDE).messages[1] is with_call


def test_every_bundled_rule_set_loads_and_none_is_a_scenario() -> None:
    from mockllm.loading.loader import BUNDLED, load_paths, rule_set, rule_set_names

    names = rule_set_names()
    assert names == [
        "harness/aider",
        "harness/claude-code",
        "harness/gemini-cli",
        "harness/opencode",
        "harness/qwen-code",
    ]
    for name in names:
        loaded = load_mapping({"name": "x", "include": [name], "turns": [{"reply": {}}]})
        assert rule_set(name) is not None and (loaded.side_requests or loaded.seeds)
    assert not any(
        s.source.endswith(tuple(n[8:] + ".yaml" for n in names)) for s in load_paths([BUNDLED])
    )
