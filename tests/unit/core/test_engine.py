"""`Engine.answer`, branch by branch: the turn a request asks for, attempts, exhaustion,
rule violations and divergence in each validation mode, expectations, and the fault chosen
(scripted, or a chaos draw pinned to its exact values so a seed replays across releases)."""

from __future__ import annotations

from typing import Any

import pytest

from mockllm.core.conversation import (
    Conversation,
    Message,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
)
from mockllm.core.engine import CHAOS_FAULTS, FIXED_CREATED, Answer, Engine, chaos_draw
from mockllm.core.scenario import Chaos, Fault, HttpFault, Scenario, ValidationMode
from mockllm.core.validation import Violation
from mockllm.errors import Finding, RequestError
from mockllm.loading.loader import load_mapping
from mockllm.state.memory import MemoryStore
from mockllm.state.store import answer_turn

from ..stores import ENGINE_DEFAULTS, at_once

WEATHER = load_mapping(
    {
        "name": "weather",
        "turns": [
            {"reply": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}},
            {
                "expect": {"tool_results": [{"contains": "18"}]},
                "reply": {"text": "18 °C in Paris."},
            },
        ],
    }
)
HELLO = load_mapping({"name": "hello", "turns": [{"reply": {"text": "Hello!"}}]})
ASK = Message("user", "Paris?", at="messages[0]")
TOOLS = (Tool("get_weather", {"type": "object"}),)


def call_id(scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
    """Stands for an adapter's ids: what the client must send back (a retry's its own)."""
    return f"call_{turn}_{index}" + (f"_{attempt}" if attempt > 1 else "")


def make_engine(*scenarios: Scenario, **options: Any) -> WithMemory:
    return WithMemory(scenarios or (WEATHER, HELLO), **{**ENGINE_DEFAULTS, **options})


class WithMemory(Engine):
    """The engine with the store a server in memory gives it."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.store = MemoryStore(self, 10_000)

    def reset(self, session: str | None = None) -> None:
        at_once(self.store.reset(session))


def conv(*messages: Message, tools: tuple[Tool, ...] = TOOLS) -> Conversation:
    return Conversation("gpt-4o-mini", (ASK, *messages), tools)


def called(call: str = "call_0_0", arguments: str = '{"city":"Paris"}') -> Message:
    return Message(
        "assistant", tool_calls=(ToolCall(call, "get_weather", arguments),), at="messages[1]"
    )


def answered(content: str = "18 °C", call: str = "call_0_0") -> Message:
    return Message("tool", tool_results=(ToolResult(call, content),), at="messages[2]")


SECOND_TURN = conv(called(), answered())


def answer(engine: Engine, scenario: Scenario, conversation: Conversation, **kw: Any) -> Answer:
    assert isinstance(engine, WithMemory)
    session, found = kw.pop("session", "s"), kw.pop("violations", ())
    checks = lambda _: found  # noqa: E731
    call_id = kw.pop("call_id", None)
    assert not kw, kw
    turn = answer_turn(engine.store, engine, scenario, session, conversation, call_id, checks)
    return at_once(turn)[1]


def refused(result: Answer) -> tuple[int, str, str]:
    assert result.error is not None and result.resolved is None and result.fault is None
    return result.error.status, result.error.kind, result.error.message


# --- turns and attempts ----------------------------------------------------------------------


def test_the_turn_is_the_number_of_assistant_replies_in_the_request() -> None:
    engine = make_engine()
    first = answer(engine, WEATHER, conv())
    assert (first.turn, first.attempt, first.error) == (0, 1, None)
    assert first.resolved is not None and first.resolved.reply is WEATHER.turns[0].reply
    second = answer(engine, WEATHER, SECOND_TURN, call_id=call_id)
    assert (second.turn, second.attempt, second.error) == (1, 1, None)
    assert second.resolved is not None and second.resolved.reply.text == "18 °C in Paris."


def test_attempts_count_per_session_scenario_and_turn() -> None:
    engine = make_engine()
    attempts = [
        answer(engine, WEATHER, conv(), session="a").attempt,
        answer(engine, WEATHER, conv(), session="a").attempt,
        answer(engine, WEATHER, conv(), session="b").attempt,
        answer(engine, HELLO, conv(), session="a").attempt,
        answer(engine, WEATHER, SECOND_TURN, session="a").attempt,
        answer(engine, WEATHER, conv(), session="a").attempt,
    ]
    assert attempts == [1, 2, 1, 1, 1, 3]


def test_refused_requests_count_as_attempts_too() -> None:
    engine = make_engine()
    broken = (Violation("C1", "bad"),)
    assert answer(engine, WEATHER, conv(), violations=broken).attempt == 1
    assert answer(engine, WEATHER, conv()).attempt == 2


def test_reset_forgets_one_session_or_all() -> None:
    engine = make_engine()
    for session in ("a", "a", "b"):
        answer(engine, HELLO, conv(), session=session)
    engine.reset("a")
    assert answer(engine, HELLO, conv(), session="a").attempt == 1
    assert answer(engine, HELLO, conv(), session="b").attempt == 2
    engine.reset()
    assert answer(engine, HELLO, conv(), session="b").attempt == 1


@pytest.mark.parametrize("mode", ["strict", "warn", "off"])
def test_past_the_last_turn_is_refused_in_every_mode(mode: ValidationMode) -> None:
    result = answer(make_engine(validation=mode), HELLO, conv(Message("assistant", "Hello!")))
    message = (
        "scenario 'hello' has no turn 1: the request's history holds 1 assistant reply, so it "
        "asks for turn 1, and the scenario has only turn 0. Add a turn to the scenario, or set "
        "`repeat: true` on its last turn to answer every later request with it"
    )
    assert refused(result) == (400, "scenario_exhausted", message)
    assert result.error is not None and result.error.code == "scenario_exhausted"
    assert result.violations == [Finding("scenario_exhausted", message)]


def test_a_repeating_last_turn_answers_every_later_turn() -> None:
    looping = load_mapping(
        {
            "name": "loop",
            "turns": [{"reply": {"text": "a"}}, {"reply": {"text": "b"}, "repeat": True}],
        }
    )
    history = tuple(Message("assistant", "x") for _ in range(5))
    result = answer(make_engine(looping), looping, conv(*history))
    assert result.turn == 5 and result.resolved is not None
    assert result.resolved.reply.text == "b" and result.resolved.turn == 5


# --- provider rules and divergence, by mode ----------------------------------------------------

BROKEN = (Violation("C1", "first", param="messages[1]", code="c1"), Violation("C2", "second"))


def test_strict_refuses_with_the_first_violation_and_logs_all() -> None:
    result = answer(make_engine(), WEATHER, conv(), violations=BROKEN)
    assert refused(result) == (400, "C1", "first")
    assert result.error is not None and (result.error.param, result.error.code) == (
        "messages[1]",
        "c1",
    )
    assert result.violations == [Finding("C1", "first"), Finding("C2", "second")]


def test_warn_logs_violations_and_serves() -> None:
    result = answer(make_engine(validation="warn"), WEATHER, conv(), violations=BROKEN)
    assert result.error is None and result.resolved is not None
    assert result.violations == [Finding("C1", "first"), Finding("C2", "second")]


def test_a_scenario_s_own_mode_overrides_the_server_s() -> None:
    lenient = load_mapping(
        {"name": "lenient", "validation": "warn", "turns": [{"reply": {"text": "ok"}}]}
    )
    engine = make_engine(lenient, validation="strict")
    assert engine.mode(lenient) == "warn" and engine.mode(HELLO) == "strict"
    assert answer(engine, lenient, conv(), violations=BROKEN).error is None


def test_no_violation_shares_one_empty_list() -> None:
    assert answer(make_engine(), HELLO, conv()).violations == []


MANGLED = conv(called("call_mine"), answered(call="call_mine"))
DIVERGED = (
    "mockllm history diverged at messages[1] (the reply of turn 0): "
    "tool_calls[0].id: expected 'call_0_0', got 'call_mine'"
)


def test_strict_refuses_a_diverged_history() -> None:
    result = answer(make_engine(), WEATHER, MANGLED, call_id=call_id)
    assert refused(result) == (400, "history_diverged", DIVERGED)
    assert result.error is not None and result.error.code == "history_diverged"
    assert result.violations == [Finding("history_diverged", DIVERGED)]


def test_warn_logs_a_diverged_history_and_serves() -> None:
    result = answer(make_engine(validation="warn"), WEATHER, MANGLED, call_id=call_id)
    assert result.error is None and result.resolved is not None
    assert result.violations == [Finding("history_diverged", DIVERGED)]


def test_off_and_a_wire_without_ids_skip_the_divergence_check() -> None:
    assert answer(make_engine(validation="off"), WEATHER, MANGLED, call_id=call_id).violations == []
    assert answer(make_engine(), WEATHER, MANGLED).violations == []


def test_past_the_script_only_exhaustion_is_reported() -> None:
    """Divergence compares the turns the script has; what lies past them is exhaustion's."""
    history = conv(Message("assistant", "Hello!"), Message("assistant", "again"))
    result = answer(make_engine(), HELLO, history, call_id=call_id)
    assert [f.rule for f in result.violations] == ["scenario_exhausted"]


def test_a_turn_that_cannot_be_made_concrete_now_is_not_compared() -> None:
    """Turn 0 generated its arguments from the tools offered then; a request that no longer
    offers the tool cannot resolve it again, so there is nothing to compare against."""
    generated = load_mapping(
        {
            "name": "gen",
            "turns": [
                {"reply": {"tool_calls": [{"name": "get_weather", "generate": "valid"}]}},
                {"reply": {"text": "done"}},
            ],
        }
    )
    history = conv(called("call_mine"), answered(call="call_mine"), tools=())
    result = answer(make_engine(generated), generated, history, call_id=call_id)
    assert result.violations == [] and result.resolved is not None


def test_a_rule_violation_is_the_answer_and_divergence_is_still_logged() -> None:
    result = answer(make_engine(), WEATHER, MANGLED, violations=BROKEN[:1], call_id=call_id)
    assert refused(result)[1] == "C1"
    assert result.violations == [Finding("C1", "first"), Finding("history_diverged", DIVERGED)]


def test_a_refusal_before_exhaustion_keeps_its_answer_and_logs_both() -> None:
    result = answer(
        make_engine(), HELLO, conv(Message("assistant", "Hello!")), violations=BROKEN[:1]
    )
    assert refused(result)[1] == "C1"
    assert [f.rule for f in result.violations] == ["C1", "scenario_exhausted"]


# --- expectations ------------------------------------------------------------------------------

UNMET = (
    "mockllm expectation failed: turn 1: result of call 0 (get_weather call_0_0): "
    "expected a result containing '18', got '25 °C'"
)


@pytest.mark.parametrize("mode", ["strict", "warn", "off"])
def test_a_failed_expectation_is_refused_in_every_mode(mode: ValidationMode) -> None:
    result = answer(make_engine(validation=mode), WEATHER, conv(called(), answered("25 °C")))
    assert refused(result) == (400, "expectation_failed", UNMET)
    assert result.expectation_failures == [Finding("expect.tool_results", UNMET.split(": ", 1)[1])]
    assert result.violations == []


def test_every_failed_expectation_is_in_the_message() -> None:
    picky = load_mapping(
        {
            "name": "picky",
            "turns": [{"expect": {"model": "gpt-5", "stream": True}, "reply": {"text": "x"}}],
        }
    )
    result = answer(make_engine(picky), picky, conv())
    assert refused(result)[2] == (
        "mockllm expectation failed: turn 0: expected the model equal to 'gpt-5', got 'gpt-4o-mini'; "
        "turn 0: expected a streaming request, got stream=False"
    )
    assert [f.rule for f in result.expectation_failures] == ["expect.model", "expect.stream"]


def test_a_rule_violation_comes_before_a_failed_expectation() -> None:
    result = answer(make_engine(), WEATHER, conv(called(), answered("25 °C")), violations=BROKEN)
    assert refused(result)[1] == "C1"
    assert len(result.expectation_failures) == 1


def test_generate_without_the_tool_offered_is_refused() -> None:
    generated = load_mapping(
        {
            "name": "gen",
            "turns": [{"reply": {"tool_calls": [{"name": "get_weather", "generate": "valid"}]}}],
        }
    )
    result = answer(make_engine(generated), generated, conv(tools=()))
    assert refused(result) == (
        400,
        "generate_failed",
        "mockllm: scenario 'gen' turn 0 call 0: generate: valid needs the tool 'get_weather' "
        "in the request's tools (offered: none)",
    )


# --- what is served ----------------------------------------------------------------------------


def test_created_is_fixed_unless_real_time(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed = answer(make_engine(), HELLO, conv()).resolved
    assert fixed is not None and fixed.created == FIXED_CREATED == 1735689600
    monkeypatch.setattr("mockllm.core.engine.time.time", lambda: 1767225600.9)
    real = answer(make_engine(real_time=True), HELLO, conv()).resolved
    assert real is not None and real.created == 1767225600


def test_token_counts_are_about_four_characters_a_token() -> None:
    resolved = answer(make_engine(), WEATHER, SECOND_TURN, call_id=call_id).resolved
    assert resolved is not None
    # In: "Paris?" 6 + "get_weather" 11 + '{"city":"Paris"}' 16 + "18 °C" 5 = 38 characters.
    # Out: "18 °C in Paris." = 15 characters.
    assert (resolved.input_tokens, resolved.output_tokens, resolved.reasoning_tokens) == (10, 4, 0)


def test_scripted_usage_and_reasoning_tokens() -> None:
    thinking = load_mapping(
        {
            "name": "thinking",
            "turns": [
                {"reply": {"text": "ok", "reasoning": "r" * 9, "usage": {"input": 7, "output": 3}}}
            ],
        }
    )
    resolved = answer(make_engine(thinking), thinking, conv()).resolved
    assert resolved is not None
    assert (resolved.input_tokens, resolved.output_tokens, resolved.reasoning_tokens) == (7, 3, 3)


def test_an_empty_reply_still_counts_one_token() -> None:
    empty = load_mapping({"name": "empty", "turns": [{"reply": {}}]})
    resolved = answer(make_engine(empty), empty, Conversation("m", ())).resolved
    assert resolved is not None and (resolved.input_tokens, resolved.output_tokens) == (1, 1)


def test_the_same_request_resolves_to_the_same_object() -> None:
    engine, request = make_engine(), conv()
    first = answer(engine, HELLO, request, session="a").resolved
    second = answer(engine, HELLO, request, session="b").resolved  # attempt 1 of its own
    assert first is second
    other = answer(engine, HELLO, conv(), session="c").resolved
    assert other == first and other is not first
    retried = answer(engine, HELLO, request, session="a").resolved  # attempt 2: its own ids
    assert retried is not None and retried.attempt == 2 and retried != first


# --- faults ------------------------------------------------------------------------------------

RATE_LIMITED = Fault(HttpFault(429), times=2)
FLAKY = load_mapping(
    {
        "name": "flaky",
        "turns": [{"fault": {"http": {"status": 429}, "times": 2}, "reply": {"text": "at last"}}],
    }
)


def test_a_scripted_fault_lasts_its_times() -> None:
    engine = make_engine(FLAKY)
    results = [answer(engine, FLAKY, conv()) for _ in range(3)]
    assert [(r.fault, r.fault_why) for r in results] == [
        (RATE_LIMITED, "scripted: attempt 1 of times: 2"),
        (RATE_LIMITED, "scripted: attempt 2 of times: 2"),
        (None, ""),
    ]
    assert all(r.resolved is not None for r in results)  # the reply is rendered even when faulted


def test_a_scripted_fault_without_times_fires_every_attempt() -> None:
    always = load_mapping(
        {"name": "always", "turns": [{"fault": {"stall": True}, "reply": {"text": "x"}}]}
    )
    engine = make_engine(always)
    whys = [answer(engine, always, conv()).fault_why for _ in range(2)]
    assert whys == ["scripted: attempt 1", "scripted: attempt 2"]


def test_a_refused_request_gets_no_fault() -> None:
    result = answer(make_engine(FLAKY), FLAKY, conv(), violations=BROKEN)
    assert result.fault is None and result.fault_why == ""


def test_chaos_draws_are_pinned() -> None:
    """The draw is a pure function of (seed, session, scenario, turn, attempt): these exact
    values are what makes a failing run with the same seed replay on any machine or release."""
    assert [round(chaos_draw(0, "s", "flaky", 0, attempt), 4) for attempt in range(1, 9)] == [
        0.9205,
        0.8676,
        0.0286,
        0.4771,
        0.8737,
        0.6471,
        0.6698,
        0.0541,
    ]
    assert round(chaos_draw(7, "s", "flaky", 0, 1), 4) == 0.7378


def test_chaos_picks_the_kind_whose_band_holds_the_draw() -> None:
    plain = load_mapping({"name": "flaky", "turns": [{"reply": {"text": "x"}}]})
    engine = make_engine(plain, chaos=Chaos((("429", 0.3), ("truncate", 0.3))))
    results = [answer(engine, plain, conv()) for _ in range(8)]
    assert [r.fault for r in results] == [
        None,
        None,
        CHAOS_FAULTS["429"],
        CHAOS_FAULTS["truncate"],
        None,
        None,
        None,
        CHAOS_FAULTS["429"],
    ]
    assert results[2].fault_why == "chaos: seed 0, draw 0.0286 < 0.3000 (429 at 0.3)"
    assert results[3].fault_why == "chaos: seed 0, draw 0.4771 < 0.6000 (truncate at 0.3)"
    assert results[0].fault_why == ""


def test_a_scenario_s_chaos_and_its_seed_override_the_server_s() -> None:
    chaotic = load_mapping(
        {
            "name": "flaky",
            "chaos": {"stream_error": 1.0, "seed": 7},
            "turns": [{"reply": {"text": "x"}}],
        }
    )
    engine = make_engine(chaotic, chaos=Chaos((("429", 1.0),)), seed=3)
    result = answer(engine, chaotic, conv())
    assert result.fault == CHAOS_FAULTS["stream_error"]
    assert result.fault_why == "chaos: seed 7, draw 0.7378 < 1.0000 (stream_error at 1)"


def test_the_server_seed_is_used_when_the_chaos_names_none() -> None:
    engine = make_engine(HELLO, chaos=Chaos((("delay", 1.0),)), seed=3)
    result = answer(engine, HELLO, conv())
    assert result.fault == CHAOS_FAULTS["delay"]
    assert result.fault_why.startswith("chaos: seed 3, draw ")


def test_a_scripted_fault_comes_before_chaos_and_keeps_its_turn_from_it() -> None:
    engine = make_engine(FLAKY, chaos=Chaos((("500", 1.0),)))
    faults = [answer(engine, FLAKY, conv()).fault for _ in range(3)]
    assert faults == [RATE_LIMITED, RATE_LIMITED, None]  # then served, as `times: 2` says


def test_chaos_http_faults_ask_for_a_fast_retry() -> None:
    for kind in ("429", "500", "503", "529"):
        http = CHAOS_FAULTS[kind].part
        assert isinstance(http, HttpFault) and http.status == int(kind)
        assert http.headers == (("retry-after-ms", "20"),)


# --- finding scenarios -------------------------------------------------------------------------


def test_find_by_name_then_default() -> None:
    engine = make_engine(default="hello")
    assert engine.find("weather") is WEATHER and engine.find(None) is HELLO


def test_find_an_unknown_name() -> None:
    with pytest.raises(RequestError) as raised:
        make_engine().find("nope")
    error = raised.value
    assert (error.status, error.kind, error.code) == (
        404,
        "scenario_not_found",
        "scenario_not_found",
    )
    assert error.message == "mockllm: no scenario named 'nope'; scenarios: hello, weather"


def test_find_without_a_name_or_default() -> None:
    with pytest.raises(RequestError) as raised:
        Engine(
            [],
            default=None,
            validation="strict",
            real_time=False,
            flavor="openai",
            chaos=None,
            seed=0,
        ).find(None)
    assert raised.value.message == (
        "mockllm: no scenario chosen: use the path /s/NAME/..., the header X-Mockllm-Scenario, "
        "or start the server with --default; scenarios: none"
    )


def test_add_replaces_by_name() -> None:
    engine = make_engine(HELLO)
    other = load_mapping(
        {"name": "hello", "flavor": "deepseek", "turns": [{"reply": {"text": "hi"}}]}
    )
    assert engine.add(WEATHER) is False and engine.add(other) is True
    assert engine.find("hello") is other
    assert (other.flavor, WEATHER.flavor) == ("deepseek", None)


# --- replies no model could give (core/possible.py) ----------------------------------------

ONE_CALL = {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}
TWO_CALLS = {
    "tool_calls": [
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "get_time", "arguments": {"city": "Paris"}},
    ]
}
TEXT = {"text": "It is sunny."}
WEATHER_AND_TIME = (Tool("get_weather", {"type": "object"}), Tool("get_time", {"type": "object"}))


@pytest.mark.parametrize(
    ("reply", "tools", "choice", "parallel", "why"),
    [
        (ONE_CALL, (), None, True, "scripts a call (get_weather), but the request offers no tools"),
        (ONE_CALL, TOOLS, ToolChoice("none"), True, "but the request says tool_choice none"),
        (TEXT, TOOLS, ToolChoice("required"), True, "requires one (tool_choice required)"),
        (TEXT, TOOLS, ToolChoice("tool", "get_weather"), True, "(tool_choice {tool: get_weather})"),
        (ONE_CALL, TOOLS, ToolChoice("tool", "lookup"), True, "forces the tool 'lookup'"),
        (TWO_CALLS, WEATHER_AND_TIME, None, False, "2 calls in one reply, but the request turns"),
    ],
    ids=["no tools", "none", "required", "named, text", "named, other", "parallel off"],
)
@pytest.mark.parametrize("mode", ["strict", "warn", "off"])
def test_a_reply_no_model_could_give_is_refused_logged_or_served(
    reply: dict[str, Any],
    tools: tuple[Tool, ...],
    choice: ToolChoice | None,
    parallel: bool,
    why: str,
    mode: ValidationMode,
) -> None:
    scenario = load_mapping({"name": "bound", "turns": [{"reply": reply}]})
    request = Conversation("m", (ASK,), tools, tool_choice=choice, parallel_tool_calls=parallel)
    result = answer(make_engine(scenario, validation=mode), scenario, request)
    found = [f for f in result.violations if f.rule == "impossible_reply"]
    if mode == "off":
        assert result.resolved is not None and found == []
        return
    assert len(found) == 1 and why in found[0].message
    assert found[0].message.startswith("mockllm: turn 0 of scenario 'bound' ")
    if mode == "strict" and tools:
        assert refused(result) == (400, "impossible_reply", found[0].message)
    else:  # warn; and a call offered no tools, served and logged in strict mode too
        assert result.resolved is not None and result.error is None
        assert ("served as scripted" in found[0].message) == (not tools)


@pytest.mark.parametrize(
    ("reply", "tools", "choice", "parallel"),
    [
        (TEXT, (), None, True),
        (TEXT, TOOLS, ToolChoice("none"), True),
        (ONE_CALL, TOOLS, ToolChoice("required"), False),
        (ONE_CALL, TOOLS, ToolChoice("tool", "get_weather"), True),
        (TWO_CALLS, WEATHER_AND_TIME, None, True),
        ({"tool_calls": [{"name": "made_up", "arguments": {}}]}, TOOLS, None, True),
    ],
    ids=["text, no tools", "text, none", "required", "named", "parallel", "hallucinated name"],
)
def test_a_reply_a_model_could_give_is_served(
    reply: dict[str, Any], tools: tuple[Tool, ...], choice: ToolChoice | None, parallel: bool
) -> None:
    scenario = load_mapping({"name": "bound", "turns": [{"reply": reply}]})
    request = Conversation("m", (ASK,), tools, tool_choice=choice, parallel_tool_calls=parallel)
    result = answer(make_engine(scenario), scenario, request)
    assert result.resolved is not None and result.violations == []
