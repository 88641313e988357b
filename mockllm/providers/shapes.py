"""The types of the request fields mockllm reads, per wire format, and the first that is off.

Adapters read bodies optimistically (the hot path pays for no type walk). When reading a
body fails on a type nobody expected (`"tool_calls": 7`, `"id": [1]`), the exchange asks
`mismatch` where the body departs from its wire format's shape, and answers the provider's
400 naming that parameter path, as the real APIs do.

A shape is: a type (`str`, `int`, `bool`, `dict` for any object, `list` for any array,
`(int, float)` for a number), `None` (null allowed), a tuple of alternatives, a one-item
list (an array of that shape), or a dict (an object whose listed keys, when present, have
those shapes; other keys are not looked at).
"""

from __future__ import annotations

from typing import Any, TypeAlias

Shape: TypeAlias = "type | tuple[Shape, ...] | list[Shape] | dict[str, Shape] | None"
Path = tuple[str | int, ...]

_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    dict: "an object",
    list: "an array",
}


def mismatch(value: Any, shape: Shape, path: Path = ()) -> tuple[Path, str, Any] | None:
    """(path, what was expected there, what was found) of the first departure, or None."""
    if _fits(value, shape):
        if isinstance(shape, dict) and isinstance(value, dict):
            for key, inner in shape.items():
                if key in value:
                    found = mismatch(value[key], inner, (*path, key))
                    if found:
                        return found
        elif isinstance(shape, list) and isinstance(value, list):
            for i, item in enumerate(value):
                found = mismatch(item, shape[0], (*path, i))
                if found:
                    return found
        elif isinstance(shape, tuple):
            branch = next(s for s in shape if _fits(value, s))
            return mismatch(value, branch, path)
        return None
    return path, expected(shape), value


def _fits(value: Any, shape: Shape) -> bool:
    if shape is None:
        return value is None
    if isinstance(shape, tuple):
        return any(_fits(value, s) for s in shape)
    if isinstance(shape, list):
        return isinstance(value, list)
    if isinstance(shape, dict):
        return isinstance(value, dict)
    if isinstance(value, bool):
        return shape is bool
    if shape is float:
        return isinstance(value, int | float)
    return isinstance(value, shape)


def expected(shape: Shape) -> str:
    if shape is None:
        return "null"
    if isinstance(shape, tuple):
        names = [expected(s) for s in shape if s is not None and s is not int]
        return names[0] if len(names) == 1 else "one of " + " or ".join(names)
    if isinstance(shape, list):
        return "an array of objects" if isinstance(shape[0], dict) else "an array"
    if isinstance(shape, dict):
        return "an object"
    return _NAMES[shape]


def openai_param(path: Path) -> str:
    """messages[1].tool_calls: how the OpenAI API names a parameter."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "body"


def anthropic_param(path: Path) -> str:
    """messages.1.content.0.id: how the Anthropic API names a field."""
    return ".".join(str(p) for p in path) or "body"


# --- the shapes, by what the adapters and their rules read --------------------------------

_SCHEMA: Shape = dict  # a tool's JSON Schema: its own checks (rule C6/R3/A4) say the rest
_CHAT_PART: Shape = {"type": str, "text": str}
_CHAT_CALL: Shape = {"id": str, "type": str, "function": {"name": str, "arguments": str}}

CHAT: Shape = {
    "model": str,
    "messages": [
        {
            "role": str,
            "content": (str, [_CHAT_PART], None),
            "name": (str, None),
            "tool_calls": ([_CHAT_CALL], None),
            "tool_call_id": (str, None),
            "reasoning_content": (str, None),
        }
    ],
    "tools": (
        [
            {
                "type": str,
                "function": {"name": str, "description": (str, None), "parameters": _SCHEMA},
            }
        ],
        None,
    ),
    "tool_choice": (str, {"type": str, "function": {"name": str}}, None),
    "stream": (bool, None),
    "stream_options": ({"include_usage": (bool, None)}, None),
    "thinking": (dict, None),
}

_RESPONSES_PART: Shape = {"type": str, "text": str}
RESPONSES: Shape = {
    "model": str,
    "instructions": (str, None),
    "input": (
        str,
        [
            {
                "type": str,
                "role": str,
                "content": (str, [_RESPONSES_PART]),
                "id": str,
                "call_id": str,
                "name": str,
                "arguments": str,
                "output": (str, list),
                "summary": list,
            }
        ],
    ),
    "tools": ([{"type": str, "name": str, "parameters": (_SCHEMA, None), "strict": bool}], None),
    "tool_choice": (str, {"type": str, "name": str, "mode": str}, None),
    "previous_response_id": (str, None),
    "store": (bool, None),
    "stream": (bool, None),
}

_ANTHROPIC_BLOCK: Shape = {
    "type": str,
    "text": str,
    "id": str,
    "name": str,
    "input": dict,
    "tool_use_id": str,
    "content": (str, [dict]),
    "is_error": bool,
    "thinking": str,
    "signature": str,
}
ANTHROPIC: Shape = {
    "model": str,
    "max_tokens": int,
    "system": (str, [{"type": str, "text": str}]),
    "messages": [{"role": str, "content": (str, [_ANTHROPIC_BLOCK])}],
    "tools": [{"type": str, "name": str, "description": str, "input_schema": _SCHEMA}],
    "tool_choice": {"type": str, "name": str, "disable_parallel_tool_use": bool},
    "thinking": {"type": str, "budget_tokens": int},
    "stream": bool,
}

_BEDROCK_BLOCK: Shape = {
    "text": str,
    "toolUse": {"toolUseId": str, "name": str},
    "toolResult": {"toolUseId": str, "content": [dict], "status": str},
    "reasoningContent": {"reasoningText": {"text": str, "signature": str}},
}
BEDROCK: Shape = {
    "messages": [{"role": str, "content": [_BEDROCK_BLOCK]}],
    "system": [{"text": str}],
    "toolConfig": {
        "tools": [{"toolSpec": {"name": str, "description": str, "inputSchema": dict}}],
        "toolChoice": dict,
    },
    "inferenceConfig": {"maxTokens": int, "stopSequences": [str]},
    "outputConfig": dict,
}
