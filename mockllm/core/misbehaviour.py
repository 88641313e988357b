"""Replies that are valid and still wrong (docs/scenarios.md): a refusal, a content filter,
an empty reply, reasoning and no answer, a blocked prompt — and which wire carries which.

A wire says here what it can carry: a kind missing from its set is refused when the
scenario loads, naming the wire (a turn holding it must be keyed to the wires that carry
it with `match: {api: …}`). A new wire adds one line to `CARRIES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from mockllm.errors import Problem

KINDS = ("refusal", "content_filter", "empty", "reasoning_only", "blocked_prompt")
_COMMON = frozenset({"refusal", "content_filter", "empty", "reasoning_only"})
# The wires (scenario.APIS) and the kinds each can carry. Only Gemini has a 200 that
# blocks the prompt itself (promptFeedback.blockReason and no candidate); the others
# refuse such a prompt, if at all, with an HTTP error (an `http` fault scripts that).
CARRIES: Mapping[str, frozenset[str]] = {
    "openai-chat": _COMMON,
    "openai-responses": _COMMON,
    "anthropic": _COMMON,
    "gemini": _COMMON | {"blocked_prompt"},
    "bedrock-converse": _COMMON,
    "bedrock-invoke": _COMMON,
    "vertex-gemini": _COMMON | {"blocked_prompt"},  # Gemini's body on Vertex's routes
    "vertex-anthropic": _COMMON,  # Anthropic's body on Vertex's routes
}
# Stream options a wire's framing can carry: SSE comments need SSE (Bedrock's AWS event
# stream has no comment; its frames are checksummed binary messages).
SSE_COMMENTS = frozenset(
    {"openai-chat", "openai-responses", "anthropic", "gemini", "vertex-gemini", "vertex-anthropic"}
)

# What the scenario keys say: the words of a load error.
_WHAT = {
    "blocked_prompt": "a blocked prompt (blocked: …, Gemini's promptFeedback.blockReason)",
}


def cannot_carry(kind: str, apis: tuple[str, ...] | None) -> tuple[str, ...]:
    """The wires among `apis` (None: every wire) that cannot carry `kind`, in order."""
    return tuple(a for a in apis or tuple(CARRIES) if kind not in CARRIES.get(a, _COMMON))


def check_reply(
    reply: Any, apis: tuple[str, ...] | None, where: Callable[[str], Problem]
) -> list[Problem]:
    """A reply's misbehaviour keys that cannot go together, or that a wire it may be served
    on cannot carry. `reply`: a scenario.Reply; `apis`: the wires its turn is keyed to;
    `where(key)`: the problem located at that reply key."""
    problems: list[Problem] = []
    if reply.empty is not None:
        for key, given in _others(reply, "empty"):
            if given:
                message = f"an empty reply holds nothing: {key} cannot go with empty"
                problems.append(where(key).with_message(message))
    if reply.blocked is not None:
        for key, given in _others(reply, "blocked"):
            if given:
                message = f"a blocked prompt gets no reply: {key} cannot go with blocked"
                problems.append(where(key).with_message(message))
        wrong = cannot_carry("blocked_prompt", apis)
        if wrong:
            message = (
                f"{_WHAT['blocked_prompt']} cannot be carried by {', '.join(wrong)}: "
                "key the turn to the wires that can (match: {api: [gemini, vertex-gemini]})"
            )
            problems.append(where("blocked").with_message(message))
    if reply.filter is not None and reply.finish != "content_filter":
        message = (
            "filter names the filter that stopped the reply: finish must be "
            f"content_filter, not {reply.finish}"
        )
        problems.append(where("filter").with_message(message))
    return problems


def _others(reply: Any, besides: str) -> list[tuple[str, bool]]:
    found = [
        ("text", bool(reply.text)),
        ("tool_calls", bool(reply.tool_calls)),
        ("reasoning", reply.reasoning is not None),
        ("refusal", reply.refusal is not None),
        ("json", reply.json is not None),
        ("empty", reply.empty is not None),
        ("blocked", reply.blocked is not None),
    ]
    return [(k, v) for k, v in found if k != besides]


# What a misbehaving reply says (a `misbehave` fault, or a chaos draw): a model's usual words.
REFUSAL_TEXT = "I'm sorry, but I can't help with that request."
REASONING_TEXT = "The user is asking something. I need to think about how to answer it."


def misbehaving(reply: Any, kind: str) -> Any:
    """The scenario.Reply `reply` replaced by a valid but wrong one of `kind`: a refusal, the
    first half of its text stopped by a content filter, nothing at all, or reasoning alone."""
    bare = replace(reply, text="", tool_calls=(), json=None, refusal=None, finish="stop")
    if kind == "refusal":
        return replace(bare, refusal=REFUSAL_TEXT)
    if kind == "content_filter":
        return replace(bare, text=reply.text[: len(reply.text) // 2], finish="content_filter")
    if kind == "empty":
        return replace(bare, reasoning=None, empty="null")
    if kind == "reasoning_only":
        return replace(bare, reasoning=reply.reasoning or REASONING_TEXT)
    raise ValueError(f"unknown misbehaviour {kind!r}")
