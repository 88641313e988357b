"""The checks over a session's log that both clients raise (mockllm/judge/checks.py), as
`POST /_mockllm/check` runs them for the Node client: both sides of each, the words the
Python assertions print, and a spec from a request that is wrong is a ValueError (the
route's 400), never another exception."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.judge import calls, checks
from mockllm.log.records import LogEntry
from mockllm.testing import assertions
from tests.support.hypothesis_profiles import examples


def entry(seq: int, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "turn": seq - 1, "api": "openai-chat", "conversation": [], **fields}


def called(seq: int, *names: str, tools: tuple[str, ...] = ("get_weather",)) -> dict[str, Any]:
    tool_calls = [{"id": f"c{seq}{n}", "name": n, "arguments": "{}"} for n in names]
    return entry(seq, tools=list(tools), response={"status": 200, "tool_calls": tool_calls})


def answering(seq: int, call_id: str, content: str, **result: Any) -> dict[str, Any]:
    results = [{"call_id": call_id, "content": content, **result}]
    history = [{"role": "tool", "tool_results": results}]
    return entry(seq, tools=[], conversation=history, tool_results=results)


def ran(seq: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    mcp = {"server": "shop", "method": "tools/call", "tool": tool, "arguments": arguments}
    return {"seq": seq, "api": "mcp", "mcp": mcp, "response": {"status": 200}}


ANSWERED = [called(1, "get_weather"), answering(2, "c1get_weather", "25°")]
UNANSWERED = [called(1, "get_weather"), entry(2, response={"status": 200})]
# the second request offers no tools, yet carries a result for a call the first offered
UNOFFERED = [called(1, "search", tools=("read_file",)), answering(2, "c1search", "found it")]
MCP = [ran(1, "lookup_order", {"order_id": "A2024"}), entry(2, response={"status": 200})]


def logged(raw: list[dict[str, Any]]) -> list[LogEntry]:
    return [LogEntry.from_json(e) for e in raw]


def run(raw: list[dict[str, Any]], **spec: Any) -> calls.Failure | None:
    return checks.run_check(raw, spec, lambda: {"session": "s", "ok": True, "checks": []})


def test_all_tool_calls_answered_both_sides() -> None:
    assert run(ANSWERED, check="all_tool_calls_answered") is None
    failure = run(UNANSWERED, check="all_tool_calls_answered")
    assert failure is not None and failure.headline == "1 tool call never got a result"
    assert failure.happened == [
        "get_weather({}) id=c1get_weather, sent in reply to request 1 (turn 0), was never answered"
    ]


def test_no_unoffered_tool_executed_both_sides_and_the_refusal_pattern() -> None:
    assert run(ANSWERED, check="no_unoffered_tool_executed") is None
    failure = run(UNOFFERED, check="no_unoffered_tool_executed")
    assert failure is not None
    assert failure.happened == [
        "request 2 sent a result for search (c1search): 'found it'; offered were: read_file"
    ]
    # a Node RegExp /FOUND/i arrives as "(?i)FOUND" (clients/node/src/assertions.ts)
    assert run(UNOFFERED, check="no_unoffered_tool_executed", refusal="(?i)FOUND") is None
    assert run(UNOFFERED, check="no_unoffered_tool_executed", refusal="FOUND") is not None
    flagged = [UNOFFERED[0], answering(2, "c1search", "no such tool", is_error=True)]
    assert run(flagged, check="no_unoffered_tool_executed") is None


def test_a_refusal_pattern_that_runs_away_is_a_bad_spec_not_a_hang() -> None:
    slow = [UNOFFERED[0], answering(2, "c1search", "a" * 40 + "!")]
    with pytest.raises(ValueError, match="ran past its 100 ms limit"):
        run(slow, check="no_unoffered_tool_executed", refusal="^(a|aa)+$")
    with pytest.raises(ValueError, match="not a regular expression"):
        run(slow, check="no_unoffered_tool_executed", refusal="(")


def test_model_calls_both_sides_and_mcp_messages_are_not_model_calls() -> None:
    assert run(MCP, check="model_calls", exactly=1) is None
    failure = run(ANSWERED, check="model_calls", at_most=1, at_least=1)
    assert failure is not None
    assert failure.headline == "2 model requests, expected at most 1 and at least 1"
    assert failure.happened == ["2 model requests made"]


def test_tool_executed_both_sides() -> None:
    assert run(MCP, check="tool_executed", tool="lookup_order") is None
    assert run(MCP, check="tool_executed", tool="lookup_order", server="shop", times=1) is None
    spec = {"tool": "lookup_order", "arguments": {"order_id": "A2025"}}
    failure = run(MCP, check="tool_executed", **spec)
    assert failure is not None
    assert (
        failure.headline
        == 'MCP tool lookup_order was not executed with arguments {"order_id": "A2025"}'
    )
    assert failure.happened == ['MCP entry (log seq 1) ran it with {"order_id": "A2024"}']
    never = run(MCP, check="tool_executed", tool="refund", server="shop")
    assert never is not None and never.happened == [
        "shop/refund was never called on the MCP server"
    ]


def test_the_verdict_checks_judge_the_verdict_they_are_given() -> None:
    def verdict(*judged: tuple[str, bool]) -> dict[str, Any]:
        found = [{"name": n, "ok": ok, "message": f"{n} said so"} for n, ok in judged]
        return {"session": "s", "ok": all(ok for _, ok in judged), "checks": found}

    clean = verdict(("calls_answered", True), ("mcp_calls_executed", True))
    failed = verdict(("calls_answered", False), ("mcp_calls_executed", False))
    for check in ("clean_verdict", "mcp_loop_closed"):
        assert checks.run_check([], {"check": check}, lambda: clean) is None
        failure = checks.run_check([], {"check": check}, lambda: failed)
        assert failure is not None
    assert failure.happened == ["mcp_calls_executed: mcp_calls_executed said so"]
    bare = checks.run_check([], {"check": "mcp_loop_closed"}, lambda: verdict(("x", True)))
    assert bare is not None and bare.headline == "no MCP tool was involved in this session"


def test_the_python_assertion_raises_the_same_failure_with_the_transcript() -> None:
    failure = run(UNANSWERED, check="all_tool_calls_answered")
    assert failure is not None
    with pytest.raises(AssertionError) as raised:
        assertions.assert_all_tool_calls_answered(logged(UNANSWERED), "s")
    text = str(raised.value)
    assert text.startswith(f"mockllm: {failure.headline}\n\nmockllm session 's'")
    assert text.endswith(
        f"expected: {failure.expected}\nhappened:\n"
        + "\n".join(f"  - {h}" for h in failure.happened)
    )


@pytest.mark.parametrize(
    "spec",
    [
        {"check": "model_calls"},
        {"check": "model_calls", "exactly": -1},
        {"check": "model_calls", "at_most": True},
        {"check": "tool_executed"},
        {"check": "tool_executed", "tool": "x", "server": 3},
        {"check": "tool_executed", "tool": "x", "arguments": [1]},
        {"check": "tool_executed", "tool": "x", "times": "2"},
        {"check": "no_unoffered_tool_executed", "refusal": 3},
        {"check": "assert_clean_verdict"},
    ],
)
def test_a_bad_spec_is_a_value_error_naming_it(spec: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        run(ANSWERED, **spec)


_FIELDS = (
    *("tool", "server", "arguments", "times", "refusal", "at_most", "exactly", "at_least"),
    *("name", "args", "first", "then", "call_id", "content", "is_error"),
)
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


@settings(max_examples=examples(200))
@given(
    check=st.sampled_from(checks.CHECKS),
    fields=st.dictionaries(
        st.sampled_from(_FIELDS),
        _VALUES,
        max_size=5,
    ),
)
def test_any_spec_is_judged_or_refused_as_a_value_error(check: str, fields: dict[str, Any]) -> None:
    for log in (ANSWERED, UNOFFERED, MCP):
        with contextlib.suppress(ValueError):
            run(log, check=check, **fields)
