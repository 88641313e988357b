"""The memory store: what `mockllm serve` keeps by default, the same way as before stores."""

from __future__ import annotations

from typing import Any

import pytest

from mockllm.core.conversation import Conversation, Message
from mockllm.core.scenario import Scenario
from mockllm.loading.loader import load_mapping
from mockllm.state import StoreBusy, StoreUnavailable, redacted
from mockllm.state.memory import MemoryState, MemoryStore
from mockllm.state.store import TRIES, answer_turn

from .stores import at_once, engine_of


def test_attempts_count_per_session_scenario_and_turn() -> None:
    state = MemoryState(10)
    counted = [
        state.begin("a", "x", 0)[0],
        state.begin("a", "x", 0)[0],
        state.begin("b", "x", 0)[0],
        state.begin("a", "y", 0)[0],
        state.begin("a", "x", 1)[0],
        state.begin("a", "x", 0)[0],
    ]
    assert counted == [1, 2, 1, 1, 1, 3]


def test_cuts_are_handed_back_per_scenario_until_a_whole_delivery() -> None:
    state = MemoryState(10)
    state.cut("a", "x", 0, "truncate on attempt 1")
    state.cut("a", "y", 2, "http 500 on attempt 1")
    assert state.begin("a", "x", 1)[1] == {0: "truncate on attempt 1"}
    assert state.begin("b", "x", 1)[1] == {}
    state.cut("a", "x", 0, None)
    assert state.begin("a", "x", 1)[1] == {}
    assert state.begin("a", "y", 3)[1] == {2: "http 500 on attempt 1"}


def test_past_max_sessions_the_least_recently_used_starts_afresh_cuts_and_all() -> None:
    state = MemoryState(2)
    state.begin("old", "x", 0)
    state.cut("old", "x", 0, "cut")
    state.begin("kept", "x", 0)
    state.begin("old", "x", 0)  # used again: "kept" is now the oldest
    state.begin("new", "x", 0)
    assert state.sessions() == 2
    assert state.begin("kept", "x", 0)[0] == 1  # forgotten; "old" is the oldest now
    assert state.begin("new", "x", 0)[0] == 2
    state.begin("old2", "x", 0)  # evicts "kept"... and "old" went before it, with its cut
    assert state.begin("old", "x", 0) == (1, {})


def test_reset_forgets_one_session_or_all() -> None:
    state = MemoryState(10)
    for session in ("a", "a", "b"):
        state.begin(session, "x", 0)
        state.cut(session, "x", 0, "cut")
    state.reset("a")
    assert state.begin("a", "x", 0) == (1, {})
    assert state.begin("b", "x", 0) == (2, {0: "cut"})
    state.reset()
    assert state.sessions() == 0 and state.begin("b", "x", 0) == (1, {})


def test_a_lost_store_is_named_without_its_password() -> None:
    lost = StoreUnavailable("redis://user:s3cret@db.internal:6379/2", "Connection refused")
    assert str(lost) == (
        "mockllm: the shared state store redis://user:***@db.internal:6379/2 is unreachable "
        "(Connection refused)"
    )
    assert redacted("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    assert redacted("redis://:pw@h:1/0") == "redis://:***@h:1/0"


def test_expected_says_what_begin_will_count_without_counting() -> None:
    state = MemoryState(10)
    assert state.expected("a", "x", 0) == (1, {})
    state.begin("a", "x", 0)
    state.cut("a", "x", 0, "cut")
    assert state.expected("a", "x", 0) == state.expected("a", "x", 0) == (2, {0: "cut"})
    assert state.begin("a", "x", 0) == (2, {0: "cut"})
    assert state.expected("b", "x", 0) == (1, {}) and state.sessions() == 1


def test_the_memory_store_never_suspends() -> None:
    """What the one serving path rests on (state/store.py): the default store's awaits cost
    a call each, never a trip through the event loop. `at_once` fails on a suspension."""
    engine = engine_of(load_mapping({"name": "x", "turns": [{"reply": {"text": "hi"}}]}))
    store, scenario = MemoryStore(engine, 10), engine.find("x")
    conv = Conversation("m", (Message("user", "hi", at="messages[0]"),))
    _, answer = at_once(answer_turn(store, engine, scenario, "s", conv, None, lambda _: ()))
    assert (answer.turn, answer.attempt) == (0, 1)
    expected = at_once(store.expect("s", "x", 0))
    assert expected.attempt == 2
    assert at_once(store.commit("s", scenario, 0, expected, "cut")) is None
    assert at_once(store.expect("s", "x", 1)).cuts == {0: "cut"}
    assert at_once(store.add(scenario, "")) is True
    at_once(store.refresh())
    at_once(store.keep_response("r", b"{}"))
    assert at_once(store.response("r")) is None and store.keeps_responses is False
    at_once(store.reset("s"))
    assert at_once(store.expect("s", "x", 0)).attempt == 1


def test_the_memory_stores_one_pass_counts_and_cuts_as_answer_turn_does() -> None:
    """`MemoryStore.answer` (the default serving path) and `answer_turn` (every other
    store's) share one count: either one's request is the next attempt, and a stalled
    attempt's cut is recorded, then cleared by a whole delivery (the fault's times spent)."""
    engine = engine_of(
        load_mapping(
            {"name": "x", "turns": [{"fault": {"stall": True, "times": 1}, "reply": {"text": "a"}}]}
        )
    )
    store, scenario = MemoryStore(engine, 10), engine.find("x")
    conv = Conversation("m", (Message("user", "hi", at="messages[0]"),))
    first = store.answer(engine, scenario, "s", conv, None, ())
    assert (first.turn, first.attempt, first.fault is not None) == (0, 1, True)
    assert at_once(store.expect("s", "x", 1)).cuts == {0: first.cut}
    _, second = at_once(answer_turn(store, engine, scenario, "s", conv, None, lambda _: ()))
    third = store.answer(engine, scenario, "s", conv, None, ())
    assert (second.attempt, third.attempt, third.fault, third.cut) == (2, 3, None, None)
    assert at_once(store.expect("s", "x", 1)).cuts == {}


def test_a_store_that_keeps_changing_under_a_request_is_a_503_saying_so() -> None:
    """Only scenarios posted anew between each read and count (another server's POSTs) make
    a request give up: its 503 says that, not that the store is unreachable."""
    scenario = load_mapping({"name": "x", "turns": [{"reply": {"text": "a"}}]})
    engine = engine_of(scenario)

    class Posting(MemoryStore):
        async def commit(self, *args: Any, **kwargs: Any) -> Scenario:
            return scenario  # "load the new scenarios, answer again", every time

    store = Posting(engine, 10)
    conv = Conversation(model="m", messages=(Message("user", "hi"),))
    with pytest.raises(StoreBusy) as busy:
        at_once(answer_turn(store, engine, scenario, "s", conv, None, lambda _: ()))
    assert str(busy.value) == (
        "mockllm: the shared state store memory: its run-time scenarios were posted anew "
        f"{TRIES} times while this request was answered; nothing was counted: send it again"
    )
    assert "unreachable" not in str(busy.value)
