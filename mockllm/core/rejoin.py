"""Replies a client regrouped, read back as the replies that served them.

Some harnesses rewrite one reply with several calls as `assistant[text, call A] →
tool[A] → assistant[call B] → tool[B]` (the OpenAI Agents SDK's LiteLLM model does this
for Claude). Every provider accepts that history — each call is still followed by its
result — so mockllm must too: for turn counting, divergence and expectations, messages
that carry consecutive slices of one served reply's calls, separated only by results,
are that one reply.

Others do the reverse: Mastra (AI SDK 5 message conversion) sends two consecutive replies,
each with calls, as one assistant message carrying all their calls, then all the results.
Chat and Messages accept that too; an assistant message whose calls are, in order, all
the calls of consecutive served replies is read as those replies, each followed by its
own results (`unmerged`).
"""

from __future__ import annotations

from dataclasses import replace

from mockllm.core.conversation import Conversation, Message, ToolCall
from mockllm.core.divergence import CallId, attempt_of, echoed_as_scripted, retry_id
from mockllm.core.scenario import Scenario


def rejoined(conv: Conversation, scenario: Scenario, call_id: CallId) -> Conversation:
    """`conv` with split replies joined; `conv` itself when nothing was split — the usual
    case, decided in one pass that builds nothing and computes an id only where a reply
    could continue the one before it."""
    if not scenario.parallel_calls:
        return conv  # no reply of the script has two calls to split
    messages = conv.messages
    turn, held = -1, -1  # the turn of the last assistant message, and where it stands
    for i, message in enumerate(messages):
        if message.role == "assistant":
            if 0 <= held < i - 1 and _split(messages[held], message, scenario, turn, call_id):
                return _joined(conv, scenario, call_id)
            turn, held = turn + 1, i
        elif message.role != "tool":
            held = -1
    return conv


def unmerged(conv: Conversation, scenario: Scenario, call_id: CallId) -> Conversation:
    """`conv` with merged replies read apart; `conv` itself when no assistant message holds
    more calls than its turn served — the usual case, decided without building anything.
    Scenarios whose turns are not counted (seeds, keyed turns) are left as they are."""
    if scenario.seeds or scenario.keyed or not conv.turn:
        return conv
    if echoed_as_scripted(conv, scenario, call_id):
        return conv  # each message holds exactly its turn's calls
    turn = 0
    for message in conv.messages:
        if message.role != "assistant":
            continue
        # Merged replies hold two calls at least (more than a turn's one or more): the
        # turn is looked up only then (a history of one call a reply looks up none).
        if len(message.tool_calls) > 1:
            served = scenario.turn(turn)
            if served is None:
                return conv  # past the script's end: no later turn either
            if len(message.tool_calls) > len(served.reply.tool_calls) > 0:
                return _unmerged(conv, scenario, call_id)
        turn += 1
    return conv


def _unmerged(conv: Conversation, scenario: Scenario, call_id: CallId) -> Conversation:
    messages = conv.messages
    out: list[Message] = []
    turn, i, changed = 0, 0, False
    while i < len(messages):
        message = messages[i]
        i += 1
        if message.role != "assistant":
            out.append(message)
            continue
        groups = _replies_of(message, scenario, turn, call_id)
        if len(groups) < 2:
            out.append(message)
            turn += 1
            continue
        results: list[Message] = []
        while i < len(messages) and messages[i].role == "tool":
            results.append(messages[i])
            i += 1
        out += _apart(message, groups, results)
        turn, changed = turn + len(groups), True
    return replace(conv, messages=tuple(out)) if changed else conv


def _replies_of(
    message: Message, scenario: Scenario, turn: int, call_id: CallId
) -> list[tuple[ToolCall, ...]]:
    """`message`'s calls cut into the calls of consecutive served replies from `turn` on
    (each with the ids of the attempt its first call names); [] when they are not."""
    calls, groups = message.tool_calls, list[tuple[ToolCall, ...]]()
    while calls:
        served = scenario.turn(turn + len(groups))
        count = len(served.reply.tool_calls) if served else 0
        if count == 0 or count > len(calls):
            return []
        attempt = attempt_of(scenario, turn + len(groups), calls[0].id, call_id) or 1
        ids = [retry_id(call_id, scenario, turn + len(groups), k, attempt) for k in range(count)]
        if [c.id for c in calls[:count]] != ids:
            return []
        groups.append(calls[:count])
        calls = calls[count:]
    return groups


def _apart(
    message: Message, groups: list[tuple[ToolCall, ...]], results: list[Message]
) -> list[Message]:
    """One assistant message per reply (the text goes with the first), each followed by
    the results that answer its calls; results that answer none stay at the end."""
    answered = [r for m in results for r in m.tool_results]
    at = results[0].at if results else message.at
    out: list[Message] = []
    for n, calls in enumerate(groups):
        out.append(replace(message, text=message.text if n == 0 else "", tool_calls=calls))
        ids = {c.id for c in calls}
        mine = tuple(r for r in answered if r.call_id in ids)
        if mine:
            out.append(Message("tool", tool_results=mine, at=at))
    taken = {c.id for calls in groups for c in calls}
    rest = tuple(r for r in answered if r.call_id not in taken)
    if rest:
        out.append(Message("tool", tool_results=rest, at=at))
    return out


def _joined(conv: Conversation, scenario: Scenario, call_id: CallId) -> Conversation:
    messages = conv.messages
    out: list[Message] = []
    turn = 0  # the turn of the assistant message at the end of `out`, once there is one
    joined = False
    i = 0
    while i < len(messages):
        message = messages[i]
        if message.role != "assistant":
            out.append(message)
            i += 1
            continue
        held = _last_assistant(out)
        if held is not None and _continues(out, held, message, scenario, turn - 1, call_id):
            index, first = held
            results = out[index + 1 :]
            merged = replace(
                first,
                text="\n".join(t for t in (first.text, message.text) if t),
                tool_calls=first.tool_calls + message.tool_calls,
            )
            out[index:] = [merged, *results]
            joined = True
        else:
            out.append(message)
            turn += 1
        i += 1
    return replace(conv, messages=tuple(out)) if joined else conv


def _last_assistant(out: list[Message]) -> tuple[int, Message] | None:
    """The last assistant message, if only tool results follow it."""
    for index in range(len(out) - 1, -1, -1):
        if out[index].role == "assistant":
            return index, out[index]
        if out[index].role != "tool":
            return None
    return None


def _continues(
    out: list[Message],
    held: tuple[int, Message],
    message: Message,
    scenario: Scenario,
    turn: int,
    call_id: CallId,
) -> bool:
    """Whether `message` carries the next calls of the reply `held` began (turn `turn`)."""
    index, first = held
    return index < len(out) - 1 and _split(first, message, scenario, turn, call_id)


def _split(
    first: Message, message: Message, scenario: Scenario, turn: int, call_id: CallId
) -> bool:
    """Whether `message` carries the calls that follow `first`'s in the reply of `turn`."""
    if not first.tool_calls or not message.tool_calls:
        return False
    served = scenario.turn(turn)
    count = len(served.reply.tool_calls) if served else 0
    have = len(first.tool_calls)
    if have + len(message.tool_calls) > count:
        return False
    ids = [c.id for c in first.tool_calls + message.tool_calls]
    attempt = attempt_of(scenario, turn, ids[0], call_id) or 1  # a retry's ids are its own
    return ids == [retry_id(call_id, scenario, turn, k, attempt) for k in range(len(ids))]
