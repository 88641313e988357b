"""Is the history the client sent the one this scenario served? (docs/validation.md)

The assistant replies in a request must carry the calls the scenario made at those turns:
same ids, names, arguments, and order of parallel calls. Otherwise the client mangled its
history — which must never be mistaken for the model misbehaving. A call served with
arguments that are not JSON is compared by id alone: a client may parse, repair or rename
it (and feed the error back), which is handling the malformed call, not mangling history.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from mockllm.core.conversation import Conversation, ToolCall, served_call
from mockllm.core.scenario import Reply, Scenario
from mockllm.errors import Finding


class CallId(Protocol):
    """call_id(scenario, turn, index, attempt): the id this wire gave call `index` of `turn`
    on that attempt (a retry's ids are fresh: docs/scenarios.md, "Retries")."""

    def __call__(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str: ...


# A history carries the attempt whose reply it got; past this many attempts at one turn,
# its ids are not looked for (a harness retrying more is reported as diverged).
MAX_ATTEMPTS = 64


def attempt_of(scenario: Scenario, turn: int, first_id: str, call_id: CallId) -> int | None:
    """The attempt at `turn` whose first call had this id, or None."""
    if call_id(scenario, turn, 0) == first_id:
        return 1
    for attempt in range(2, MAX_ATTEMPTS + 1):
        if call_id(scenario, turn, 0, attempt) == first_id:
            return attempt
    return None


def retry_id(call_id: CallId, scenario: Scenario, turn: int, index: int, attempt: int) -> str:
    """`call_id` for this attempt; asked with three arguments on a first attempt, so a
    `CallId` written before retries had ids of their own still serves."""
    if attempt == 1:
        return call_id(scenario, turn, index)
    return call_id(scenario, turn, index, attempt)


# served(turn): the reply that turn gave, made concrete for this request; None past the script.
Served = Callable[[int], Reply | None]
# failed(turn): how the latest delivery of that turn was cut short, or None if it arrived whole.
Failed = Callable[[int], str | None]


def diverged(
    conv: Conversation,
    scenario: Scenario,
    call_id: CallId,
    served: Served,
    failed: Failed = lambda turn: None,
) -> Finding | None:
    """The first place where the history departs from what was served, or None.

    After a fault cut a turn's reply short, the client holds only part of it: a history
    that carries that part (the calls it got, their arguments however it finalised them,
    fewer calls) is not mangled but continued after a failed stream — reported as such
    (`continued_after_failed_stream`), never as a divergence from bytes it never received.
    """
    turn = 0
    for message in conv.messages:
        if message.role != "assistant":
            continue
        reply = served(turn)
        if reply is None:
            return None  # past the script: scenario_exhausted says so
        calls = served_calls(scenario, turn, reply, call_id)
        if message.tool_calls == calls:  # the usual case: the calls echoed as served
            turn += 1
            continue
        if not message.tool_calls and carried_as_text(message.text, scenario, turn, reply, call_id):
            turn += 1  # plain text, valid to every API: the harness's own way to carry calls
            continue
        if message.tool_calls and calls:  # a retry's reply: compared with its own attempt
            attempt = attempt_of(scenario, turn, message.tool_calls[0].id, call_id)
            if attempt is not None and attempt > 1:
                calls = served_calls(scenario, turn, reply, call_id, attempt)
        ids = [c.id for c in calls]
        problem = difference(message.tool_calls, reply, ids)
        if problem:
            where = message.at or "an assistant message"
            cut = failed(turn)
            if cut is not None and _delivered_part(message.tool_calls, reply, ids):
                sent = "; ".join(
                    f"{c.name} {c.id} with {c.arguments!r}" for c in message.tool_calls
                )
                return Finding(
                    CONTINUED,
                    f"mockllm: the reply of turn {turn} was cut short ({cut}), and the client "
                    f"went on with what it half received ({sent or 'no calls'}, at {where}): "
                    "a harness should retry a failed stream, not continue as if it had ended",
                )
            return Finding(
                "history_diverged",
                f"mockllm history diverged at {where} (the reply of turn {turn}): {problem}",
            )
        turn += 1
    return None


CONTINUED = "continued_after_failed_stream"


def carried_as_text(
    text: str, scenario: Scenario, turn: int, reply: Reply, call_id: CallId
) -> bool:
    """Whether `text` names every call `reply` served at `turn` (on some attempt): a harness
    that sends calls back as text (smolagents' ToolCallingAgent: `Calling tools:\n[{'id':
    'call_…', …}]`, the results as user `Observation:` messages) still holds that reply."""
    count = len(reply.tool_calls)
    if not count or not text:
        return False
    for attempt in range(1, MAX_ATTEMPTS + 1):
        if retry_id(call_id, scenario, turn, 0, attempt) in text:
            return all(retry_id(call_id, scenario, turn, i, attempt) in text for i in range(count))
    return False


# (id of the reply, turn, call_id) → (reply, scenario, its calls as served): every request of
# an agent loop checks every earlier turn, and a turn's calls and ids are the scenario's, the
# same for each request (a reply made concrete for one request is its own object, and misses).
# A dict emptied when full: cheaper per look-up than an LRU, and refilled in one request.
_SERVED: dict[tuple[int, int, CallId, int], tuple[Reply, Scenario, tuple[ToolCall, ...]]] = {}
_SERVED_LIMIT = 4096


def served_calls(
    scenario: Scenario, turn: int, reply: Reply, call_id: CallId, attempt: int = 1
) -> tuple[ToolCall, ...]:
    """The calls `reply` served at `turn` on `attempt`, with the ids this wire gave them."""
    key = (id(reply), turn, call_id, attempt)
    hit = _SERVED.get(key)
    if hit is not None and hit[0] is reply and hit[1] is scenario:  # never a recycled id()
        return hit[2]
    calls = tuple(
        served_call(retry_id(call_id, scenario, turn, i, attempt), c.name, c.arguments)
        for i, c in enumerate(reply.tool_calls)
    )
    if len(_SERVED) >= _SERVED_LIMIT:
        _SERVED.clear()
    _SERVED[key] = (reply, scenario, calls)
    return calls


def echoed_as_scripted(conv: Conversation, scenario: Scenario, call_id: CallId) -> bool:
    """Whether every assistant message of `conv` carries exactly the calls its turn's
    scripted reply served on a first attempt — so `diverged` finds nothing — decided by one
    comparison a message, no earlier turn resolved (it runs for every history). Only for turns whose
    reply no request changes (`concrete` hands back the very reply: no search, no
    `generate`/`near_miss`/MCP call, no strict tools offered); False sends the history
    through `diverged`, which decides every case. Kept on the conversation: `unmerged`
    asks it first too."""
    key = (ECHOED, id(scenario), call_id)
    found: tuple[Scenario, bool] | None = conv.memo.get(key)
    if found is None or found[0] is not scenario:  # (a cached request outlives a reload)
        found = conv.memo[key] = (scenario, _echoed_now(conv, scenario, call_id))
    return found[1]


ECHOED = "echoed_as_scripted"


def _echoed_now(conv: Conversation, scenario: Scenario, call_id: CallId) -> bool:
    if conv.strict_tools:
        return False
    scripted = _scripted_calls(scenario, call_id, conv.turn)
    if len(scripted) < conv.turn:
        return False  # past the script, or a turn a request makes concrete
    turn = 0
    for message in conv.messages:  # a plain loop: dearer as map/compress chains (measured)
        if message.role == "assistant":
            # tuples of the served ToolCall objects on both sides: compared by identity
            if message.tool_calls != scripted[turn]:
                return False
            turn += 1
    return True


# (id of the scenario, call_id) → (scenario, the calls served at turns 0, 1, …, up to the
# first turn a request could make concrete or the script's end): every request of an agent
# loop checks every earlier turn against the same script. Emptied when full, as `_SERVED`.
_SCRIPTED: dict[tuple[int, CallId], tuple[Scenario, list[tuple[ToolCall, ...]], list[bool]]] = {}
_SCRIPTED_TURNS = 4096  # per scenario and wire: a longer history takes `diverged`'s loop


def _scripted_calls(scenario: Scenario, call_id: CallId, count: int) -> list[tuple[ToolCall, ...]]:
    """The calls served at the first `count` turns (fewer where the list stops)."""
    key = (id(scenario), call_id)
    hit = _SCRIPTED.get(key)
    if hit is None or hit[0] is not scenario:  # never a recycled id()
        if len(_SCRIPTED) >= _SCRIPTED_LIMIT or _KEPT[0] >= _SCRIPTED_TOTAL:
            _SCRIPTED.clear()
            _KEPT[0] = 0
        hit = _SCRIPTED[key] = (scenario, [], [False])
    calls, ended = hit[1], hit[2]
    while len(calls) < min(count, _SCRIPTED_TURNS) and not ended[0]:
        turn = scenario.turn(len(calls))
        # `concrete` hands back the very reply (Reply.fixed, decided at load; a `json:` reply
        # is made by `structured`): past it `diverged` decides
        if turn is None or not turn.reply.fixed:
            ended[0] = True
            break
        calls.append(served_calls(scenario, len(calls), turn.reply, call_id))
        _KEPT[0] += 1
    return calls


_SCRIPTED_LIMIT = 256
_SCRIPTED_TOTAL = 65_536  # turns kept over every entry: the bound on what the memo holds
_KEPT = [0]  # turns kept now, over every entry


def _delivered_part(got: tuple[ToolCall, ...], reply: Reply, ids: list[str]) -> bool:
    """Whether `got` could be what a cut delivery left: at most the served calls, each
    with the id and name it was served with (arguments may be anything: cut, or repaired)."""
    if len(got) > len(ids):
        return False
    return all(c.id == ids[i] and c.name == reply.tool_calls[i].name for i, c in enumerate(got))


def difference(got: tuple[ToolCall, ...], reply: Reply, ids: list[str]) -> str | None:
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
        # A call whose arguments were not JSON may come back renamed: opencode turns a call
        # it cannot parse into its own `invalid` tool, same id, and feeds the error back.
        if got_name != want_name and _json(want_args) is not _NOT_JSON:
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
    return expected is _NOT_JSON or same_json(expected, _json(sent))


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: Python's `==` has true == 1, and a client that turns a boolean
    into a number has changed the call. 1 and 1.0 stay equal (JavaScript writes 1.0 as 1).
    Recursion follows `a`, the served arguments, whose depth the scenario bounds."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict):
        return (
            isinstance(b, dict) and a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same_json, a, b))
    return bool(a == b)  # strings, numbers (int or float), null


_NOT_JSON = object()


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON
