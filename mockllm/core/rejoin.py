"""Parallel calls a client split into consecutive assistant messages, joined back into the
one reply that served them.

Some harnesses rewrite one reply with several calls as `assistant[text, call A] →
tool[A] → assistant[call B] → tool[B]` (the OpenAI Agents SDK's LiteLLM model does this
for Claude). Every provider accepts that history — each call is still followed by its
result — so mockllm must too: for turn counting, divergence and expectations, messages
that carry consecutive slices of one served reply's calls, separated only by results,
are that one reply.
"""

from __future__ import annotations

from dataclasses import replace

from mockllm.core.conversation import Conversation, Message
from mockllm.core.divergence import CallId, attempt_of, retry_id
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
