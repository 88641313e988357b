"""The provider-neutral view of a request: what every adapter parses its wire format into.

One assistant `Message` is one assistant reply (a turn, docs/scenarios.md): adapters merge
what their wire splits (Anthropic same-role neighbours, a run of Responses output items).
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import field
from itertools import chain
from operator import attrgetter
from typing import Any, Literal

from mockllm.core.values import once, record, value

Role = Literal["system", "user", "assistant", "tool"]


@value  # built per message: see values.py
class ToolCall:
    """A call the assistant made in the history: its id, tool name and argument text."""

    id: str
    name: str
    arguments: str  # exactly as the client sent it back (a JSON string on OpenAI wires)


@value  # built per message: see values.py
class ToolResult:
    """A tool's result sent back for the call `call_id`."""

    call_id: str
    content: str
    is_error: bool | None = None  # None: the wire has no error flag (OpenAI)
    # How the result was matched to its call where ids are optional (Gemini): "by id",
    # "by name and position" or "unpaired"; None where every result names its call's id.
    paired: str | None = None


@value  # built per message: see values.py
class Message:
    """One message of the history, in every wire's terms."""

    role: Role
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    reasoning: str | None = None
    at: str = ""  # where it came from in the request, e.g. "messages[3]", for error messages

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "at": self.at}
        if self.text:
            out["text"] = self.text
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.tool_results:
            out["tool_results"] = [result_json(r) for r in self.tool_results]
        return out


def result_json(result: ToolResult) -> dict[str, Any]:
    out: dict[str, Any] = {"call_id": result.call_id, "content": result.content}
    if result.is_error is not None:
        out["is_error"] = result.is_error
    if result.paired is not None:
        out["paired"] = result.paired
    return out


@value
class Tool:
    """A tool the request offers the model."""

    name: str
    parameters: Any = None  # the JSON Schema as sent, or None
    strict: bool = False  # `strict: true`: the provider guarantees arguments that conform
    freeform: bool = False  # takes text, not JSON arguments (a Responses custom tool)
    description: str = ""  # what a tool search matches, with the name


@value
class ToolSearch:
    """The tool search a request offers (docs/scenarios.md, "Tool search"): `client`, a
    tool the client answers (Claude Code's `ToolSearch`, a Responses `tool_search` with
    `execution: client`), called with `{query_key: QUERY}`; or `server`, the provider's
    own (Anthropic's `tool_search_tool_regex`/`_bm25`, Responses' hosted `tool_search`),
    which answers in the same response."""

    kind: Literal["client", "server"]
    name: str  # the tool called (client), or the server tool's name
    query_key: str = "query"  # Anthropic's regex variant takes a `pattern`


@value
class ToolChoice:
    """What the request lets the model do with its tools."""

    mode: Literal["auto", "none", "required", "tool"]
    name: str | None = None  # the forced tool when mode == "tool"

    def __str__(self) -> str:
        return f"{{tool: {self.name}}}" if self.mode == "tool" else self.mode


@value
class OutputFormat:
    """JSON output the request asks for (docs/scenarios.md, "Structured output")."""

    kind: Literal["json_schema", "json_object"]
    schema: Any = None  # the JSON Schema asked for (json_schema), as sent
    name: str | None = None  # the schema's name where the wire gives one

    def schema_text(self) -> str | None:
        return json.dumps(self.schema, sort_keys=True) if self.kind == "json_schema" else None


@record  # no slots: the derived views below (`once`) are kept on the instance
class Conversation:
    """A model request, parsed into the provider-neutral form every wire shares."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...] = ()
    tool_choice: ToolChoice | None = None  # None: the request did not set it
    stream: bool = False
    output: OutputFormat | None = None  # JSON output asked for, if any
    # False: the request allows at most one call per reply (`parallel_tool_calls: false`,
    # Anthropic's `disable_parallel_tool_use: true`); True where the wire has no such switch.
    parallel_tool_calls: bool = True
    tool_search: ToolSearch | None = None  # the tool search offered, if any
    # Tools sent deferred (`defer_loading: true`) that no search in the history has found
    # yet: not offered (the model cannot call them), but what a search looks through.
    deferred: tuple[Tool, ...] = ()
    # Work derived from this request, kept exactly as long as the request is (the engine's
    # resolved replies): a cache that dies with its key never holds a history alive.
    memo: dict[Hashable, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    @once
    def turn(self) -> int:
        """The turn this request asks for: the number of assistant replies already in it."""
        return list(map(_ROLE, self.messages)).count("assistant")  # per message: no Python loop

    @property
    def system(self) -> str:
        return "\n".join(m.text for m in self.messages if m.role == "system")

    @property
    def latest_user_text(self) -> str | None:
        for m in reversed(self.messages):
            if m.role == "user":
                return m.text
        return None

    @property
    def last_assistant(self) -> Message | None:
        for m in reversed(self.messages):
            if m.role == "assistant":
                return m
        return None

    @property
    def latest_tool_results(self) -> tuple[ToolResult, ...]:
        """Results sent after the last assistant reply: the answers to its calls."""
        found: list[ToolResult] = []
        for m in reversed(self.messages):
            if m.role == "assistant":
                break
            found[:0] = m.tool_results
        return tuple(found)

    @property
    def effective_tool_choice(self) -> ToolChoice:
        """What the provider applies: the default is auto with tools, none without."""
        if self.tool_choice is not None:
            return self.tool_choice
        return ToolChoice("auto" if self.tools else "none")

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)

    @once
    def strict_tools(self) -> dict[str, str]:
        """name → JSON Schema text of the tools offered with `strict: true`."""
        return {
            t.name: json.dumps(t.parameters, sort_keys=True)
            for t in self.tools
            if t.strict and isinstance(t.parameters, dict)
        }

    @once
    def input_chars(self) -> int:
        """The characters of text, calls and results; counted without a Python loop per
        message (it runs over every message of the history)."""
        messages = self.messages
        calls = list(chain.from_iterable(map(_CALLS, messages)))
        results = chain.from_iterable(map(_RESULTS, messages))
        return (
            sum(map(len, map(_TEXT, messages)))
            + sum(map(len, map(_ARGUMENTS, calls)))
            + sum(map(len, map(_NAME, calls)))
            + sum(map(len, map(_CONTENT, results)))
        )


# Field readers for the counts above (C-level, where a lambda or a loop would run Python).
_ROLE, _TEXT = attrgetter("role"), attrgetter("text")
_CALLS, _RESULTS = attrgetter("tool_calls"), attrgetter("tool_results")
_NAME, _ARGUMENTS, _CONTENT = attrgetter("name"), attrgetter("arguments"), attrgetter("content")
