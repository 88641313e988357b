"""Chat Completions history rules (docs/validation.md), with the providers' own texts.

`flavor: deepseek` swaps in DeepSeek's wordings and adds its thinking-mode rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mockllm.core.cache import SizedLru
from mockllm.core.validation import Raised, RuleContext, RuleSet, items, schema_problem

RULES = RuleSet()
SCHEMA_CODE = "invalid_function_parameters"
# Memo keys the Chat parse fills in its own pass over the body (Parsed.views).
WALK = "walk"  # the history's C1-C3 walk
TOOLS_TEXT = "tools_text"  # repr of the body's tools: the key of both tools caches


def _tools(body: dict[str, Any], ctx: RuleContext) -> list[tuple[int, str, Any, bool]]:
    """(index, name, parameters, strict) of each function tool; shared by the rules."""
    found: list[tuple[int, str, Any, bool]] | None = ctx.memo.get("tools")
    if found is None:
        found = ctx.memo["tools"] = _function_tools(body)
    return found


def _function_tools(body: dict[str, Any]) -> list[tuple[int, str, Any, bool]]:
    """(index, name, parameters, strict) of each function tool."""
    tools, found = body.get("tools"), []
    for i, t in enumerate(tools if isinstance(tools, list) else ()):
        function = t.get("function") if isinstance(t, dict) else None
        if isinstance(function, dict) and t.get("type", "function") == "function":
            name, strict = str(function.get("name", "")), function.get("strict") is True
            found.append((i, name, function.get("parameters"), strict))
    return found


def _has_tools(body: dict[str, Any]) -> bool:
    return isinstance(body.get("tools"), list) and len(body["tools"]) > 0


@RULES.rule("C4", "chat.tool_choice_without_tools", needs=("tool_choice",))
def _tool_choice_without_tools(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    if "tool_choice" in body and not _has_tools(body):
        message = (
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
            "specified."
        )
        yield message, "tool_choice", None


@RULES.rule("C5", "chat.parallel_tool_calls_without_tools", needs=("parallel_tool_calls",))
def _parallel_without_tools(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    if "parallel_tool_calls" in body and not _has_tools(body):
        message = (
            "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when "
            "'tools' are specified."
        )
        yield message, "parallel_tool_calls", None


@RULES.rule("C11", "chat.tool_choice_unknown_tool", needs=("tool_choice",))
def _tool_choice_unknown(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    choice = body.get("tool_choice")
    named = choice.get("function") if isinstance(choice, dict) else None
    if isinstance(named, dict) and _has_tools(body):
        offered = {name for _, name, _, _ in _tools(body, ctx)}
        if named.get("name") not in offered:
            message = (
                f"Invalid value for 'tool_choice': function '{named.get('name')}' is not in "
                "'tools'."
            )
            yield message, "tool_choice", "invalid_value"


@RULES.rule("C10", "chat.schema_invalid", needs=("tools",))
def _schema_invalid(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    yield from _schemas(body, ctx).get("C10", ())


@RULES.rule("C9", "chat.schema_not_object", needs=("tools",))
def _schema_not_object(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    yield from _schemas(body, ctx).get("C9", ())


@RULES.rule("C6", "chat.schema_missing_properties", needs=("tools",))
def _schema_missing_properties(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    yield from _schemas(body, ctx).get("C6", ())


def _schemas(body: dict[str, Any], ctx: RuleContext) -> dict[str, list[Raised]]:
    """What the schema rules (C6-C10) find in the tools, by rule code; shared by them."""
    found: dict[str, list[Raised]] | None = ctx.memo.get("schemas")
    if found is None:
        found = ctx.memo["schemas"] = _tools_checked(body, ctx)
    return found


def _tools_checked(body: dict[str, Any], ctx: RuleContext) -> dict[str, list[Raised]]:
    """A harness sends the same tools list with every request: it is checked once, keyed by
    its text (repr: exact for JSON values; the key order names the first missing property)."""
    key = ctx.memo.get(TOOLS_TEXT)  # made by the Chat parse (Parsed.views), or here
    if key is None:
        key = repr(body.get("tools"))
    found: dict[str, list[Raised]] | None = _TOOL_LISTS.get(key)
    if found is None:
        found = _scan_schemas(body, ctx)
        _TOOL_LISTS.put(key, found, 2 * len(key) + len(repr(found)))
    return found


def _scan_schemas(body: dict[str, Any], ctx: RuleContext) -> dict[str, list[Raised]]:
    found: dict[str, list[Raised]] = {}
    for i, name, parameters, strict in _tools(body, ctx):
        if not isinstance(parameters, dict):
            continue
        # A harness sends the same tools with every request: each is checked once. The key
        # keeps the schema's key order, which names the first missing property (C7).
        key = (name, repr(parameters), strict)  # repr: exact for JSON values, and cheaper
        problems = _SCHEMAS.get(key)
        if problems is None:
            checks = _schema_checks(name, parameters, strict)
            problems = _SCHEMAS.put(key, checks, len(key[0]) + len(key[1]) + len(repr(checks)))
        for code, message in problems:
            found.setdefault(code, []).append(
                (message, f"tools[{i}].function.parameters", SCHEMA_CODE)
            )
    return found


_SCHEMAS = SizedLru(1024)  # keyed by a client's schema text: bounded in bytes too
_TOOL_LISTS = SizedLru(256)  # keyed by a client's tools list text: bounded in bytes too


def _schema_checks(
    name: str, parameters: dict[str, Any], strict: bool
) -> tuple[tuple[str, str], ...]:
    """(rule code, the provider's message) for each problem of one function's schema."""
    found = []
    problem = schema_problem(parameters)
    if problem:
        found.append(("C10", f"Invalid schema for function '{name}': {problem}"))
    if parameters.get("type") != "object":
        message = (
            f"Invalid schema for function '{name}': schema must be a JSON Schema of "
            f"'type: \"object\"', got 'type: \"{parameters.get('type')}\"'."
        )
        found.append(("C9", message))
    elif "properties" not in parameters:
        message = (
            f"Invalid schema for function '{name}': In context=(), object schema missing "
            "properties."
        )
        found.append(("C6", message))
    for kind, message in strict_problems(name, parameters) if strict else ():
        found.append(("C7" if kind == "required" else "C8", message))
    return tuple(found)


def strict_problems(
    name: str, schema: Any, context: tuple[str, ...] = ()
) -> Iterator[tuple[str, str]]:
    """Structured Outputs constraints on a `strict: true` schema (C7, C8, R6): every
    property required and `additionalProperties: false`, on every object schema.
    Yields (which constraint, the provider's message)."""
    if not isinstance(schema, dict):
        return
    where = f"In context={context!r}" if context else "In context=()"
    properties = schema.get("properties")
    if schema.get("type") == "object" and isinstance(properties, dict):
        required = schema["required"] if isinstance(schema.get("required"), list) else []
        missing = [key for key in properties if key not in required]
        if missing:
            yield (
                "required",
                (
                    f"Invalid schema for function '{name}': {where}, 'required' is required to be "
                    "supplied "
                    f"and to be an array including every key in properties. Missing '{missing[0]}'."
                ),
            )
        if schema.get("additionalProperties") is not False:
            yield (
                "additionalProperties",
                (
                    f"Invalid schema for function '{name}': {where}, 'additionalProperties' is "
                    "required to "
                    "be supplied and to be false."
                ),
            )
        for key, sub in properties.items():
            yield from strict_problems(name, sub, (*context, "properties", key))
    if isinstance(schema.get("items"), dict):
        yield from strict_problems(name, schema["items"], (*context, "items"))


@RULES.rule("C7", "chat.strict_required_incomplete", needs=("tools",))
def _strict_required(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    yield from _schemas(body, ctx).get("C7", ())


@RULES.rule("C8", "chat.strict_additional_properties", needs=("tools",))
def _strict_additional(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    yield from _schemas(body, ctx).get("C8", ())


@RULES.rule("D5", "deepseek.forced_tool_choice", needs=("tool_choice",), flavors=("deepseek",))
def _deepseek_forced_choice(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    choice = body.get("tool_choice")
    if _thinking(body, ctx) and (choice == "required" or isinstance(choice, dict)):
        yield "Thinking mode does not support this tool_choice", None, "invalid_request_error"


@RULES.rule("C2", "chat.tool_without_call")
def _tool_without_call(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    orphan = _walk(body, ctx).orphan
    if orphan is None:
        return
    if ctx.flavor == "deepseek":
        message = (
            "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
        )
        yield message, None, "invalid_request_error"
    else:  # the provider's own spelling
        message = (
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'."
        )
        yield message, f"messages.[{orphan}].role", None


@RULES.rule("C3", "chat.unknown_tool_call_id")
def _unknown_tool_call_id(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    unknown = _walk(body, ctx).unknown
    if unknown is not None:
        j, call_id = unknown
        message = (
            f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' "
            "of previous message."
        )
        yield message, f"messages.[{j}].tool_call_id", None


@RULES.rule("C1", "chat.tool_call_unanswered")
def _tool_call_unanswered(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    unanswered = _walk(body, ctx).unanswered
    if unanswered is None:
        return
    at, missing = unanswered
    if ctx.flavor == "deepseek":
        message = (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding "
            "to each 'tool_call_id'. (insufficient tool messages following tool_calls "
            "message)"
        )
        yield message, None, "invalid_request_error"
    else:
        message = (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding "
            "to each 'tool_call_id'. The following tool_call_ids did not have response "
            "messages: " + ", ".join(missing)
        )
        yield message, f"messages.[{at}].role", None


@RULES.rule("D1", "deepseek.reasoning_content_missing", flavors=("deepseek",))
def _deepseek_reasoning_missing(body: dict[str, Any], ctx: RuleContext) -> Iterator[Raised]:
    if not _thinking(body, ctx):
        return
    for i, m in items(body.get("messages")):
        if (
            m.get("role") == "assistant"
            and m.get("tool_calls")
            and not isinstance(m.get("reasoning_content"), str)
        ):
            yield _d1_message(str(body.get("model", "")), i), None, "invalid_request_error"
            return


def _d1_message(model: str, index: int) -> str:
    """The V3.2 models (deepseek-reasoner, deepseek-chat with thinking) name the message;
    the V4 ones do not (docs/validation.md, D1)."""
    if model in ("deepseek-reasoner", "deepseek-chat") or model.startswith("deepseek-v3"):
        return (
            f"Missing `reasoning_content` field in the assistant message at message index "
            f"{index}. For more information, please refer to "
            "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
        )
    return "The `reasoning_content` in the thinking mode must be passed back to the API."


def _thinking(body: dict[str, Any], ctx: RuleContext) -> bool:
    """DeepSeek thinking mode: asked for, or a reasoning model that was not told not to."""
    if ctx.flavor != "deepseek":
        return False
    thinking = body.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind is not None:
        return bool(kind == "enabled")
    model = str(body.get("model", ""))
    return "reasoner" in model or model.startswith("deepseek-v4")


@dataclass(slots=True)
class Walk:
    """The first breach of each history rule (C1-C3), found in one pass over the messages."""

    orphan: int | None = None  # C2: a tool message that follows no assistant tool_calls
    unknown: tuple[int, str] | None = None  # C3: (index, id) of a result to no call it follows
    # C1: where the first call left unanswered wanted its result, and every such call's id
    unanswered: tuple[int, list[str]] | None = None

    def close(self, opened: int, calls: list[str], answered: list[str]) -> None:
        """The tool messages after the assistant message at `opened` have ended."""
        if self.unanswered is None and answered != calls:  # the usual case: one by one, in order
            got = set(answered)
            missing = [c for c in calls if c not in got]
            if missing:
                self.unanswered = (opened + 1 + len(answered), missing)


def _walk(body: dict[str, Any], ctx: RuleContext) -> Walk:
    """One pass over the history, shared by the rules."""
    found: Walk | None = ctx.memo.get(WALK)
    if found is None:
        found = ctx.memo[WALK] = _scan(body)
    return found


def _scan(body: dict[str, Any]) -> Walk:
    walk = Walk()
    messages = body.get("messages")
    if not isinstance(messages, list):
        return walk
    # It runs per message of a history: locals, and the walk's fields set when found.
    orphan: int | None = None
    unknown: tuple[int, str] | None = None
    opened = -1  # the assistant message whose tool_calls the tool messages now answer
    calls: list[str] = []
    answered: list[str] = []
    answering = False  # the last message other than a tool result made tool calls
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role == "tool":
            if not answering and orphan is None:
                orphan = i
            if opened >= 0:
                call_id = str(m.get("tool_call_id"))
                if unknown is None and call_id not in calls:
                    unknown = (i, call_id)
                answered.append(call_id)
            continue
        if opened >= 0:
            if answered != calls:  # the usual case: answered one by one, in order
                walk.close(opened, calls, answered)
            opened = -1
        if not isinstance(m, dict):  # ends a group; not a message to the orphan check
            continue
        answering = role == "assistant" and bool(m.get("tool_calls"))
        if answering:
            calls = [str(c.get("id")) for c in m["tool_calls"] if isinstance(c, dict)]
            opened, answered = i, []
    if opened >= 0:
        walk.close(opened, calls, answered)
    walk.orphan, walk.unknown = orphan, unknown
    return walk
