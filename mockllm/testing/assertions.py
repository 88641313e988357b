"""Checks over one session's log entries, failing with the conversation in the message.

Pure functions of the entries (no HTTP), so the pytest fixture, the client's sessions
and a script reading a `--log` file all share them. A failure reads: a one-line
headline (what pytest's summary shows), the transcript, then expected and happened.
The checks and their words are the server's (`judge/checks.py`, `judge/calls.py`), which
`POST /_mockllm/check` runs for the Node client: one text for both languages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from mockllm.judge import calls, checks
from mockllm.judge.checks import Unoffered, mcp_executions, unanswered_calls, unoffered_executions
from mockllm.judge.transcript import transcript
from mockllm.log.allowances import ALLOWANCE
from mockllm.log.records import LogEntry, Verdict

# Whether a failure's message carries every request in full (outside pytest, always) or the
# short form; the pytest fixture sets it from -vv / --mockllm-transcript, so the message,
# the one place a mockllm assertion's failure shows the transcript, follows those flags.
FULL_TRANSCRIPT: ContextVar[bool] = ContextVar("mockllm_full_transcript", default=True)
SHORT_HINT = "(short: -vv or --mockllm-transcript=full shows every request in full)"

__all__ = [
    "Unoffered",
    "assert_all_mcp_answers_served",
    "assert_all_tool_calls_answered",
    "assert_all_turns_served",
    "assert_called_before",
    "assert_clean_verdict",
    "assert_mcp_loop_closed",
    "assert_model_calls",
    "assert_no_unoffered_tool_executed",
    "assert_result_reached_model",
    "assert_tool_called",
    "assert_tool_executed",
    "assert_tool_requested",
    "assert_tool_result_fed_back",
    "mcp_executions",
    "unanswered_calls",
    "unoffered_executions",
]


def assert_all_tool_calls_answered(entries: Sequence[LogEntry], session: str | None = None) -> None:
    __tracebackhide__ = True
    _raise(checks.all_tool_calls_answered(_requests(entries)), entries, session)


def assert_all_turns_served(entries: Sequence[LogEntry], session: str | None = None) -> None:
    """Every turn each scenario of the session scripts was served (respx's assert_all_called)."""
    __tracebackhide__ = True
    _raise(checks.all_turns_served(_requests(entries)), entries, session)


def assert_all_mcp_answers_served(entries: Sequence[LogEntry], session: str | None = None) -> None:
    """Every result the session's scripted MCP tools script answered a call."""
    __tracebackhide__ = True
    _raise(checks.all_mcp_answers_served(_requests(entries)), entries, session)


def assert_no_unoffered_tool_executed(
    entries: Sequence[LogEntry],
    session: str | None = None,
    refusal: str | re.Pattern[str] | None = None,
) -> None:
    __tracebackhide__ = True
    _raise(checks.no_unoffered_tool_executed(_requests(entries), refusal), entries, session)


def assert_model_calls(
    entries: Sequence[LogEntry],
    session: str | None = None,
    *,
    at_most: int | None = None,
    exactly: int | None = None,
    at_least: int | None = None,
) -> None:
    __tracebackhide__ = True
    if at_most is None and exactly is None and at_least is None:
        raise TypeError("assert_model_calls needs at_most=, exactly= or at_least=")
    bounds = {"at_most": at_most, "exactly": exactly, "at_least": at_least}
    _raise(checks.model_calls(_requests(entries), **bounds), entries, session)


def assert_tool_executed(
    entries: Sequence[LogEntry],
    tool: str,
    session: str | None = None,
    *,
    server: str | None = None,
    arguments: Mapping[str, Any] | None = None,
    times: int | None = None,
) -> None:
    """The scripted MCP tool ran (with these arguments; this many times)."""
    __tracebackhide__ = True
    failure = checks.tool_executed(
        _requests(entries), tool, server=server, arguments=arguments, times=times
    )
    _raise(failure, entries, session)


def assert_mcp_loop_closed(
    verdict: Verdict, entries: Sequence[LogEntry], session: str | None = None
) -> None:
    """The verdict's MCP loop checks passed (docs/mcp.md; `judge/checks.py`)."""
    __tracebackhide__ = True
    _raise(checks.mcp_loop_closed(verdict), entries, session or verdict.session)


def assert_clean_verdict(
    verdict: Verdict, entries: Sequence[LogEntry], session: str | None = None
) -> None:
    __tracebackhide__ = True
    _raise(checks.clean_verdict(verdict), entries, session or verdict.session)


def assert_tool_requested(
    entries: Sequence[LogEntry],
    name: str,
    args: Mapping[str, Any] | None = None,
    times: int | None = None,
    session: str | None = None,
) -> None:
    """The model asked for tool `name` (mockllm served the call): nothing about whether
    the harness ran it (`assert_tool_result_fed_back`)."""
    __tracebackhide__ = True
    _raise(calls.tool_called(_uses(entries), name, args, times), entries, session)


def assert_tool_result_fed_back(
    entries: Sequence[LogEntry],
    name: str,
    args: Mapping[str, Any] | None = None,
    times: int | None = None,
    session: str | None = None,
) -> None:
    """The model asked for tool `name`, and the harness ran it and sent its result back:
    every such call was answered, by its id, in a later request."""
    __tracebackhide__ = True
    _raise(calls.tool_fed_back(_uses(entries), name, args, times), entries, session)


def assert_tool_called(
    entries: Sequence[LogEntry],
    name: str,
    args: Mapping[str, Any] | None = None,
    times: int | None = None,
    session: str | None = None,
) -> None:
    """Deprecated: `assert_tool_requested` (the model asked for it), the same check."""
    __tracebackhide__ = True
    warn_renamed("assert_tool_called", "assert_tool_requested")
    assert_tool_requested(entries, name, args, times, session)


def warn_renamed(old: str, new: str) -> None:
    import warnings

    warnings.warn(
        f"mockllm: {old} checks only that the model asked for the tool; it is now {new} "
        f"(assert_tool_result_fed_back checks that the harness ran it and sent the result "
        f"back). {old} will be removed.",
        DeprecationWarning,
        stacklevel=3,
    )


def assert_called_before(
    entries: Sequence[LogEntry], first: str, then: str, session: str | None = None
) -> None:
    __tracebackhide__ = True
    _raise(calls.called_before(_uses(entries), first, then), entries, session)


def assert_result_reached_model(
    entries: Sequence[LogEntry],
    call_id: str,
    content: str | None = None,
    is_error: bool | None = None,
    session: str | None = None,
) -> None:
    __tracebackhide__ = True
    raw = [e.raw for e in entries]
    failure = calls.result_reached_model(calls.tool_uses(raw), raw, call_id, content, is_error)
    _raise(failure, entries, session)


def _requests(entries: Sequence[LogEntry]) -> list[LogEntry]:
    """The requests among a session's log entries: its allowance's record is none."""
    return [e for e in entries if e.api != ALLOWANCE]


def _uses(entries: Sequence[LogEntry]) -> list[Mapping[str, Any]]:
    return list(calls.tool_uses(e.raw for e in entries))


def _raise(failure: calls.Failure | None, entries: Sequence[LogEntry], session: str | None) -> None:
    __tracebackhide__ = True
    if failure is not None:
        _fail(failure.headline, entries, session, failure.expected, failure.happened)


def _fail(
    headline: str,
    entries: Sequence[LogEntry],
    session: str | None,
    expected: str,
    happened: list[str],
) -> None:
    __tracebackhide__ = True  # pytest: point at the test's line, not at this helper
    full = FULL_TRANSCRIPT.get()
    shown = transcript(entries, session, full)
    lines = [f"mockllm: {headline}", "", shown, *([] if full else [SHORT_HINT]), ""]
    lines += [f"expected: {expected}", "happened:", *(f"  - {h}" for h in happened)]
    raise AssertionError("\n".join(lines))
