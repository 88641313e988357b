"""The verdict's MCP loop checks (judge/mcp_checks.py) on hand-written entries: each failure
mode with the harness that commits it and the one that does not."""

from __future__ import annotations

from typing import Any

from mockllm.judge.verdict import verdict

CALL = {"id": "call_1", "name": "mcp__orders__lookup_order", "arguments": '{"order_id":"A1"}'}
TOOLS = {"orders-loop": [("orders", "lookup_order")]}


def model(
    seq: int,
    *,
    calls: tuple[dict[str, Any], ...] | list[dict[str, Any]] = (),
    text: str | None = None,
    results: tuple[dict[str, Any], ...] | list[dict[str, Any]] = (),
) -> dict[str, Any]:
    history: list[dict[str, Any]] = [{"role": "user", "text": "where is A1?"}]
    if results:
        history += [
            {"role": "assistant", "tool_calls": [CALL]},
            {"role": "tool", "tool_results": list(results)},
        ]
    return {
        "seq": seq,
        "time": "2026-12-01T00:00:00.000Z",
        "session": "s",
        "scenario": "orders-loop",
        "api": "openai-chat",
        "turn": 1 if results else 0,
        "conversation": history,
        "response": {"status": 200, "tool_calls": list(calls), "text": text},
    }


def mcp(seq: int, arguments: dict[str, Any], **outcome: Any) -> dict[str, Any]:
    info = {
        "server": "orders",
        "method": "tools/call",
        "tool": "lookup_order",
        "arguments": arguments,
    }
    return {
        "seq": seq,
        "session": "s",
        "api": "mcp",
        "mcp": {**info, **outcome},
        "response": {"status": 200},
    }


SHIPPED = {"result": {"text": "Order A1: shipped", "is_error": False}}


def checks(entries: list[dict[str, Any]], declared: Any = TOOLS) -> dict[str, str | None]:
    """Each MCP check: None when it passed, else its message."""
    judged = verdict("s", entries, mcp_tools=declared)
    return {
        c["name"]: None if c["ok"] else c["message"]
        for c in judged["checks"]
        if c["name"].startswith("mcp_")
    }


def test_a_closed_loop_passes_every_check() -> None:
    entries = [
        model(1, calls=[CALL]),
        mcp(2, {"order_id": "A1"}, **SHIPPED),
        model(3, text="shipped", results=[{"call_id": "call_1", "content": "Order A1: shipped"}]),
    ]
    assert checks(entries) == dict.fromkeys(
        ["mcp_calls_executed", "mcp_results_fed_back", "mcp_calls_asked", "mcp_answer_after_tool"]
    )
    assert verdict("s", entries, mcp_tools=TOOLS)["ok"]


def test_no_mcp_no_checks() -> None:
    names = [c["name"] for c in verdict("s", [model(1, text="hi")])["checks"]]
    assert not [n for n in names if n.startswith("mcp_")]


def test_a_fabricated_result_fails_even_with_the_tools_text() -> None:
    entries = [
        model(1, calls=[CALL]),
        model(2, text="shipped", results=[{"call_id": "call_1", "content": "Order A1: shipped"}]),
    ]
    found = checks(entries)
    assert found["mcp_calls_executed"] == (
        "call_1 (mcp__orders__lookup_order, turn 0, request (log seq 1)) names MCP tool orders/lookup_order: "
        "request (log seq 2) answered it, but the tool never ran before that (a result the tool did not produce)"
    )
    assert found["mcp_answer_after_tool"] is not None


def test_the_tool_run_after_the_answer_does_not_count() -> None:
    entries = [
        model(1, calls=[CALL]),
        model(2, text="shipped", results=[{"call_id": "call_1", "content": "Order A1: shipped"}]),
        mcp(3, {"order_id": "A1"}, **SHIPPED),
    ]
    found = checks(entries)
    assert found["mcp_calls_executed"] is not None and found["mcp_calls_asked"] is not None


def test_other_arguments_fail() -> None:
    entries = [
        model(1, calls=[CALL]),
        mcp(2, {"order_id": "B2"}, **SHIPPED),
        model(3, text="shipped", results=[{"call_id": "call_1", "content": "Order A1: shipped"}]),
    ]
    found = checks(entries)
    assert "the tool ran with other arguments" in str(found["mcp_calls_executed"])
    assert "which no model call asked for" in str(found["mcp_calls_asked"])


def test_a_result_other_than_the_tools_fails_and_structured_content_counts() -> None:
    other = [{"call_id": "call_1", "content": "done"}]
    assert checks(
        [
            model(1, calls=[CALL]),
            mcp(2, {"order_id": "A1"}, **SHIPPED),
            model(3, text="x", results=other),
        ]
    )["mcp_results_fed_back"] == (
        "call_1 (mcp__orders__lookup_order, turn 0, request (log seq 1)): request (log seq 3) sent 'done', not what "
        "the tool returned ('Order A1: shipped')"
    )
    typed = {"result": {"text": "", "is_error": False, "structured": {"status": "shipped"}}}
    sent = [{"call_id": "call_1", "content": '{"status": "shipped"}'}]
    assert (
        checks(
            [
                model(1, calls=[CALL]),
                mcp(2, {"order_id": "A1"}, **typed),
                model(3, text="x", results=sent),
            ]
        )["mcp_results_fed_back"]
        is None
    )


def test_a_json_rpc_error_must_go_back_as_an_error() -> None:
    failed = {"error": {"code": -32000, "message": "database is down"}}
    as_error = [{"call_id": "call_1", "content": "Error: database is down", "is_error": True}]
    as_result = [{"call_id": "call_1", "content": "Order A1 is fine"}]
    head = [model(1, calls=[CALL]), mcp(2, {"order_id": "A1"}, **failed)]
    assert checks([*head, model(3, text="x", results=as_error)])["mcp_results_fed_back"] is None
    assert "not reported as an error" in str(
        checks([*head, model(3, text="x", results=as_result)])["mcp_results_fed_back"]
    )


def test_the_log_alone_knows_the_tools_from_tools_list() -> None:
    listed = {
        "seq": 0,
        "session": "s",
        "api": "mcp",
        "response": {"status": 200},
        "mcp": {"server": "orders", "method": "tools/list", "tools": ["lookup_order"]},
    }
    entries = [
        listed,
        model(1, calls=[CALL]),
        model(2, text="shipped", results=[{"call_id": "call_1", "content": "x"}]),
    ]
    assert checks(entries, declared=None)["mcp_calls_executed"] is not None


def test_a_call_made_by_a_code_mode_script_counts_as_asked() -> None:
    """Codex's default model calls one tool, `exec`, whose script calls the MCP tool as
    `tools.NAME(...)`: that call was asked for; the same MCP call with no script naming
    the tool (or a script naming another) was not."""
    script = "const r = await tools.mcp__orders__lookup_order({order_id: 'A1'});\ntext(r);"
    asked = {"id": "call_x", "name": "exec", "arguments": script}
    other = {**asked, "arguments": "await tools.exec_command({cmd: 'ls'});"}
    for call, holds in ((asked, True), (other, False)):
        entries = [
            model(1, calls=[call]),
            mcp(2, {"order_id": "A1"}, **SHIPPED),
            model(3, text="shipped"),
        ]
        found = checks(entries)["mcp_calls_asked"]
        assert (found is None) is holds, found
