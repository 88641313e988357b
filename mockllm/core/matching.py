"""Which turn a request asks for, found from what it holds (docs/scenarios.md, "Turns found
by content"): seeded assistant messages left out of the count, keyed turns matched by content,
counting as the fallback. Pure functions of (scenario, request): every replica picks alike.
"""

from __future__ import annotations

from dataclasses import replace

from mockllm.core import bounded
from mockllm.core.conversation import Conversation, Message
from mockllm.core.divergence import CallId, Served, attempt_of, difference, served_calls
from mockllm.core.scenario import RequestMatch, Scenario, TextMatch
from mockllm.errors import Finding, RequestError

WHY = "why"  # Conversation.memo key: which rule picked the turn, for the log
UNMATCHED = "unmatched"  # Conversation.memo key: the refusal when no keyed turn matches


def differences(match: RequestMatch, conv: Conversation, api: str | None = None) -> list[str]:
    """What of `match` this request does not meet, in words ([] when it matches)."""
    found: list[str] = []
    if match.api is not None and api is not None and api not in match.api:
        found.append(f"the API is {api}, not {' or '.join(match.api)}")
    if match.no_tools is True and conv.tools:
        found.append(f"tools are offered ({', '.join(conv.tool_names)})")
    if match.no_tools is False and not conv.tools:
        found.append("no tools are offered")
    if match.tool is not None and match.tool not in conv.tool_names:
        offered = ", ".join(conv.tool_names) or "none"
        found.append(f"the tool {match.tool!r} is not offered (offered: {offered})")
    if match.json is not None and (conv.output is not None) != match.json:
        found.append("JSON output is asked for" if conv.output else "no JSON output is asked for")
    for key, text in match.texts():
        problem = _text_problem(key, text, conv)
        if problem:
            found.append(problem)
    return found


def describe(match: RequestMatch) -> str:
    """The rule in words, for `why` and near-miss messages."""
    parts = [f"{_WHAT[key]} {text.describe()}" for key, text in match.texts()]
    if match.no_tools is not None:
        parts.append("no tools" if match.no_tools else "some tools")
    if match.tool is not None:
        parts.append(f"the tool {match.tool!r} offered")
    if match.json is not None:
        parts.append("JSON output asked" if match.json else "no JSON output asked")
    if match.api is not None:
        parts.append(f"API {' or '.join(match.api)}")
    return ", ".join(parts)


_WHAT = {
    "system": "system prompt",
    "user": "new user message",
    "model": "model",
    "tool_results": "a tool result",
}


def _text_problem(key: str, text: TextMatch, conv: Conversation) -> str | None:
    if key == "tool_results":
        results = [r.content for r in conv.latest_tool_results]
        if any(_matches(text, r) for r in results):
            return None
        return f"no tool result {text.describe()}" + ("" if results else " (none sent)")
    got = {"system": conv.system, "user": _new_user_text(conv), "model": conv.model}[key]
    if got is not None and _matches(text, got):
        return None
    shown = "none" if got is None else repr(got if len(got) <= 80 else got[:80] + "…")
    return f"the {_WHAT[key]} is {shown}, not {text.describe()}"


def _new_user_text(conv: Conversation) -> str | None:
    """The latest user message sent after the last assistant reply: what the user just said
    (a turn keyed on it answers that request, not every later one of the loop)."""
    for message in reversed(conv.messages):
        if message.role == "assistant":
            return None
        if message.role == "user":
            return message.text
    return None


def _matches(text: TextMatch, value: str) -> bool:
    try:
        return text.matches(value)
    except bounded.RegexTimeout:
        return False  # a pattern too slow for this text never matches it


def located(conv: Conversation, scenario: Scenario) -> Conversation:
    """`conv` as the turn-finding rules see it: seeded assistant messages left out, and,
    for a keyed scenario, its `turn` set to the turn picked (memo WHY says why; memo
    UNMATCHED holds the refusal when a keyed turn was due and none matched)."""
    kept = _unseeded(conv, scenario)
    seeded = len(conv.messages) - len(kept.messages)
    counted = kept.turn
    why = f"counted: {_replies(counted)} in the history"
    if seeded:
        why += f", {seeded} seeded left out"
    if not scenario.keyed:
        if kept is not conv:
            kept.memo[WHY] = why
        return kept
    out = replace(kept)  # its own object: the turn picked is set on it, not on a cached one
    picked, reason = _pick(scenario, out, counted)
    if picked is None:
        out.memo[UNMATCHED] = RequestError(
            400, reason, kind="no_turn_matched", code="no_turn_matched"
        )
        picked, reason = counted, why
    vars(out)["turn"] = picked  # what `Conversation.turn` (a `once`) reads from now on
    out.memo[WHY] = reason if reason != why else why
    return out


def _replies(n: int) -> str:
    return f"{n} assistant {'reply' if n == 1 else 'replies'}"


def _unseeded(conv: Conversation, scenario: Scenario) -> Conversation:
    seeds = scenario.seeds
    if not seeds:
        return conv
    served = scenario.served_texts
    kept = tuple(m for m in conv.messages if not _seeded(m, seeds, served))
    return conv if len(kept) == len(conv.messages) else replace(conv, messages=kept)


def _seeded(message: Message, seeds: tuple[TextMatch, ...], served: frozenset[str]) -> bool:
    """An assistant message the harness wrote: no calls, a seed's text, and not a text this
    scenario serves (a reply that happens to look like a seed is still a turn)."""
    if message.role != "assistant" or message.tool_calls or message.text in served:
        return False
    return any(_matches(seed, message.text) for seed in seeds)


def _pick(scenario: Scenario, conv: Conversation, counted: int) -> tuple[int | None, str]:
    """The first keyed turn the request matches; else the counted turn, if it is not keyed;
    else None and why: the nearest keyed turns and what differed."""
    misses: list[tuple[int, int, list[str]]] = []
    for i, turn in enumerate(scenario.turns):
        if turn.match is None:
            continue
        differ = differences(turn.match, conv)
        if not differ:
            return i, f"matched turn {i}: {describe(turn.match)}"
        misses.append((len(differ), i, differ))
    due = scenario.turn(counted)
    if due is not None and due.match is None:
        return counted, f"counted: {_replies(counted)} in the history (no keyed turn matched)"
    nearest = sorted(misses)[:3]
    said = "; ".join(f"turn {i} ({_rule(scenario, i)}): {', '.join(d)}" for _, i, d in nearest)
    return None, (
        f"mockllm: no turn of scenario {scenario.name!r} matches this request (its history "
        f"holds {_replies(counted)}, and turn {counted} is "
        + ("keyed" if due is not None else "past the script")
        + f"). Nearest: {said}"
    )


def _rule(scenario: Scenario, index: int) -> str:
    match = scenario.turns[index].match
    return describe(match) if match else "counted"


def diverged_keyed(
    conv: Conversation, scenario: Scenario, call_id: CallId, served: Served
) -> Finding | None:
    """Divergence for a keyed scenario, whose replies need not come in turn order: each
    assistant reply with calls is compared with the turn whose call ids it carries."""
    for message in conv.messages:
        if message.role != "assistant" or not message.tool_calls:
            continue
        first = message.tool_calls[0].id
        for index in range(len(scenario.turns)):
            reply = served(index)
            attempt = attempt_of(scenario, index, first, call_id) if reply else None
            if reply is None or attempt is None or not reply.tool_calls:
                continue
            calls = served_calls(scenario, index, reply, call_id, attempt)
            if calls[0].id == first:
                problem = difference(message.tool_calls, reply, [c.id for c in calls])
                if problem:
                    where = message.at or "an assistant message"
                    return Finding(
                        "history_diverged",
                        f"mockllm history diverged at {where} (the reply of turn {index}): "
                        f"{problem}",
                    )
                break
        else:
            where = message.at or "an assistant message"
            return Finding(
                "history_diverged",
                f"mockllm history diverged at {where}: its call id {first!r} is not one any "
                f"turn of scenario {scenario.name!r} served",
            )
    return None
