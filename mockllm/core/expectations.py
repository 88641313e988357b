"""Check a turn's `expect:` against a request; each mismatch says field, expected and got."""

from __future__ import annotations

from mockllm.core import bounded
from mockllm.core.conversation import Conversation, ToolCall, ToolResult
from mockllm.core.scenario import Expect, ResultMatch, TextMatch
from mockllm.errors import Finding


def check(expect: Expect, conv: Conversation, turn: int) -> list[Finding]:
    found: list[Finding] = []
    texts = (
        ("user", "the latest user message", expect.user, conv.latest_user_text),
        ("system", "the system prompt", expect.system, conv.system),
        ("model", "the model", expect.model, conv.model),
    )
    for key, what, match, got in texts:
        try:
            if match is not None and (got is None or not match.matches(got)):
                found.append(_text_failure(key, turn, what, match, got))
        except bounded.RegexTimeout as e:
            found.append(_finding(key, turn, f"{what}: {e}"))
    if expect.tools is not None:
        missing = [t for t in expect.tools if t not in conv.tool_names]
        if missing:
            offered = ", ".join(conv.tool_names) or "none"
            msg = f"expected tools {', '.join(missing)} to be offered, got {offered}"
            found.append(_finding("tools", turn, msg))
    if expect.tool_choice is not None and expect.tool_choice != conv.effective_tool_choice:
        msg = f"expected tool_choice {expect.tool_choice}, got {conv.effective_tool_choice}"
        found.append(_finding("tool_choice", turn, msg))
    if expect.stream is not None and expect.stream != conv.stream:
        want = "a streaming" if expect.stream else "a non-streaming"
        found.append(_finding("stream", turn, f"expected {want} request, got stream={conv.stream}"))
    if expect.tool_results is not None:
        found += _check_results(expect.tool_results, conv, turn)
    return found


def _check_results(wanted: tuple[ResultMatch, ...], conv: Conversation, turn: int) -> list[Finding]:
    last = conv.last_assistant
    calls = last.tool_calls if last else ()
    by_id = {r.call_id: r for r in conv.latest_tool_results}
    found = []
    for i, match in enumerate(wanted):
        if i >= len(calls):
            msg = f"expected a result for call {i}, "
            msg += f"but the last assistant reply has {len(calls)} call(s)"
            found.append(_finding("tool_results", turn, msg))
            continue
        result = by_id.get(calls[i].id)
        problem = _result_problem(match, result)
        if problem:
            found.append(_finding("tool_results", turn, f"{_call_label(i, calls[i])}: {problem}"))
    return found


def _result_problem(match: ResultMatch, result: ToolResult | None) -> str | None:
    if result is None:
        return "expected a tool result, got none"
    if match.contains is not None and match.contains not in result.content:
        return f"expected a result containing {match.contains!r}, got {_clip(result.content)!r}"
    try:
        matched = match.regex is None or bounded.search(match.regex, result.content)
    except bounded.RegexTimeout as e:
        return str(e)
    if not matched:
        return f"expected a result matching /{match.regex}/, got {_clip(result.content)!r}"
    if match.from_mcp and not any(text in result.content for text in match.from_mcp):
        returned = " or ".join(repr(_clip(t)) for t in match.from_mcp)
        return f"expected what the MCP tool returned ({returned}), got {_clip(result.content)!r}"
    # A wire without an error flag (OpenAI) cannot be checked for is_error.
    if (
        match.is_error is not None
        and result.is_error is not None
        and match.is_error != result.is_error
    ):
        return (
            f"expected is_error {str(match.is_error).lower()}, got {str(result.is_error).lower()}"
        )
    return None


def _call_label(i: int, call: ToolCall) -> str:
    return f"result of call {i} ({call.name} {call.id})"


def _text_failure(key: str, turn: int, what: str, match: TextMatch, got: str | None) -> Finding:
    shown = "none" if got is None else repr(_clip(got))
    return _finding(key, turn, f"expected {what} {match.describe()}, got {shown}")


def _finding(key: str, turn: int, message: str) -> Finding:
    return Finding(f"expect.{key}", f"turn {turn}: {message}")


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
