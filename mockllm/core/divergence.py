"""Is the history the client sent the one this scenario served? (docs/validation.md)

The assistant replies in a request must carry the calls the scenario made at those turns:
same ids, names, arguments, and order of parallel calls. Otherwise the client mangled its
history — which must never be mistaken for the model misbehaving.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mockllm.core.conversation import Conversation, ToolCall
from mockllm.core.scenario import Reply, Scenario
from mockllm.errors import Finding

# call_id(scenario, turn, index): the id this wire gave call `index` of `turn`.
CallId = Callable[[Scenario, int, int], str]
# served(turn): the reply that turn gave, made concrete for this request; None past the script.
Served = Callable[[int], Reply | None]


def diverged(
    conv: Conversation, scenario: Scenario, call_id: CallId, served: Served
) -> Finding | None:
    """The first place where the history departs from what was served, or None."""
    turn = 0
    for message in conv.messages:
        if message.role != "assistant":
            continue
        reply = served(turn)
        if reply is None:
            return None  # past the script: scenario_exhausted says so
        ids = [call_id(scenario, turn, i) for i in range(len(reply.tool_calls))]
        problem = _difference(message.tool_calls, reply, ids)
        if problem:
            where = message.at or "an assistant message"
            return Finding(
                "history_diverged",
                f"mockllm history diverged at {where} (the reply of turn {turn}): {problem}",
            )
        turn += 1
    return None


def _difference(got: tuple[ToolCall, ...], reply: Reply, ids: list[str]) -> str | None:
    calls = reply.tool_calls
    if len(got) == len(calls) and all(  # the usual case, checked without building anything
        g.id == i and g.name == c.name and g.arguments == c.arguments
        for g, c, i in zip(got, calls, ids, strict=True)
    ):
        return None
    expected = [(ids[i], c.name, c.arguments) for i, c in enumerate(reply.tool_calls)]
    actual = [(c.id, c.name, c.arguments) for c in got]
    if len(actual) != len(expected):
        want = ", ".join(f"{n} {i}" for i, n, _ in expected) or "none"
        have = ", ".join(f"{n} {i}" for i, n, _ in actual) or "none"
        return f"tool_calls: expected {len(expected)} call(s) ({want}), got {len(actual)} ({have})"
    if [a[0] for a in actual] != [e[0] for e in expected] and sorted(
        a[0] for a in actual
    ) == sorted(e[0] for e in expected):
        return (
            f"tool_calls order: expected {[e[0] for e in expected]}, got {[a[0] for a in actual]}"
        )
    for i, ((want_id, want_name, want_args), (got_id, got_name, got_args)) in enumerate(
        zip(expected, actual, strict=True)
    ):
        if got_id != want_id:
            return f"tool_calls[{i}].id: expected {want_id!r}, got {got_id!r}"
        if got_name != want_name:
            return f"tool_calls[{i}].name: expected {want_name!r}, got {got_name!r}"
        if not _same_arguments(want_args, got_args):
            return f"tool_calls[{i}].arguments: expected {want_args!r}, got {got_args!r}"
    return None


def _same_arguments(served: str, sent: str) -> bool:
    """Equal as JSON (clients re-encode: spacing, key order, Anthropic's `input` objects).
    Arguments that were not JSON cannot be compared once an SDK has parsed them."""
    if served == sent:  # the usual case: the client echoed the bytes it was given
        return True
    expected = _json(served)
    return expected is _NOT_JSON or expected == _json(sent)


_NOT_JSON = object()


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON
