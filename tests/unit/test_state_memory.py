"""The memory store: what `mockllm serve` keeps by default, the same way as before stores."""

from __future__ import annotations

from mockllm.state import StoreUnavailable, redacted
from mockllm.state.memory import MemoryState


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
