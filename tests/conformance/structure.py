"""The structure of a JSON value or an SSE stream, and its comparison with a fixture.

Structure, never values: every key path (array elements merged under `[]`) with its JSON
type, so `null` and an absent key differ; the order of stream events, repeats collapsed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

# Subtrees that echo what the request sent (tool schemas, arguments, metadata): their shape
# is the request's, not the provider's.
PRUNED = re.compile(
    r"^(tools\[\]\.|input\[\]|text\.format\.schema|.*\.input\.|.*annotations\[\]|"
    r".*logprobs\[\]|content_block\.input\.|.*tools\[\]\.|metadata\.)"
)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def paths(
    value: Any, prefix: str = "", out: dict[str, set[str]] | None = None
) -> dict[str, set[str]]:
    out = {} if out is None else out
    if PRUNED.match(prefix):
        return out
    out.setdefault(prefix or "$", set()).add(json_type(value))
    if isinstance(value, dict):
        for key, item in value.items():
            paths(item, f"{prefix}.{key}" if prefix else key, out)
    elif isinstance(value, list):
        for item in value:
            paths(item, prefix + "[]", out)
    return out


def flat(found: dict[str, set[str]]) -> dict[str, str]:
    return {k: "|".join(sorted(v)) for k, v in sorted(found.items())}


def sse(text: str) -> Iterator[tuple[str | None, Any]]:
    """(event name, parsed data) of each SSE frame."""
    for block in text.split("\n\n"):
        name, data = None, []
        for line in block.splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            joined = "\n".join(data)
            try:
                yield name, json.loads(joined)
            except ValueError:
                yield name, joined


def chat_chunk_kind(chunk: dict[str, Any]) -> str:
    """What a Chat Completions chunk carries: its role in the stream's event order."""
    if not chunk.get("choices"):
        return "usage"
    choice = chunk["choices"][0]
    delta = choice.get("delta") or {}
    if choice.get("finish_reason"):
        return "finish"
    if "role" in delta:
        return "role"
    if delta.get("tool_calls"):
        return "call" if delta["tool_calls"][0].get("id") else "arguments"
    if delta.get("reasoning_content") is not None:
        return "reasoning"
    return "content"


def collapse(kinds: Iterable[str]) -> list[str]:
    """Runs of one kind become one: how many deltas a reply takes is a value."""
    out: list[str] = []
    for kind in kinds:
        if not out or out[-1] != kind:
            out.append(kind)
    return out


def stream_structure(text: str, api: str) -> tuple[list[str], dict[str, dict[str, str]]]:
    kinds: list[str] = []
    per: dict[str, dict[str, set[str]]] = {}
    for name, data in sse(text):
        if not isinstance(data, dict):
            kinds.append(str(data))
            continue
        kind = chat_chunk_kind(data) if api == "openai-chat" else str(data.get("type") or name)
        kinds.append(kind)
        paths(data, out=per.setdefault(kind, {}))
    return collapse(kinds), {k: flat(v) for k, v in sorted(per.items())}


def compare(
    recorded: dict[str, str], served: dict[str, str], allowed: set[str], where: str = ""
) -> list[str]:
    """Every path the recording has must be served with its type, and nothing more, except
    the paths a fixture's `differences` name (a name covers the subtree under it)."""

    def excused(path: str) -> bool:
        bare = path.split(":", 1)[-1]  # `*:PATH` excuses PATH in every event kind
        return any(
            p == a or p.startswith(a + ".") or p.startswith(a + "[]")
            for a in allowed
            for p in (path, "*:" + bare)
        )

    problems = []
    for path, kind in recorded.items():
        if excused(where + path):
            continue
        if path not in served:
            problems.append(f"{where}{path}: missing (recorded as {kind})")
        elif served[path] != kind:
            problems.append(f"{where}{path}: {served[path]} (recorded as {kind})")
    problems += [
        f"{where}{path}: sent as {served[path]}, absent from the recording"
        for path in sorted(served.keys() - recorded.keys())
        if not excused(where + path)
    ]
    return problems


def value_at(value: Any, path: str) -> list[Any]:
    """The values at a key path (`a.b[].c`), every array element included."""
    found = [value]
    for part in path.split("."):
        name, arrays = part.rstrip("[]"), part.count("[]")
        found = [v[name] for v in found if isinstance(v, dict) and name in v]
        for _ in range(arrays):
            found = [x for v in found if isinstance(v, list) for x in v]
    return found
