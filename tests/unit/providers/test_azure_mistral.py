"""Azure OpenAI and Mistral in-process (tests/e2e/wires/test_azure_e2e.py and test_mistral_e2e.py
drive them over HTTP with their SDKs): Azure's routes and annotations, the prompt filter's
envelope and its scenario key, Mistral's ids, whole streamed calls, envelope and rule M1."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from mockllm.core.conversation import Conversation
from mockllm.core.engine import Resolved
from mockllm.core.scenario import CONTENT_FILTER_MESSAGE, HttpFault
from mockllm.core.validation import RuleContext
from mockllm.errors import RequestError, ScenarioError
from mockllm.loading.loader import load_mapping, load_text
from mockllm.providers.chat_flavour_rules import RULES
from mockllm.providers.flavoured_chat import FlavouredChat
from mockllm.serving.routing import Routes

M1 = "mistral.tool_call_id_format"
SCENARIO = load_mapping(
    {
        "name": "w",
        "turns": [
            {"reply": {"tool_calls": [{"name": "a", "arguments": {"x": 1}}, {"name": "b"}]}},
            {"reply": {"text": "done"}},
            {"reply": {"text": "cut", "finish": "content_filter"}},
        ],
    }
)


def adapter(flavor: str) -> FlavouredChat:
    chat = FlavouredChat()
    chat.flavor = flavor
    return chat


def resolved(turn: int) -> Resolved:
    return Resolved(SCENARIO, turn, SCENARIO.turns[turn].reply, 3, 5, 1, 1735689600)


def body(flavor: str, turn: int, route: str = "v1/chat/completions") -> dict[str, Any]:
    chat = adapter(flavor)
    parsed = chat.parse_at({"model": "m", "messages": [{"role": "user", "content": "q"}]}, route)
    return dict(json.loads(chat.render(resolved(turn), parsed).data))


def frames(flavor: str, turn: int) -> list[Any]:
    chat = adapter(flavor)
    parsed = chat.parse({"model": "m", "messages": [{"role": "user", "content": "q"}]})
    events = chat.render_stream(resolved(turn), parsed).events
    return [json.loads(e.data[6:]) for e in events if e.data != b"data: [DONE]\n\n"]


def test_azure_routes_pick_the_azure_flavour_and_the_deployment_as_model() -> None:
    routes = Routes([adapter("openai")])
    route = "openai/deployments/my-gpt/chat/completions"
    found = routes.post(route)
    assert found is not None and found.for_route(route).flavor == "azure"
    assert routes.post("openai/v1/chat/completions") is found
    assert found.for_route("v1/chat/completions") is found
    assert routes.split(f"/s/x/{route}") == ("x", None, route)
    assert routes.split(f"/s/x/sess/{route}") == ("x", "sess", route)
    assert body("azure", 1, route)["model"] == "my-gpt"
    chat, ask = adapter("openai"), [{"role": "user", "content": "q"}]
    named = chat.parse_at({"model": "my-gpt", "messages": ask}, route)
    unnamed = chat.parse_at({"messages": ask}, route)  # AzureChatOpenAI with azure_deployment
    assert named.cacheable and unnamed.conversation.model == "my-gpt"
    assert not unnamed.cacheable  # the log keeps it parsed: its bytes name no model


def test_azure_annotates_bodies_and_opens_streams_with_the_prompt_results() -> None:
    calls, text, cut = body("azure", 0), body("azure", 1), body("azure", 2)
    assert calls["choices"][0]["content_filter_results"] == {}
    assert set(text["choices"][0]["content_filter_results"]) == {
        "hate",
        "self_harm",
        "sexual",
        "violence",
    }
    assert cut["choices"][0]["content_filter_results"]["violence"]["filtered"] is True
    assert list(text) == sorted(text) and "service_tier" not in text
    (opening, *rest) = frames("azure", 1)
    assert opening["choices"] == [] and opening["prompt_filter_results"][0]["prompt_index"] == 0
    assert all("content_filter_results" in f["choices"][0] for f in rest if f["choices"])


def test_the_prompt_filter_envelope_on_azure_and_elsewhere() -> None:
    error = adapter("azure").fault_error(400, None, CONTENT_FILTER_MESSAGE, "content_filter")
    error.param, error.filtered = "prompt", ("jailbreak", "high")
    azure = json.loads(adapter("azure").error_body(error, ""))["error"]
    assert (azure["code"], azure["param"], azure["status"], azure["type"]) == (
        "content_filter",
        "prompt",
        400,
        None,
    )
    result = azure["innererror"]["content_filter_result"]
    assert result["jailbreak"] == {"filtered": True, "detected": True}
    assert result["violence"] == {"filtered": False, "severity": "safe"}
    plain = json.loads(adapter("openai").error_body(error, ""))["error"]
    assert set(plain) == {"message", "type", "param", "code"} and plain["code"] == "content_filter"


def test_the_content_filter_fault_loads_and_its_mistakes_are_located() -> None:
    fault = (
        load_mapping({"name": "f", "turns": [{"fault": {"content_filter": {"category": "hate"}}}]})
        .turns[0]
        .fault
    )
    assert fault is not None and fault.part == HttpFault(
        400, None, CONTENT_FILTER_MESSAGE, "content_filter", filtered=("hate", "high")
    )
    assert fault.describe() == "HTTP 400 (content filter: hate)"
    bad = "name: f\nturns:\n  - fault:\n      content_filter: {category: gore}\n"
    with pytest.raises(ScenarioError) as raised:
        load_text(bad, "f.yaml")
    assert "f.yaml:4" in str(raised.value) and "content_filter.category" in str(raised.value)


def test_mistral_ids_bodies_and_whole_streamed_calls() -> None:
    whole = body("mistral", 0)
    assert re.fullmatch(r"[0-9a-f]{32}", whole["id"]) and list(whole) == [
        "id",
        "object",
        "created",
        "model",
        "choices",
        "usage",
    ]
    message = whole["choices"][0]["message"]
    ids = [c["id"] for c in message["tool_calls"]]
    assert all(re.fullmatch(r"[a-zA-Z0-9]{9}", i) for i in ids) and len(set(ids)) == 2
    assert message["content"] == "" and [c["index"] for c in message["tool_calls"]] == [0, 1]
    pieces = [
        c for f in frames("mistral", 0) for c in f["choices"][0]["delta"].get("tool_calls") or []
    ]
    assert [c["function"]["arguments"] for c in pieces] == ['{"x":1}', "{}"]
    assert "usage" in frames("mistral", 0)[-1]


def test_mistral_error_envelope_is_flat() -> None:
    error = RequestError(400, "nope", code="3280")
    assert json.loads(adapter("mistral").error_body(error, "")) == {
        "object": "error",
        "message": "nope",
        "type": "invalid_function_call",
        "param": None,
        "code": "3280",
    }


@pytest.mark.parametrize(
    ("ident", "refused"),
    [("abcDEF123", False), ("call_abc12", True), ("abc12345", True), ("abc-12345", True)],
)
def test_rule_m1_reads_call_ids_and_tool_answers(ident: str, refused: bool) -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": ident, "function": {"name": "a"}}]},
        {"role": "tool", "tool_call_id": ident, "content": "r"},
    ]
    ctx = RuleContext(Conversation("m", ()), SCENARIO, "mistral")
    found = [v for v in RULES.run({"messages": messages}, ctx) if v.rule == M1]
    assert bool(found) == refused
    if refused:
        assert found[0].message == (
            f"Tool call id was {ident} but must be a-z, A-Z, 0-9, with a length of 9."
        )
    other = RULES.run({"messages": messages}, RuleContext(Conversation("m", ()), SCENARIO))
    assert not [v for v in other if v.rule == M1]
