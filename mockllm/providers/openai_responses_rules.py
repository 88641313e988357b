"""Responses history rules (docs/validation.md), with the provider's own texts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mockllm.core.validation import Raised, RuleContext, RuleSet, items
from mockllm.providers.openai_chat_rules import SCHEMA_CODE, strict_problems
from mockllm.providers.openai_responses import reasoning_item_id

RULES = RuleSet()
ID_PREFIXES = {
    "function_call": "fc",
    "message": "msg",
    "reasoning": "rs",
    "custom_tool_call": "ctc",
}
OUTPUT_ITEMS = ("function_call", "custom_tool_call", "reasoning")


@RULES.rule("R6", "responses.strict_schema")
def _strict_schema(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, tool in items(body.get("tools")):
        if tool.get("type", "function") == "function" and tool.get("strict") is True:
            for _, problem in strict_problems(str(tool.get("name")), tool.get("parameters")):
                yield problem, f"tools[{i}].parameters", SCHEMA_CODE
                return


@RULES.rule("R3", "responses.item_id_prefix")
def _item_id_prefix(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for i, item in _input(body):
        prefix = ID_PREFIXES.get(_kind(item))
        item_id = item.get("id")
        if prefix and isinstance(item_id, str) and not item_id.startswith(prefix):
            message = (
                f"Invalid 'input[{i}].id': '{item_id}'. Expected an ID that begins with '{prefix}'."
            )
            yield message, f"input[{i}].id", "invalid_value"


@RULES.rule("R5", "responses.reasoning_without_following_item")
def _reasoning_alone(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for _, run in _runs(body, ctx):
        last = run[-1][1]
        if _kind(last) == "reasoning" and isinstance(last.get("id"), str):
            yield (
                f"Item '{last['id']}' of type 'reasoning' was provided without its required "
                "following item.",
                "input",
                None,
            )


@RULES.rule("R4", "responses.function_call_without_reasoning")
def _call_without_reasoning(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    for turn, run in _runs(body, ctx):
        served = ctx.scenario.turn(turn)
        if (
            served is None
            or served.reply.reasoning is None
            or any(_kind(i) == "reasoning" for _, i in run)
        ):
            continue
        for _, item in run:
            if _kind(item) == "function_call" and isinstance(item.get("id"), str):
                rs_id = reasoning_item_id(ctx.scenario.name, turn)
                message = (
                    f"Item '{item['id']}' of type 'function_call' was provided without its "
                    f"required 'reasoning' item: '{rs_id}'."
                )
                yield message, "input", None
                return


@RULES.rule("R1", "responses.call_without_output")
def _call_without_output(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    answered: set[str] = set()
    for m in reversed(ctx.conversation.messages):
        answered |= {r.call_id for r in m.tool_results}
        for call in m.tool_calls:
            if call.id not in answered:
                yield f"No tool output found for function call {call.id}.", "input", None
                return


@RULES.rule("R2", "responses.output_without_call")
def _output_without_call(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    called: set[str] = set()
    for m in ctx.conversation.messages:
        called |= {c.id for c in m.tool_calls}
        for result in m.tool_results:
            if result.call_id not in called:
                yield (
                    f"No tool call found for function call output with call_id {result.call_id}.",
                    "input",
                    None,
                )
                return


def _kind(item: dict[str, Any]) -> str:
    return str(item.get("type", "message"))


def _input(body: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    return items(body.get("input"))


def _is_output(item: dict[str, Any]) -> bool:
    return _kind(item) in OUTPUT_ITEMS or (
        _kind(item) == "message" and item.get("role") == "assistant"
    )


def _runs(
    body: dict[str, Any], ctx: RuleContext
) -> Iterator[tuple[int, list[tuple[int, dict[str, Any]]]]]:
    """Each run of consecutive output items in `input`, with the turn that produced it
    (replies kept on the server by previous_response_id come first)."""
    runs: list[list[tuple[int, dict[str, Any]]]] = []
    previous = -2
    for i, item in _input(body):
        if _is_output(item):
            if previous != i - 1:
                runs.append([])
            runs[-1].append((i, item))
            previous = i
    if not runs:  # (an input that is text: the usual request)
        return
    stored = sum(1 for m in ctx.conversation.messages if m.role == "assistant") - len(runs)
    for n, run in enumerate(runs):
        yield stored + n, run
