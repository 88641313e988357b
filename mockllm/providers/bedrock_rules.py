"""Bedrock Converse history rules (docs/validation.md, Bedrock), with the API's own texts:
each is quoted from public reports of real ValidationExceptions (the table in
docs/validation.md names them)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from mockllm.core.validation import Raised, RuleContext, RuleSet, items

RULES = RuleSet()
# ToolUseId in botocore's service model: 1 to 64 of these.
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_.:-]+")
TOOL_USE_ID_PATTERN = "[a-zA-Z0-9_.:-]+"


def _blocks(message: dict[str, Any], kind: str) -> list[tuple[int, dict[str, Any]]]:
    """(index in content, inner object) of each block of this kind (toolUse, toolResult)."""
    content = message.get("content")
    return [
        (j, b[kind])
        for j, b in items(content)
        if isinstance(b.get(kind), dict)  # items() yields only the mappings
    ]


Blocks = list[tuple[int, dict[str, Any]]]
# A message: its index, itself, its toolUse blocks and its toolResult blocks (`_blocks`).
Turn = tuple[int, dict[str, Any], Blocks, Blocks]


def _turns(body: dict[str, Any], ctx: RuleContext) -> list[Turn]:
    """The messages with their tool blocks, read once per request for every rule (each
    listed them and their blocks again); the memo read directly (`ctx.shared` would build
    a lambda per call)."""
    found: list[Turn] | None = ctx.memo.get("bedrock.turns")
    if found is None:
        found = ctx.memo["bedrock.turns"] = [
            (i, m, _blocks(m, "toolUse"), _blocks(m, "toolResult"))
            for i, m in items(body.get("messages"))
        ]
    return found


@RULES.rule("B5", "bedrock.content_empty")
def _content_empty(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, message, _, _ in _turns(body, ctx):
        if message.get("content") == []:
            yield (
                f"The content field in the Message object at messages.{i} is empty. Add a "
                "ContentBlock object to the content field and try again.",
                None,
                None,
            )
            return


@RULES.rule("B4", "bedrock.tool_config_missing")
def _tool_config_missing(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    if body.get("toolConfig") is not None:
        return
    for _, _, uses, results in _turns(body, ctx):
        if uses or results:
            yield (
                "The toolConfig field must be defined when using toolUse and toolResult "
                "content blocks.",
                None,
                None,
            )
            return


@RULES.rule("B6", "bedrock.tool_use_id_invalid")
def _tool_use_id_invalid(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, _, uses, results in _turns(body, ctx):
        for kind, blocks in (("toolUse", uses), ("toolResult", results)):
            for j, block in blocks:
                found = block.get("toolUseId")
                if not isinstance(found, str) or _valid_id(found):
                    continue
                where = f"messages.{i + 1}.member.content.{j + 1}.member.{kind}.toolUseId"
                constraint = (
                    f"Member must satisfy regular expression pattern: {TOOL_USE_ID_PATTERN}"
                    if len(found) <= 64 and found
                    else "Member must have length less than or equal to 64"
                    if found
                    else "Member must have length greater than or equal to 1"
                )
                yield (
                    f"1 validation error detected: Value '{found}' at '{where}' failed to "
                    f"satisfy constraint: {constraint}",
                    None,
                    None,
                )
                return


def _valid_id(found: str) -> bool:
    return 1 <= len(found) <= 64 and TOOL_USE_ID.fullmatch(found) is not None


@RULES.rule("B1", "bedrock.tool_use_unanswered")
def _tool_use_unanswered(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for (_, turn, uses, _), (j, after, _, results) in pairwise(_turns(body, ctx)):
        if turn.get("role") != "assistant" or after.get("role") != "user":
            continue
        answered = {str(r.get("toolUseId")) for _, r in results}
        missing = [
            str(u.get("toolUseId")) for _, u in uses if str(u.get("toolUseId")) not in answered
        ]
        if missing:
            yield (
                f"Expected toolResult blocks at messages.{j}.content for the following Ids: "
                f"{', '.join(missing)}",
                None,
                None,
            )
            return


@RULES.rule("B2", "bedrock.tool_results_exceed_uses")
def _results_exceed_uses(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    previous: dict[str, Any] = {}
    used: Blocks = []  # the previous message's toolUse blocks
    for i, message, uses, results in _turns(body, ctx):
        allowed = len(used) if previous.get("role") == "assistant" else 0
        if message.get("role") == "user" and len(results) > allowed:
            yield (
                f"The number of toolResult blocks at messages.{i}.content exceeds the "
                "number of toolUse blocks of previous turn.",
                None,
                None,
            )
            return
        previous, used = message, uses


@RULES.rule("B3", "bedrock.error_result_empty")
def _error_result_empty(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, _, _, results in _turns(body, ctx):
        for j, result in results:
            if result.get("status") == "error" and not result.get("content"):
                yield (
                    f"The content field at messages.{i}.content.{j}.toolResult cannot be empty "
                    "when status value is error.",
                    None,
                    None,
                )
                return


@RULES.rule("B7", "bedrock.results_with_text")
def _results_with_text(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    """Models other than Anthropic's (Llama, Mistral, Nova, ...) take no text beside tool
    results in one user turn; Claude takes it, as on Anthropic's own API."""
    if "anthropic." in ctx.conversation.model:
        return
    for i, message, _, _ in _turns(body, ctx):
        content = [b for _, b in items(message.get("content"))]
        if any("toolResult" in b for b in content) and any("text" in b for b in content):
            yield (
                f"messages.{i}.content: Conversation blocks and tool result blocks cannot be "
                "provided in the same turn.",
                None,
                None,
            )
            return
