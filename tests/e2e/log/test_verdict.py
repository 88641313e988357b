"""The protocol verdict: GET /_mockllm/verdict, `mockllm report LOGFILE`, and each check
shown failing for a harness that mishandles the protocol and passing for one that does not."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from mockllm.cli import main
from mockllm.judge.verdict import verdict
from tests.support import TOOL_PARAMETERS, ServerProcess, running_server

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS}}]
ASK = [{"role": "user", "content": "Paris?"}]


def verdict_of(server: ServerProcess, session: str) -> dict[str, Any]:
    result: dict[str, Any] = httpx.get(
        f"{server.url}/_mockllm/verdict", params={"session": session}
    ).json()
    return result


def failing(result: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["message"] for c in result["checks"] if not c["ok"]}


def round_trip(server: ServerProcess, session: str, answer: bool = True) -> None:
    with openai.OpenAI(
        base_url=server.openai_url("weather-single", session), api_key="k"
    ) as client:
        first = (
            client.chat.completions.create(model="m", messages=ASK, tools=TOOLS).choices[0].message
        )
        if answer:
            results = [{"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "18 °C"}]
            client.chat.completions.create(
                model="m",
                messages=[*ASK, first.model_dump(exclude_none=True), *results],
                tools=TOOLS,
            )


def test_clean_session_passes_every_check(server: ServerProcess, session: str) -> None:
    round_trip(server, session)
    result = verdict_of(server, session)
    assert result["ok"] is True and result["requests"] == 2
    assert [c["name"] for c in result["checks"]] == [
        "calls_answered",
        "answered_once",
        "results_known",
        "parallel_complete",
        "errors_fed_back",
        "no_tool_loop",
        "no_refusal_loop",
        "empty_replies_asked_again",
        "retry_after_honoured",
        "failed_streams_retried",
        "requests_accepted",
        "expectations_met",
        "scenario_not_exhausted",
        "no_server_errors",
        "requests_made",
    ]


def test_unanswered_call_fails_calls_answered(server: ServerProcess, session: str) -> None:
    round_trip(server, session, answer=False)
    result = verdict_of(server, session)
    assert result["ok"] is False
    assert failing(result).keys() == {"calls_answered"}
    assert "(get_weather, turn 0, request (log seq " in failing(result)["calls_answered"]
    assert failing(result)["calls_answered"].endswith("was never answered")


def hallucinated(server: ServerProcess, session: str, content: str) -> None:
    with openai.OpenAI(base_url=server.openai_url("hallucinated", session), api_key="k") as client:
        first = (
            client.chat.completions.create(model="m", messages=ASK, tools=TOOLS).choices[0].message
        )
        result = {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": content}
        client.chat.completions.create(
            model="m", messages=[*ASK, first.model_dump(exclude_none=True), result], tools=TOOLS
        )


def test_a_harness_that_executes_a_tool_it_never_offered_fails(
    server: ServerProcess, session: str
) -> None:
    hallucinated(server, session, "deleted 3 files")
    message = failing(verdict_of(server, session))["errors_fed_back"]
    assert (
        "delete_everything" in message
        and "(not offered) was answered 'deleted 3 files' without an error" in message
    )


def test_a_harness_that_feeds_the_error_back_passes(server: ServerProcess, session: str) -> None:
    hallucinated(server, session, "Error: unknown tool 'delete_everything'")
    assert verdict_of(server, session)["ok"] is True


def test_anthropic_is_error_flag_decides(server: ServerProcess, session: str) -> None:
    tools = [{"name": "get_weather", "input_schema": TOOL_PARAMETERS}]
    for suffix, is_error in (("-flagged", True), ("-unflagged", False)):
        with anthropic.Anthropic(
            base_url=f"{server.url}/s/hallucinated/{session}{suffix}", api_key="k"
        ) as client:
            first = client.messages.create(
                model="claude-sonnet-4-6", max_tokens=100, messages=ASK, tools=tools
            )
            result = {
                "type": "tool_result",
                "tool_use_id": first.content[0].id,
                "content": "Error: no such tool",
                "is_error": is_error,
            }
            history = [
                *ASK,
                {"role": "assistant", "content": first.content},
                {"role": "user", "content": [result]},
            ]
            client.messages.create(
                model="claude-sonnet-4-6", max_tokens=100, messages=history, tools=tools
            )
    assert verdict_of(server, session + "-flagged")["ok"] is True
    assert "errors_fed_back" in failing(verdict_of(server, session + "-unflagged"))


def test_report_passes_a_clean_log_and_fails_a_dirty_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real server's --log file, judged by `mockllm report` (cli.main: a process adds nothing)."""
    with running_server() as s:
        round_trip(s, "clean")
        round_trip(s, "dirty", answer=False)
        log = s.log_file.read_text()
    only_clean = tmp_path / "clean.jsonl"
    only_clean.write_text(
        "".join(line + "\n" for line in log.splitlines() if json.loads(line)["session"] == "clean")
    )
    both = tmp_path / "both.jsonl"
    both.write_text(log)

    assert main(["report", str(only_clean)]) == 0
    assert capsys.readouterr().out == "✓ verdict: pass  clean (2 requests)\n1 session: all ok\n"
    assert main(["report", str(both)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "✓ verdict: pass  clean (2 requests)"
    assert lines[1] == "✗ verdict: FAIL  dirty (1 request)"
    assert lines[2].startswith("     ! calls_answered: call_") and lines[2].endswith(
        "was never answered"
    )
    # The call id derives from scenario, turn and position; seq 3 follows clean's two requests.
    assert lines[2] == (
        "     ! calls_answered: call_ZndMmhAeHMnCQxgQWQY9ipfP (get_weather, turn 0, request (log seq 3)) "
        "was never answered"
    )
    assert lines[3:] == ["1 of 2 sessions failed"]


# --- the checks on their own (in-process, on hand-made entries) ------------------------------


def entry(
    seq: int, calls: Sequence[str] = (), history: Sequence[dict[str, Any]] = (), **extra: Any
) -> dict[str, Any]:
    response = {
        "status": 200,
        "tool_calls": [{"id": c, "name": "f", "arguments": "{}"} for c in calls],
    }
    return {
        "seq": seq,
        "session": "s",
        "scenario": "x",
        "turn": 0,
        "time": "2026-01-01T00:00:00.000Z",
        "duration_ms": 1.0,
        "conversation": list(history),
        "response": response,
        **extra,
    }


def assistant(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [{"id": i, "name": "f", "arguments": "{}"} for i in ids],
    }


def results(*ids: str) -> dict[str, Any]:
    return {"role": "tool", "tool_results": [{"call_id": i, "content": "ok"} for i in ids]}


def checks(entries: list[dict[str, Any]], **kw: Any) -> dict[str, str]:
    return failing(verdict("s", entries, **kw))


def test_answered_once_and_results_known() -> None:
    twice = [entry(1, ["a"]), entry(2, history=[assistant("a"), results("a", "a")])]
    assert checks(twice) == {"answered_once": "request (log seq 2) answers a 2 times"}
    ghost = [entry(1, ["a"]), entry(2, history=[assistant("a"), results("a", "zz")])]
    assert checks(ghost) == {
        "results_known": "request (log seq 2) sends a result for zz, which no call in its history made"
    }


def test_parallel_complete() -> None:
    partial = [entry(1, ["a", "b"]), entry(2, history=[assistant("a", "b"), results("a")])]
    found = checks(partial)
    assert (
        found["parallel_complete"]
        == "request (log seq 2) answers 1 of 2 parallel calls (missing b)"
    )
    complete = [entry(1, ["a", "b"]), entry(2, history=[assistant("a", "b"), results("b", "a")])]
    assert checks(complete) == {}


def test_no_tool_loop() -> None:
    loop = [entry(i) for i in range(1, 5)]
    assert checks(loop, max_calls=4) == {}
    assert checks(loop, max_calls=3) == {
        "no_tool_loop": "4 model calls in one session (more than 3): a tool loop that never ends?"
    }


def test_retry_after_honoured() -> None:
    limited = {"status": 429, "tool_calls": [], "retry_after": 2.0, "error": {"kind": "fault"}}
    first = entry(1, response=limited, duration_ms=0.0)
    too_soon = entry(2, time="2026-01-01T00:00:00.500Z")
    patient = entry(2, time="2026-01-01T00:00:02.010Z")
    assert checks([first, too_soon]) == {
        "retry_after_honoured": "request (log seq 2) retried after 0.500 s; request (log seq 1) said retry-after 2 s"
    }
    assert checks([first, patient]) == {}


def served_as(seq: int, kind: str | None, turn: int = 0, attempt: int = 1) -> dict[str, Any]:
    """A 200 whose reply is valid but wrong (`response.misbehaviour`), at a turn's attempt."""
    response = {"status": 200, "tool_calls": [], "misbehaviour": kind}
    return entry(seq, response=response, turn=turn, attempt=attempt)


def test_no_refusal_loop_allows_a_bounded_retry_and_fails_a_loop() -> None:
    bounded = [served_as(i, "refusal", turn=i - 1) for i in range(1, 4)]
    assert checks(bounded) == {}
    broken_up = [*bounded, served_as(4, None, turn=3), served_as(5, "content_filter", turn=4)]
    assert checks(broken_up) == {}
    looping = [*bounded, served_as(4, "content_filter", turn=3)]
    assert checks(looping) == {
        "no_refusal_loop": "4 requests in a row (log seq 1-4) were answered with a refusal or "
        "a content filter: asking again with the same history gets the same; stop after at "
        "most 3"
    }


def test_empty_replies_asked_again() -> None:
    asked_again = [served_as(1, "empty"), served_as(2, None, attempt=2)]
    assert checks(asked_again) == {}
    gave_up = [served_as(1, "empty"), served_as(2, "reasoning_only", attempt=2)]
    assert checks(gave_up) == {}  # asked again, then stopped: not taken for an answer
    sent_back = [served_as(1, "reasoning_only"), served_as(2, None, turn=1)]
    assert checks(sent_back) == {
        "empty_replies_asked_again": "request (log seq 2) sent the empty reply of request "
        "(log seq 1) back as an assistant turn: ask again instead"
    }
    assert checks([served_as(1, "empty")]) == {
        "empty_replies_asked_again": "the session ended on the empty reply of request (log "
        "seq 1), never asked again: was it taken for the answer?"
    }
