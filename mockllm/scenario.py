"""The scenario model: frozen dataclasses built from a schema-valid mapping.

YAML files and Python mappings (`add_scenario({...})`) go through the same
`build_scenario`, so both produce the same objects and the same errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .conversation import ToolChoice
from .errors import Problem

Finish = Literal["stop", "tool_calls", "length", "content_filter"]
ValidationMode = Literal["strict", "warn", "off"]
Flavor = Literal["openai", "deepseek"]

# Locates a YAML path such as ("turns", 0, "reply") in its source; used for errors.
Locate = Callable[[tuple[str | int, ...]], Problem]


@dataclass(frozen=True, slots=True)
class TextMatch:
    how: Literal["equals", "contains", "regex"]
    value: str

    def matches(self, text: str) -> bool:
        if self.how == "equals":
            return text == self.value
        if self.how == "contains":
            return self.value in text
        return re.search(self.value, text) is not None

    def describe(self) -> str:
        if self.how == "equals":
            return f"equal to {self.value!r}"
        if self.how == "contains":
            return f"containing {self.value!r}"
        return f"matching /{self.value}/"


@dataclass(frozen=True, slots=True)
class ResultMatch:
    contains: str | None = None
    regex: str | None = None
    is_error: bool | None = None


@dataclass(frozen=True, slots=True)
class Expect:
    user: TextMatch | None = None
    system: TextMatch | None = None
    model: TextMatch | None = None
    tools: tuple[str, ...] | None = None
    tool_choice: ToolChoice | None = None
    stream: bool | None = None
    tool_results: tuple[ResultMatch, ...] | None = None


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    name: str
    arguments: str  # exactly what goes on the wire
    id: str | None = None

    def arguments_object(self) -> dict[str, Any] | None:
        """The arguments as a JSON object, or None when the text is not one."""
        try:
            value = json.loads(self.arguments)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class Usage:
    input: int | None = None
    output: int | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    text: str = ""
    reasoning: str | None = None
    tool_calls: tuple[ScriptedCall, ...] = ()
    finish: Finish = "stop"
    usage: Usage = Usage()


@dataclass(frozen=True, slots=True)
class Turn:
    reply: Reply
    expect: Expect | None = None
    repeat: bool = False


@dataclass(frozen=True, slots=True)
class StreamConfig:
    text_chunk_chars: int = 16
    argument_fragments: int = 3


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    turns: tuple[Turn, ...]
    description: str = ""
    validation: ValidationMode | None = None  # None: the server's --validation
    flavor: Flavor | None = None  # None: the server's --flavor
    stream: StreamConfig = field(default_factory=StreamConfig)
    source: str = "<mapping>"

    def turn(self, index: int) -> Turn | None:
        """The turn answering `index`, honouring `repeat` on the last one; None past the end."""
        if index < len(self.turns):
            return self.turns[index]
        last = self.turns[-1]
        return last if last.repeat else None

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "turns": len(self.turns),
            "description": self.description,
            "source": self.source,
        }


def dump_arguments(arguments: object) -> str:
    """A mapping becomes compact JSON, as real models emit it; a string stays verbatim."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def build_scenario(data: Mapping[str, Any], name: str, source: str) -> Scenario:
    """Build from a mapping that already passed the JSON Schema."""
    turns = tuple(_turn(t) for t in data["turns"])
    stream = data.get("stream", {})
    return Scenario(
        name=data.get("name", name),
        turns=turns,
        description=data.get("description", "").strip(),
        validation=data.get("validation"),
        flavor=data.get("flavor"),
        stream=StreamConfig(**stream),
        source=source,
    )


def check_scenario(scenario: Scenario, locate: Locate) -> list[Problem]:
    """Mistakes the schema cannot see: they would only surface at request time."""
    problems: list[Problem] = []
    last = len(scenario.turns) - 1
    for i, turn in enumerate(scenario.turns):
        if turn.repeat and i != last:
            problems.append(_at(locate(("turns", i, "repeat")), "only the last turn can repeat"))
        expect = turn.expect
        if expect is None:
            continue
        for key in ("user", "system", "model"):
            match = getattr(expect, key)
            if match is not None and match.how == "regex":
                problems += _check_regex(match.value, locate(("turns", i, "expect", key, "regex")))
        for j, result in enumerate(expect.tool_results or ()):
            if result.regex is not None:
                where = locate(("turns", i, "expect", "tool_results", j, "regex"))
                problems += _check_regex(result.regex, where)
        if expect.tool_results:
            problems += _check_result_count(scenario, i, len(expect.tool_results), locate)
    return problems


def _check_result_count(scenario: Scenario, i: int, wanted: int, locate: Locate) -> list[Problem]:
    where = locate(("turns", i, "expect", "tool_results"))
    if i == 0:
        return [_at(where, "turn 0 has no previous turn, so no tool results can answer it")]
    calls = len(scenario.turns[i - 1].reply.tool_calls)
    if wanted > calls:
        return [_at(where, f"{wanted} results expected, but turn {i - 1} makes {calls} call(s)")]
    return []


def _check_regex(pattern: str, where: Problem) -> list[Problem]:
    try:
        re.compile(pattern)
    except re.error as e:
        return [_at(where, f"invalid regular expression: {e}")]
    return []


def _at(where: Problem, message: str) -> Problem:
    return where.with_message(message)


def _turn(data: Mapping[str, Any]) -> Turn:
    expect = data.get("expect")
    return Turn(
        reply=_reply(data["reply"]),
        expect=_expect(expect) if expect is not None else None,
        repeat=data.get("repeat", False),
    )


def _reply(data: Mapping[str, Any]) -> Reply:
    calls = tuple(
        ScriptedCall(c["name"], dump_arguments(c.get("arguments", {})), c.get("id"))
        for c in data.get("tool_calls", ())
    )
    usage = data.get("usage", {})
    return Reply(
        text=data.get("text", ""),
        reasoning=data.get("reasoning"),
        tool_calls=calls,
        finish=data.get("finish", "tool_calls" if calls else "stop"),
        usage=Usage(usage.get("input"), usage.get("output")),
    )


def _expect(data: Mapping[str, Any]) -> Expect:
    tools = data.get("tools")
    results = data.get("tool_results")
    return Expect(
        user=_text_match(data.get("user")),
        system=_text_match(data.get("system")),
        model=_text_match(data.get("model")),
        tools=tuple(tools) if tools is not None else None,
        tool_choice=_tool_choice(data.get("tool_choice")),
        stream=data.get("stream"),
        tool_results=tuple(ResultMatch(**r) for r in results) if results is not None else None,
    )


def _text_match(value: str | Mapping[str, str] | None) -> TextMatch | None:
    if value is None:
        return None
    if isinstance(value, str):
        return TextMatch("equals", value)
    ((how, text),) = value.items()
    return TextMatch(how, text)  # type: ignore[arg-type]  # the schema allows only the three


def _tool_choice(value: str | Mapping[str, str] | None) -> ToolChoice | None:
    if value is None:
        return None
    if isinstance(value, str):
        return ToolChoice(value)  # type: ignore[arg-type]  # the schema's enum
    return ToolChoice("tool", value["tool"])
