"""The load checks of a built scenario: mistakes the JSON Schema cannot see, which would
otherwise only surface at request time, each at its file, line and key (`Locate`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Any

from mockllm.core import bounded, misbehaviour
from mockllm.core.embedding_rules import check_rules
from mockllm.core.mcp import check_servers
from mockllm.core.scenario import Fault, HttpFault, Scenario, Truncate, Turn
from mockllm.errors import Problem

# Locates a YAML path such as ("turns", 0, "reply") in its source; used for errors.
Locate = Callable[[tuple[str | int, ...]], Problem]


def check_scenario(scenario: Scenario, locate: Locate, data: Mapping[str, Any]) -> list[Problem]:
    """Mistakes the schema cannot see: they would only surface at request time. `data`: the
    mapping it was built from, for what the objects cannot hold (two exclusive fault parts)."""
    problems: list[Problem] = []
    last = len(scenario.turns) - 1
    for i, turn in enumerate(scenario.turns):
        if turn.repeat and i != last:
            problems.append(
                _problem_at(locate(("turns", i, "repeat")), "only the last turn can repeat")
            )
        problems += _check_turn_shape(turn, i, locate, data["turns"][i].get("fault"))
        problems += _check_misbehaviour(turn, i, locate)
        expect = turn.expect
        if expect is None:
            continue
        for key in ("user", "system", "model"):
            match = getattr(expect, key)
            if match is not None and match.how == "regex":
                problems += _check_regex(match.value, locate(("turns", i, "expect", key, "regex")))
        for j, result in enumerate(expect.tool_results or ()):
            if result.regex is not None:
                where = locate(("turns", i, "expect", "tool_results", j, "regex"))
                problems += _check_regex(result.regex, where)
        if expect.tool_results:
            problems += _check_result_count(scenario, i, len(expect.tool_results), locate)
    if scenario.mcp_servers or any(c.mcp for t in scenario.turns for c in t.reply.tool_calls):
        refs = [
            (i, j, "/".join(c.mcp))
            for i, t in enumerate(scenario.turns)
            for j, c in enumerate(t.reply.tool_calls)
            if c.mcp
        ]
        problems += check_servers(scenario.mcp_servers, refs, locate)
    problems += _check_from_mcp(scenario, locate)
    problems += _check_matches(scenario, locate, data.get("side_requests") or ())
    problems += check_rules(data.get("embeddings"), locate)
    if scenario.chaos and sum(rate for _, rate in scenario.chaos.rates) > 1:
        problems.append(_problem_at(locate(("chaos",)), "the rates add up to more than 1"))
    return problems


def _check_matches(
    scenario: Scenario, locate: Locate, sides: Sequence[Mapping[str, Any]]
) -> list[Problem]:
    """Regular expressions of side requests, seeds and keyed turns compile; a side request
    answers every time (it has no attempts to count), so `times` makes no sense on it.
    `sides`: the scenario's own side requests as written."""
    problems: list[Problem] = []
    own = [s for s in scenario.side_requests if not s.origin]
    for j, side in enumerate(own):
        for key, match in side.match.texts():
            if match.how == "regex":
                where = locate(("side_requests", j, "match", key, "regex"))
                problems += _check_regex(match.value, where)
        answers = side.fault is not None and isinstance(side.fault.part, HttpFault)
        if not side.has_reply and not answers:
            message = "give a reply (text, json or refusal), or a fault: {http: …} to answer with"
            problems.append(_problem_at(locate(("side_requests", j)), message))
        if side.fault is not None and side.fault.times is not None:
            message = "a side request is never counted as an attempt: times cannot apply"
            problems.append(_problem_at(locate(("side_requests", j, "fault", "times")), message))
        if side.fault is not None:
            at = ("side_requests", j, "fault")
            problems += _check_fault(side.fault, sides[j]["fault"], at, locate)
    for j, seed in enumerate(scenario.seeds):  # the scenario's own first: their index is theirs
        if seed.how == "regex":
            problems += _check_regex(seed.value, locate(("seed", j, "regex")))
    for i, turn in enumerate(scenario.turns):
        for key, match in turn.match.texts() if turn.match else ():
            if match.how == "regex":
                problems += _check_regex(match.value, locate(("turns", i, "match", key, "regex")))
        if turn.match is not None and turn.repeat:
            message = "a keyed turn answers whatever it matches: repeat cannot apply"
            problems.append(_problem_at(locate(("turns", i, "repeat")), message))
    return problems


def _check_misbehaviour(turn: Turn, i: int, locate: Locate) -> list[Problem]:
    def where(key: str) -> Problem:
        return locate(("turns", i, "reply", key))

    return misbehaviour.check_reply(turn.reply, turn.match.api if turn.match else None, where)


def _check_turn_shape(
    turn: Turn, i: int, locate: Locate, written: Mapping[str, Any] | None
) -> list[Problem]:
    """A reply must exist unless an unconditional HTTP fault replaces it; faults must fit it.
    `written`: the turn's fault as written."""
    problems = []
    fault = turn.fault
    http = fault is not None and isinstance(fault.part, HttpFault)
    if not turn.has_reply and (fault is None or not http or fault.times is not None):
        why = (
            "later attempts, past times, are answered by it"
            if http
            else ("only an HTTP fault replaces it")
        )
        problems.append(_problem_at(locate(("turns", i)), f"missing required key 'reply' ({why})"))
    truncate = fault.part if fault and isinstance(fault.part, Truncate) else None
    if truncate is not None:
        ways = [
            w for w in (truncate.after_events, truncate.after_bytes, truncate.call) if w is not None
        ]
        where = locate(("turns", i, "fault", "truncate"))
        if len(ways) != 1:
            problems.append(
                _problem_at(
                    where,
                    "give exactly one of after_events, after_bytes, or inside: arguments with call",
                )
            )
        elif truncate.call is not None and truncate.call >= len(turn.reply.tool_calls):
            calls = len(turn.reply.tool_calls)
            problems.append(
                _problem_at(
                    where, f"call {truncate.call} does not exist: the reply makes {calls} call(s)"
                )
            )
    if fault is not None and written is not None:
        problems += _check_fault(fault, written, ("turns", i, "fault"), locate)
    for j, call in enumerate(turn.reply.tool_calls):
        if call.generate is not None and call.arguments != "{}":
            where = locate(("turns", i, "reply", "tool_calls", j, "generate"))
            problems.append(_problem_at(where, "give arguments or generate, not both"))
    return problems


# The keys of a fault's `Part`s, in the order a fault built from several would pick one (the
# loader refuses that): any earlier one (replacing the reply, or holding it back) leaves
# nothing for a later one to act on.
_PARTS = ("http", "content_filter", "stall", "stream_error", "truncate", "misbehave")

# A header value may not hold a line break (it would end the header) or another control
# character; a name must be an HTTP token.
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")

_HEADER_VALUE_BAD = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _check_fault(
    fault: Fault, written: Mapping[str, Any], where: tuple[str | int, ...], locate: Locate
) -> list[Problem]:
    """What a fault as `written` combines that its `Fault` cannot hold, and header values."""
    problems = []
    given = [key for key in _PARTS if written.get(key) not in (None, False)]  # stall: false
    for first, second in combinations(given, 2):
        message = f"{first} and {second} cannot combine: {first} leaves nothing for {second}"
        problems.append(_problem_at(locate((*where, second)), message))
    if written.get("disconnect") is not None and written.get("truncate") is None:
        message = "disconnect only says how a truncated reply ends: add truncate"
        problems.append(_problem_at(locate((*where, "disconnect")), message))
    for name, value in fault.part.headers if isinstance(fault.part, HttpFault) else ():
        at = locate((*where, "http", "headers", name))
        if not _HEADER_NAME.fullmatch(name):
            problems.append(_problem_at(at, f"{name!r} is not a valid HTTP header name"))
        elif _HEADER_VALUE_BAD.search(value):
            message = f"the value {value!r} holds a line break or control character"
            problems.append(_problem_at(at, message + ", which HTTP header values cannot"))
    return problems


def _check_from_mcp(scenario: Scenario, locate: Locate) -> list[Problem]:
    problems = []
    for i, turn in enumerate(scenario.turns):
        for j, match in enumerate(turn.expect.tool_results or () if turn.expect else ()):
            if match.from_mcp == ():
                where = locate(("turns", i, "expect", "tool_results", j, "from_mcp"))
                problems.append(
                    _problem_at(
                        where,
                        (
                            f"call {j} of turn {i - 1} names no scripted MCP tool with a result "
                            "for its arguments"
                        ),
                    )
                )
    return problems


def _check_result_count(scenario: Scenario, i: int, wanted: int, locate: Locate) -> list[Problem]:
    where = locate(("turns", i, "expect", "tool_results"))
    if i == 0:
        return [_problem_at(where, "turn 0 has no previous turn, so no tool results can answer it")]
    previous = scenario.turns[i - 1].reply
    # A search for tools is one call more where the client runs it (its result answers it).
    calls = len(previous.tool_calls) + (previous.search is not None)
    if wanted > calls:
        return [
            _problem_at(where, f"{wanted} results expected, but turn {i - 1} makes {calls} call(s)")
        ]
    return []


def _check_regex(pattern: str, where: Problem) -> list[Problem]:
    problem = bounded.check(pattern)
    return [_problem_at(where, f"invalid regular expression: {problem}")] if problem else []


def _problem_at(where: Problem, message: str) -> Problem:
    return where.with_message(message)
