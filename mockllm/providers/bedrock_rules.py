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


def _messages(body: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return list(items(body.get("messages")))


@RULES.rule("B5", "bedrock.content_empty")
def _content_empty(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, message in _messages(body):
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
    for _, message in _messages(body):
        if _blocks(message, "toolUse") or _blocks(message, "toolResult"):
            yield (
                "The toolConfig field must be defined when using toolUse and toolResult "
                "content blocks.",
                None,
                None,
            )
            return


@RULES.rule("B6", "bedrock.tool_use_id_invalid")
def _tool_use_id_invalid(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, message in _messages(body):
        for kind in ("toolUse", "toolResult"):
            for j, block in _blocks(message, kind):
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
    for (_, turn), (j, after) in pairwise(_messages(body)):
        if turn.get("role") != "assistant" or after.get("role") != "user":
            continue
        answered = {str(r.get("toolUseId")) for _, r in _blocks(after, "toolResult")}
        missing = [
            str(u.get("toolUseId"))
            for _, u in _blocks(turn, "toolUse")
            if str(u.get("toolUseId")) not in answered
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
    for i, message in _messages(body):
        if message.get("role") == "user":
            uses = len(_blocks(previous, "toolUse")) if previous.get("role") == "assistant" else 0
            if len(_blocks(message, "toolResult")) > uses:
                yield (
                    f"The number of toolResult blocks at messages.{i}.content exceeds the "
                    "number of toolUse blocks of previous turn.",
                    None,
                    None,
                )
                return
        previous = message


@RULES.rule("B3", "bedrock.error_result_empty")
def _error_result_empty(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, message in _messages(body):
        for j, result in _blocks(message, "toolResult"):
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
    for i, message in _messages(body):
        content = [b for _, b in items(message.get("content"))]
        if any("toolResult" in b for b in content) and any("text" in b for b in content):
            yield (
                f"messages.{i}.content: Conversation blocks and tool result blocks cannot be "
                "provided in the same turn.",
                None,
                None,
            )
            return
