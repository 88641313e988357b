"""Anthropic Messages history rules (docs/validation.md), with the provider's own texts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mockllm.core.validation import Raised, RuleContext, RuleSet, items, schema_problem
from mockllm.providers.anthropic import signature

RULES = RuleSet()
THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
# Output-token ceilings the API enforces (A12), for models whose limit is known.
MAX_OUTPUT_TOKENS = {
    "claude-3-haiku-20240307": 4096,
    "claude-3-opus-20240229": 4096,
    "claude-3-5-sonnet-20240620": 4096,
    "claude-3-5-sonnet-20241022": 8192,
    "claude-3-5-haiku-20241022": 8192,
    "claude-3-7-sonnet-20250219": 64000,
    "claude-sonnet-4-20250514": 64000,
    "claude-opus-4-20250514": 32000,
    "claude-opus-4-1-20250805": 32000,
    "claude-sonnet-4-5": 64000,
    "claude-haiku-4-5": 64000,
}


@RULES.rule("A10", "anthropic.max_tokens_missing")
def _max_tokens_missing(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    if "max_tokens" not in body:
        yield "max_tokens: Field required", None, None


@RULES.rule("A12", "anthropic.max_tokens_over_limit", needs=("max_tokens",))
def _max_tokens_over_limit(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    model, asked = str(body.get("model")), body.get("max_tokens")
    limit = MAX_OUTPUT_TOKENS.get(model)
    if limit is not None and isinstance(asked, int) and asked > limit:
        yield (
            f"max_tokens: {asked} > {limit}, which is the maximum allowed number of output tokens "
            f"for {model}",
            None,
            None,
        )


@RULES.rule("A11", "anthropic.max_tokens_not_above_budget", needs=("thinking",))
def _max_tokens_vs_budget(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    thinking = body.get("thinking")
    budget = (
        thinking.get("budget_tokens") if isinstance(thinking, dict) and _thinking(body) else None
    )
    asked = body.get("max_tokens")
    if isinstance(budget, int) and isinstance(asked, int) and asked <= budget:
        message = (
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
            "documentation "
            f"at {THINKING_DOCS}#max-tokens-and-context-window-size"
        )
        yield message, None, None


@RULES.rule("A9", "anthropic.schema_invalid", needs=("tools",))
def _schema_invalid(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, tool in items(body.get("tools")):
        schema = tool.get("input_schema")
        if "type" in tool and tool.get("type") != "custom":
            continue  # server tools (web_search, …) carry no input_schema
        if not isinstance(schema, dict) or schema_problem(schema) is not None:
            message = (
                f"tools.{i}.custom.input_schema: JSON schema is invalid. It must match JSON "
                "Schema draft "
                "2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at "
                "https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview."
            )
            yield message, None, None


@RULES.rule("A8", "anthropic.thinking_forced_tool_choice", needs=("thinking",))
def _forced_tool_choice(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    choice = body.get("tool_choice")
    if _thinking(body) and isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        yield "Thinking may not be enabled when tool_choice forces tool use.", None, None


@RULES.rule("A1", "anthropic.tool_use_unanswered")
def _tool_use_unanswered(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, uses, follower, later in _exchanges(body, ctx):
        missing = [u for u in uses if u not in _result_ids(follower)]
        if missing and not any(m in _result_ids(b) for m in missing for b in later):
            message = (
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                "immediately after: "
                f"{', '.join(missing)}. Each `tool_use` block must have a corresponding "
                "`tool_result` block "
                "in the next message."
            )
            yield message, None, None
            return


@RULES.rule("A2", "anthropic.tool_results_not_first")
def _results_not_first(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, uses, follower, later in _exchanges(body, ctx):
        missing = [u for u in uses if u not in _result_ids(follower)]
        split = missing and any(m in _result_ids(b) for m in missing for b in later)
        leading = 0
        for block in follower:
            if block.get("type") != "tool_result":
                break
            leading += 1
        if split or (not missing and leading < len(uses)):
            message = (
                f"messages.{i + 1}: Did not find {len(uses)} `tool_result` block(s) at the "
                "beginning of this "
                "message. Messages following `tool_use` blocks must begin with a matching number "
                "of "
                "`tool_result` blocks."
            )
            yield message, None, None
            return


@RULES.rule("A13", "anthropic.tool_use_ids_not_unique")
def _tool_use_ids_not_unique(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    seen: set[str] = set()
    for n, (role, blocks) in enumerate(_messages(body, ctx)):
        for k, block in enumerate(blocks if role == "assistant" else []):
            if block.get("type") != "tool_use":
                continue
            if block.get("id") in seen:
                yield f"messages.{n}.content.{k}: `tool_use` ids must be unique", None, None
                return
            seen.add(str(block.get("id")))


@RULES.rule("A3", "anthropic.unexpected_tool_use_id")
def _unexpected_tool_use_id(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    messages = _messages(body, ctx)
    for n, (role, blocks) in enumerate(messages):
        if role != "user":
            continue
        previous = messages[n - 1] if n else ("user", [])
        known = _use_ids(previous[1]) if previous[0] == "assistant" else []
        for k, block in enumerate(blocks):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in known:
                message = (
                    f"messages.{n}.content.{k}: unexpected `tool_use_id` found in `tool_result` "
                    "blocks: "
                    f"{block.get('tool_use_id')}. Each `tool_result` block must have a "
                    "corresponding `tool_use` "
                    "block in the previous message."
                )
                yield message, None, None
                return


@RULES.rule("A5", "anthropic.thinking_block_missing", needs=("thinking",))
def _thinking_missing(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    last = _last_assistant(body, ctx)
    if not _thinking(body) or last is None or not _use_ids(last[1]):
        return
    n, blocks = last
    first = str(blocks[0].get("type")) if blocks else "text"
    if first not in ("thinking", "redacted_thinking"):
        message = (
            f"messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            f"`{first}`. "
            "When `thinking` is enabled, a final `assistant` message must start with a thinking "
            "block "
            "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend "
            "you include "
            "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. "
            "Please "
            f"consult our documentation at {THINKING_DOCS}"
        )
        yield message, None, None


@RULES.rule("A6", "anthropic.thinking_block_modified", needs=("thinking",))
def _thinking_modified(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    last = _last_assistant(body, ctx)
    if not _thinking(body) or last is None:
        return
    n, blocks = last
    served = ctx.scenario.turn(_turn_of(body, ctx, n))
    reasoning = served.reply.reasoning if served else None
    for k, block in enumerate(blocks):
        if (
            block.get("type") == "thinking"
            and reasoning is not None
            and block.get("thinking") != reasoning
        ):
            message = (
                f"messages.{n}.content.{k}: `thinking` or `redacted_thinking` blocks in the "
                "latest assistant "
                "message cannot be modified. These blocks must remain as they were in the "
                "original response."
            )
            yield message, None, None
            return


@RULES.rule("A7", "anthropic.thinking_signature_invalid", needs=("thinking",))
def _signature_invalid(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    if not _thinking(body):
        return
    for n, (role, blocks) in enumerate(_messages(body, ctx)):
        for k, block in enumerate(blocks if role == "assistant" else []):
            if block.get("type") != "thinking":
                continue
            expected = signature(
                ctx.scenario.name, _turn_of(body, ctx, n), str(block.get("thinking", ""))
            )
            if block.get("signature") != expected:
                yield (
                    f"messages.{n}.content.{k}: Invalid `signature` in `thinking` block",
                    None,
                    None,
                )
                return


def _thinking(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _messages(body: dict[str, Any], ctx: RuleContext) -> list[tuple[str, list[dict[str, Any]]]]:
    """(role, content blocks) per message; a string content is one text block. Read once
    per request, shared by the rules."""
    found: list[tuple[str, list[dict[str, Any]]]] | None = ctx.memo.get("messages")
    if found is None:  # the memo read directly: `ctx.shared` would build a lambda per call
        found = ctx.memo["messages"] = _read(body)
    return found


def _read(body: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    out: list[tuple[str, list[dict[str, Any]]]] = []
    raw = body.get("messages")
    for m in raw if isinstance(raw, list) else []:
        if not isinstance(m, dict):
            out.append(("", []))
            continue
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out.append(
            (
                str(m.get("role")),
                [b for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else [],
            )
        )
    return out


def _use_ids(blocks: list[dict[str, Any]]) -> list[str]:
    return [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]


def _result_ids(blocks: list[dict[str, Any]]) -> set[str]:
    return {str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"}


def _exchanges(
    body: dict[str, Any], ctx: RuleContext
) -> Iterator[tuple[int, list[str], list[dict[str, Any]], list[list[dict[str, Any]]]]]:
    """For each assistant message with tool_use: (its index, the ids, the next message's
    blocks if it is a user message, the blocks of the user messages after that one)."""
    messages = _messages(body, ctx)
    for i, (role, blocks) in enumerate(messages):
        uses = _use_ids(blocks) if role == "assistant" else []
        if not uses:
            continue
        follower = (
            messages[i + 1][1] if i + 1 < len(messages) and messages[i + 1][0] == "user" else []
        )
        later = []
        for next_role, next_blocks in messages[i + 2 :]:
            if next_role != "user":
                break
            later.append(next_blocks)
        yield i, uses, follower, later


def _last_assistant(
    body: dict[str, Any], ctx: RuleContext
) -> tuple[int, list[dict[str, Any]]] | None:
    messages = _messages(body, ctx)
    for n in range(len(messages) - 1, -1, -1):
        if messages[n][0] == "assistant":
            return n, messages[n][1]
    return None


def _turn_of(body: dict[str, Any], ctx: RuleContext, n: int) -> int:
    """The turn that produced assistant message `n`: runs of assistant messages are one reply."""
    roles = [role for role, _ in _messages(body, ctx)[: n + 1]]
    starts = [
        j
        for j, role in enumerate(roles)
        if role == "assistant" and (j == 0 or roles[j - 1] != "assistant")
    ]
    return len(starts) - 1
