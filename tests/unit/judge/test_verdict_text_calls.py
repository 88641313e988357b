"""The verdict on calls a harness carried as text (smolagents): the message that follows
the assistant text naming the call is its answer, for `calls_answered` and
`errors_fed_back`; a call no later request names stays unanswered."""

from __future__ import annotations

from typing import Any

from mockllm.judge.verdict import verdict

CALL = {"id": "call_A", "name": "get_weather", "arguments": "{}"}


def entry(seq: int, conversation: list[dict[str, Any]], calls: Any = ()) -> dict[str, Any]:
    return {
        "seq": seq,
        "time": "2026-01-01T00:00:00Z",
        "turn": seq - 1,
        "api": "openai-chat",
        "conversation": conversation,
        "response": {"status": 200, "tool_calls": list(calls)},
    }


def failed(*entries: dict[str, Any]) -> dict[str, str]:
    checks = verdict("s", list(entries))["checks"]
    return {c["name"]: c["message"] for c in checks if c["status"] == "failed"}


ASK = {"role": "user", "text": "Weather?"}


def test_an_observation_after_the_call_as_text_answers_it() -> None:
    later = [ASK, {"role": "assistant", "text": "Calling tools:\n[{'id': 'call_A'}]"}]
    later.append({"role": "user", "text": "Observation:\n18"})
    assert failed(entry(1, [ASK], [CALL]), entry(2, later)) == {}


def test_a_call_never_carried_back_is_unanswered() -> None:
    later = [ASK, {"role": "assistant", "text": "Calling tools: call_B"}, ASK]
    assert (
        "call_A (get_weather, turn 0, request (log seq 1)) was never answered"
        in (failed(entry(1, [ASK], [CALL]), entry(2, later))["calls_answered"])
    )


def test_a_bad_call_carried_as_text_needs_an_error_in_its_observation() -> None:
    bad = {**CALL, "problem": "the tool 'get_weather' was not offered"}
    said = [ASK, {"role": "assistant", "text": "call_A"}, {"role": "user", "text": "18"}]
    assert "errors_fed_back" in failed(entry(1, [ASK], [bad]), entry(2, said))
    said[2] = {"role": "user", "text": "Error: unknown tool"}
    assert failed(entry(1, [ASK], [bad]), entry(2, said)) == {}
