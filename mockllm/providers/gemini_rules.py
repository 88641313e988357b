"""Gemini history rules (docs/validation.md, Gemini), with the API's own texts.

The API reads consecutive contents of one role as one turn (the SDK's own streaming
automatic function calling sends one model content per streamed chunk), so the rules
look at turns: runs of same-role contents.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from mockllm.core.validation import Raised, RuleContext, RuleSet
from mockllm.providers.gemini import field, signs

RULES = RuleSet()
SIGNATURE_DOCS = "https://ai.google.dev/gemini-api/docs/thought-signatures"


@dataclass(frozen=True, slots=True)
class _Turn:
    """A Gemini content of the history, as the rules walk it."""

    role: str
    first: int  # index of its first content in `contents`
    calls: list[tuple[int, dict[str, Any]]]  # (content index, part) of each functionCall part
    responses: int  # functionResponse parts
    text: bool  # any text part (a user turn with text is the user speaking)


@RULES.rule("G2", "gemini.response_without_call")
def _response_without_call(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    turns = _turns(body, ctx)
    for n, turn in enumerate(turns):
        if turn.responses and (n == 0 or not turns[n - 1].calls):
            yield (
                "Please ensure that function response turn comes immediately after a function "
                "call turn.",
                None,
                None,
            )
            return


@RULES.rule("G3", "gemini.call_without_user_turn")
def _call_without_user_turn(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    turns = _turns(body, ctx)
    if turns and turns[0].calls:
        yield (
            "Please ensure that function call turn comes immediately after a user turn or after "
            "a function response turn.",
            None,
            None,
        )


@RULES.rule("G1", "gemini.response_count")
def _response_count(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    turns = _turns(body, ctx)
    for turn, after in pairwise(turns):
        if turn.calls and after.role == "user" and after.responses != len(turn.calls):
            yield (
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn.",
                None,
                None,
            )
            return


@RULES.rule("G4", "gemini.thought_signature_missing")
def _signature_missing(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    """Gemini 3 wants each step of the current turn (since the user last wrote) back with the
    signature on its first function call. Its value is not checked: the API's text for a
    wrong one is not known."""
    if not signs(ctx.conversation.model):
        return
    turns = _turns(body, ctx)
    spoke = max((n for n, t in enumerate(turns) if t.role == "user" and t.text), default=-1)
    for turn in turns[spoke + 1 :]:
        if not turn.calls:
            continue
        index, part = turn.calls[0]
        if not field(part, "thoughtSignature"):
            name = field(part, "functionCall").get("name")
            yield (
                "Function call is missing a thought_signature in functionCall parts. This is "
                "required for tools to work correctly, and missing thought_signature may lead to "
                f"degraded model performance. Additional data, function call `default_api:{name}` "
                f", position {index + 1}. Please refer to {SIGNATURE_DOCS} for more details.",
                None,
                None,
            )
            return


def _turns(body: dict[str, Any], ctx: RuleContext) -> list[_Turn]:
    """The contents as turns; computed once per request for all the rules (the memo read
    directly: `ctx.shared` would build a lambda per call)."""
    found: list[_Turn] | None = ctx.memo.get("gemini.turns")
    if found is None:
        found = ctx.memo["gemini.turns"] = _read_turns(field(body, "contents"))
    return found


def _read_turns(contents: Any) -> list[_Turn]:
    turns: list[_Turn] = []
    for i, content in enumerate(contents if isinstance(contents, list) else ()):
        if not isinstance(content, dict):
            continue
        role = str(content.get("role") or "user")
        parts = [p for p in content.get("parts") or () if isinstance(p, dict)]
        calls = [(i, p) for p in parts if isinstance(field(p, "functionCall"), dict)]
        responses = sum(1 for p in parts if isinstance(field(p, "functionResponse"), dict))
        text = any(isinstance(p.get("text"), str) for p in parts)
        if turns and turns[-1].role == role:
            last = turns[-1]
            turns[-1] = _Turn(
                role, last.first, last.calls + calls, last.responses + responses, last.text or text
            )
        else:
            turns.append(_Turn(role, i, calls, responses, text))
    return turns
