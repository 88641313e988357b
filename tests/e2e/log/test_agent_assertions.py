"""Assertions on what the agent did (docs/pytest.md, "What the agent did"): the support
agent of the docs, run under pytest through the plugin with the official OpenAI SDK, passes
them as printed and fails them with a planted bug, each failure naming what the agent did.
Then the checks in-process over hand-made log entries, both sides of each."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mockllm.judge import calls
from tests.support import ROOT

pytest_plugins = ["pytester"]

DOC = (ROOT / "docs" / "pytest.md").read_text()
[AGENT] = [
    code
    for name, code in re.findall(r"```python file=(\S+)\n(.*?)```", DOC, re.S)
    if name == "test_support_agent.py"
]
SHOWN = re.search(r"A failing one names what the agent did.*?```text\n(.*?)```", DOC, re.S)


def run(pytester: pytest.Pytester, code: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_support_agent=code)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=120)


def planted(old: str, new: str) -> str:
    assert AGENT.count(old) == 1, old
    return str(AGENT.replace(old, new))


def test_the_documented_agent_passes(pytester: pytest.Pytester) -> None:
    run(pytester, AGENT).assert_outcomes(passed=2)


def test_a_result_cut_short_does_not_reach_the_model(pytester: pytest.Pytester) -> None:
    wrong = planted(
        '"tool_call_id": call.id, "content": result}',
        '"tool_call_id": call.id, "content": result[:20]}',
    )
    result = run(pytester, wrong, "-k", "refund")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    headline = re.search(
        r"^E       AssertionError: mockllm: the result of refund \((call_\w+)\) did not reach "
        r"the model unchanged$",
        out,
        re.M,
    )
    assert headline, out
    call_id = headline[1]
    result.stdout.fnmatch_lines(
        [
            "E       mockllm session 'test_the_refund_follows_the_lookup_and_its_result_reaches_the_model-*', 3 model requests:",
            f"E              tool result for {call_id}: refund R-A2024 of 30",
            f"E       expected: the result of refund ({call_id}) is 'refund R-A2024 of 30 EUR issued' "
            "and stays in every later request's history",
            "E       happened:",
            "E         - request (log seq *) carried 'refund R-A2024 of 30', not 'refund R-A2024 of 30 EUR issued'",
        ]
    )
    # docs/pytest.md shows this very failure, ids and seqs elided
    assert SHOWN is not None
    for line in SHOWN[1].splitlines():
        if line != "…":
            pattern = re.escape(line).replace("call_…", r"call_\w+").replace("\\#3", r"#\d+")
            assert re.search("^" + pattern + "$", out, re.M), line


def test_a_history_that_drops_the_lookup_result_is_named(pytester: pytest.Pytester) -> None:
    # With validation warn (strict would refuse the request), a harness that forgets the
    # lookup's result once it has sent the refund's.
    wrong = planted("name: refund-flow\n", "name: refund-flow\nvalidation: warn\n")
    wrong = wrong.replace(
        '            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})\n',
        '            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})\n'
        '            if call.function.name == "refund":\n'
        "                messages = [m for m in messages if not (isinstance(m, dict)"
        ' and "delivered" in m.get("content", ""))]\n',
    )
    wrong = wrong.replace(
        "    [second] = mockllm.requests(turn=1)",
        "    mockllm.assert_result_reached_model(lookup, content=lookup_order('A2024'))\n"
        "    [second] = mockllm.requests(turn=1)",
    )
    result = run(pytester, wrong, "-k", "refund")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: mockllm: the result of lookup_order (call_*) did not reach the "
            "model unchanged",
            "E         - request (log seq *) dropped the result from its history",
        ]
    )


def test_a_refund_with_other_arguments_or_twice_fails_assert_tool_called(
    pytester: pytest.Pytester,
) -> None:
    other = planted(
        "{name: refund, arguments: {order_id: A2024, amount: 30}}",
        "{name: refund, arguments: {order_id: A2025, amount: 30}}",
    )
    result = run(pytester, other, "-k", "refund")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            'E       AssertionError: mockllm: refund with {"order_id":"A2024"} was never called',
            'E       expected: refund with {"order_id":"A2024"} called once',
            "E       happened:",
            'E         - lookup_order({"order_id":"A2024"}) id=call_*, turn 0 (request (log seq *)) → result *',
            'E         - refund({"order_id":"A2025","amount":30}) id=call_*, turn 1 (request (log seq *)) → result *',
        ]
    )


def test_a_refund_decided_before_the_lookup_returned_fails_assert_called_before(
    pytester: pytest.Pytester,
) -> None:
    parallel = planted(
        "  - reply: {tool_calls: [{name: lookup_order, arguments: {order_id: A2024}}]}\n"
        "  - reply: {tool_calls: [{name: refund, arguments: {order_id: A2024, amount: 30}}]}\n",
        "  - reply: {tool_calls: [{name: lookup_order, arguments: {order_id: A2024}},"
        " {name: refund, arguments: {order_id: A2024, amount: 30}}]}\n",
    ).replace("[second] = mockllm.requests(turn=1)", "second = mockllm.requests(turn=1)[0]")
    parallel = parallel.replace(
        "  - reply: {text: Refunded 30 EUR on order A2024.}\n",
        "  - reply: {text: Refunded 30 EUR on order A2024.}\n",
        1,
    )
    result = run(pytester, parallel, "-k", "refund")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: mockllm: refund was called before lookup_order returned",
            "E       expected: lookup_order called, and its result sent back, before refund was called",
            "E         - refund (call_*) was called in the same reply as lookup_order (call_*), "
            "before its result came back (request (log seq *))",
        ]
    )


# --- in-process: the checks over log entries, both sides -----------------------------------


def served(seq: int, turn: int, *called: tuple[str, str, str]) -> dict[str, Any]:
    tool_calls = [{"id": i, "name": n, "arguments": a} for i, n, a in called]
    return {
        "seq": seq,
        "turn": turn,
        "conversation": [],
        "response": {"status": 200, "tool_calls": tool_calls},
    }


def carrying(entry: dict[str, Any], *results: tuple[str, str]) -> dict[str, Any]:
    history = [{"role": "tool", "tool_results": [{"call_id": i, "content": c} for i, c in results]}]
    return {**entry, "conversation": history}


LOG = [
    served(1, 0, ("a", "lookup_order", '{"order_id":"A2024"}')),
    carrying(
        served(2, 1, ("b", "refund", '{"order_id":"A2024","amount":30}')),
        ("a", '{"status": "delivered"}'),
    ),
    carrying(served(3, 2), ("a", '{"status": "delivered"}'), ("b", "refunded")),
]


def test_tool_uses_pair_each_call_with_the_result_sent_back() -> None:
    uses = calls.tool_uses(LOG)
    assert [(u["name"], u["args"], u["result"], u["answered_in"]) for u in uses] == [
        (
            "lookup_order",
            {"order_id": "A2024"},
            {"content": '{"status": "delivered"}', "is_error": None},
            2,
        ),
        (
            "refund",
            {"order_id": "A2024", "amount": 30},
            {"content": "refunded", "is_error": None},
            3,
        ),
    ]
    assert [u["id"] for u in calls.matching(uses, "refund", {"amount": 30})] == ["b"]
    assert calls.matching(uses, "refund", {"amount": 31}) == []


def test_tool_called_both_sides() -> None:
    uses = calls.tool_uses(LOG)
    assert calls.tool_called(uses, "refund", {"order_id": "A2024"}, times=1) is None
    assert calls.tool_called(uses, "refund", times=2) is not None
    assert calls.tool_called(uses, "cancel") is not None
    assert calls.tool_called(uses, "cancel", times=0) is None


def test_called_before_both_sides() -> None:
    uses = calls.tool_uses(LOG)
    assert calls.called_before(uses, "lookup_order", "refund") is None
    failure = calls.called_before(uses, "refund", "lookup_order")
    assert failure is not None and failure.happened[0] == (
        "lookup_order (a) was called at turn 0, refund only at turn 1"
    )


def test_result_reached_model_both_sides() -> None:
    uses = calls.tool_uses(LOG)
    assert calls.result_reached_model(uses, LOG, "a", '{"status":"delivered"}') is None  # as JSON
    wrong = calls.result_reached_model(uses, LOG, "a", '{"status": "lost"}')
    assert wrong is not None and wrong.happened == [
        'request (log seq 2) carried \'{"status": "delivered"}\', not \'{"status": "lost"}\''
    ]
    dropped = [*LOG[:2], carrying(served(3, 2), ("b", "refunded"))]
    gone = calls.result_reached_model(calls.tool_uses(dropped), dropped, "a")
    assert gone is not None and gone.happened == [
        "request (log seq 3) dropped the result from its history"
    ]
    assert calls.result_reached_model(uses, LOG, "b", is_error=True) is not None
    assert calls.result_reached_model(uses, LOG, "zzz") is not None


def test_run_check_refuses_a_bad_spec() -> None:
    for spec in (
        {},
        {"check": "nope"},
        {"check": "tool_called"},
        {"check": "tool_called", "name": "x", "times": -1},
        {"check": "tool_called", "name": "x", "args": [1]},
        {"check": "result_reached_model", "call_id": "a", "is_error": "yes"},
    ):
        with pytest.raises(ValueError):
            calls.run_check(LOG, spec)
    assert (
        calls.run_check(LOG, {"check": "called_before", "first": "lookup_order", "then": "refund"})
        is None
    )
