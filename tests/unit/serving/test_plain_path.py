"""A plain scenario's request (no side request, fault, chaos, seed or keyed turn: decided
at load, `Scenario.plain`) is answered by `Engine.plain`, which skips the checks such a
scenario can never need and hands every request it has something to say of to
`Engine.answer`. The two paths must send the same bytes and leave the same log entries:
held here over every bundled scenario and over generated scenarios and requests, against
the same server with `Engine.plain` turned off (every request then takes `answer`)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllm.core.engine import Engine
from mockllm.core.scenario import Scenario
from mockllm.loading.loader import load_mapping, load_paths
from mockllm.options import DEFAULTS
from mockllm.serving.server import build_app
from tests.unit.asgi import post

BUNDLED = Path(__file__).parents[3] / "scenarios"
CHAT = "/s/{}/one/v1/chat/completions"
Request = tuple[str, dict[str, Any]]


def served(
    scenarios: list[Scenario], requests: list[Request], plain: bool, validation: str = "warn"
) -> tuple[list[tuple[int, bytes]], list[dict[str, Any]]]:
    """What the server sends for each request, and its log entries (clocks left out)."""
    app = build_app(scenarios, replace(DEFAULTS, validation=validation))

    async def run() -> list[tuple[int, bytes]]:
        return [await post(app, path, json.dumps(body).encode()) for path, body in requests]

    if plain:
        sent = asyncio.run(run())
    else:
        with mock.patch.object(Engine, "plain", lambda *_: None):
            sent = asyncio.run(run())
    logged = []
    for entry in app.journal.entries():
        shown = entry.to_json()
        for drawn in ("time", "duration_ms", "epoch"):
            shown.pop(drawn, None)
        logged.append(shown)
    return sent, logged


def same_either_way(
    scenarios: list[Scenario], requests: list[Request], validation: str = "warn"
) -> list[tuple[int, bytes]]:
    fast = served(scenarios, requests, plain=True, validation=validation)
    slow = served(scenarios, requests, plain=False, validation=validation)
    assert fast[0] == slow[0]
    assert fast[1] == slow[1]
    return fast[0]


def _tool(name: str, strict: bool = False) -> dict[str, Any]:
    parameters: dict[str, Any] = {"type": "object", "properties": {"city": {"type": "string"}}}
    if strict:
        parameters |= {"required": ["city"], "additionalProperties": False}
    function = {"name": name, "parameters": parameters, **({"strict": True} if strict else {})}
    return {"type": "function", "function": function}


def _next_turn(body: dict[str, Any], answered: bytes) -> dict[str, Any] | None:
    """`body` with the reply it got and a result for each call: the next turn's request
    (None when the reply was cut short: a fault's)."""
    try:
        message = json.loads(answered)["choices"][0]["message"]
    except (ValueError, KeyError, IndexError):
        return None
    messages = [*body["messages"], {k: v for k, v in message.items() if v is not None}]
    for call in message.get("tool_calls") or ():
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": "25 22"})
    return {**body, "messages": [*messages, {"role": "user", "content": "go on"}]}


def _loop(scenario: Scenario, strict: bool) -> list[Request]:
    """Three turns of an agent loop against `scenario`, each sent twice (a retry), with a
    stream and a request breaking a rule (a tool result answering no call) besides."""
    path = CHAT.format(scenario.name)
    tools = [_tool(name, strict) for name in scenario.tools() or ("get_weather",)]
    body: dict[str, Any] = {"model": "m", "tools": tools}
    body["messages"] = [{"role": "user", "content": "北京 上海 weather"}]
    requests: list[Request] = []
    for _ in range(3):
        requests += [(path, body), (path, body), (path, {**body, "stream": True})]
        app = build_app([scenario])
        status, answered = asyncio.run(post(app, path, json.dumps(body).encode()))
        following = _next_turn(body, answered) if status == 200 else None
        if following is None:
            break
        body = following
    stray = {"role": "tool", "tool_call_id": "call_none", "content": "x"}
    requests.append((path, {**body, "messages": [*body["messages"], stray]}))
    return requests


BUNDLED_SCENARIOS = load_paths([BUNDLED])


@pytest.mark.parametrize("scenario", BUNDLED_SCENARIOS, ids=lambda s: s.name)
@pytest.mark.parametrize("validation", ["warn", "strict"])
def test_every_bundled_scenario_answers_the_same_on_either_path(
    scenario: Scenario, validation: str
) -> None:
    same_either_way([scenario], _loop(scenario, strict=False), validation)
    same_either_way([scenario], _loop(scenario, strict=True), validation)


def test_the_plan_is_decided_at_load_and_only_for_plain_scenarios() -> None:
    by_name = {s.name: s for s in BUNDLED_SCENARIOS}
    assert by_name["hello"].plain is not None
    assert by_name["weather-parallel"].plain is not None
    assert by_name["weather-parallel"].plain.calls
    assert by_name["rate-limited"].plain is None  # a fault
    assert by_name["near-miss-tool"].plain is not None
    near = by_name["near-miss-tool"]
    assert not all(t.reply.fixed for t in near.turns)  # its wrong name is made per request
    assert all(t.reply.fixed for t in by_name["hello"].turns)


def test_a_plain_request_skips_the_full_answer_and_another_takes_it() -> None:
    scenario = load_mapping({"name": "p", "turns": [{"reply": {"text": "hi"}}]})
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    with mock.patch.object(Engine, "answer", side_effect=AssertionError("not plain")):
        ((status, _),), _ = served([scenario], [(CHAT.format("p"), body)], plain=True)
    assert status == 200
    late = {"model": "m", "messages": [*body["messages"], {"role": "assistant", "content": "a"}]}
    ((status, sent),), _ = served([scenario], [(CHAT.format("p"), late)], plain=True)
    assert status == 400 and b"scenario_exhausted" in sent  # `answer` says why


NAMES = st.sampled_from(["get_weather", "search"])
CALLS = st.lists(
    st.fixed_dictionaries({"name": NAMES, "arguments": st.just({"city": "x"})}),
    min_size=1,
    max_size=2,
)
REPLIES = st.one_of(
    st.fixed_dictionaries({"text": st.sampled_from(["hi", "done", ""])}),
    st.fixed_dictionaries({"tool_calls": CALLS}),
    st.fixed_dictionaries({"text": st.just("near"), "tool_calls": st.just(
        [{"name": {"near_miss": "get_weather"}, "arguments": {"city": "x"}}]
    )}),
)  # fmt: skip
TURNS = st.lists(
    st.fixed_dictionaries(
        {"reply": REPLIES},
        optional={"expect": st.fixed_dictionaries({"tools": st.just(["get_weather"])})},
    ),
    min_size=1,
    max_size=3,
)
SCENARIOS = st.builds(
    lambda turns, repeat, mode: {
        "name": "g",
        "turns": [*turns[:-1], {**turns[-1], "repeat": repeat}],
        **({"validation": mode} if mode else {}),
    },
    TURNS,
    st.booleans(),
    st.sampled_from([None, "strict", "warn", "off"]),
)
HISTORY = st.lists(
    st.one_of(
        st.just({"role": "assistant", "content": "hi"}),
        st.builds(
            lambda names: {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"call_{i}", "type": "function",
                     "function": {"name": n, "arguments": '{"city":"x"}'}}
                    for i, n in enumerate(names)
                ],
            },
            st.lists(NAMES, min_size=1, max_size=2),
        ),
    ),
    max_size=3,
)  # fmt: skip
CHOICES = st.sampled_from(
    [None, "none", "auto", "required", {"type": "function", "function": {"name": "search"}}]
)


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "北京"}]
    for said in draw(HISTORY):
        messages.append(said)
        for call in said.get("tool_calls", ()):
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": "25"})
        messages.append({"role": "user", "content": "and?"})
    tools = [_tool(n, draw(st.booleans())) for n in draw(st.lists(NAMES, unique=True))]
    body: dict[str, Any] = {"model": "m", "messages": messages, "stream": draw(st.booleans())}
    if tools:
        body["tools"] = tools
        if (choice := draw(CHOICES)) is not None:
            body["tool_choice"] = choice
        if draw(st.booleans()):
            body["parallel_tool_calls"] = False
    return body


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(SCENARIOS, st.lists(requests(), min_size=1, max_size=3), st.sampled_from(["warn", "strict"]))
def test_generated_scenarios_and_requests_answer_the_same_on_either_path(
    mapping: dict[str, Any], bodies: list[dict[str, Any]], validation: str
) -> None:
    scenario = load_mapping(mapping)
    assert scenario.plain is not None
    path = CHAT.format("g")
    same_either_way([scenario], [(path, b) for b in [*bodies, *bodies]], validation)
