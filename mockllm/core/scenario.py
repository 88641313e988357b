"""The scenario model: frozen dataclasses built from a schema-valid mapping.

YAML files and Python mappings (`add_scenario({...})`) go through the same
`build_scenario`, so both produce the same objects and the same errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal

from mockllm.core import bounded
from mockllm.core.conversation import ToolChoice
from mockllm.core.encoding import compact_json
from mockllm.core.mcp import McpServer, build_servers, check_servers, mcp_ref, names_mcp_tool
from mockllm.core.values import assert_never
from mockllm.errors import Problem

Finish = Literal["stop", "tool_calls", "length", "content_filter"]
ValidationMode = Literal["strict", "warn", "off"]
Flavor = Literal["openai", "deepseek", "qwen", "kimi", "glm", "doubao", "minimax"]
# The Chat Completions flavours (docs/flavours.md), in the order the docs list them.
FLAVORS: tuple[Flavor, ...] = ("openai", "deepseek", "qwen", "kimi", "glm", "doubao", "minimax")

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
        return bounded.search(self.value, text)

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
    # from_mcp: the texts the scripted MCP tool gives for that call; the result carries one
    from_mcp: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Expect:
    user: TextMatch | None = None
    system: TextMatch | None = None
    model: TextMatch | None = None
    tools: tuple[str, ...] | None = None
    tool_choice: ToolChoice | None = None
    stream: bool | None = None
    tool_results: tuple[ResultMatch, ...] | None = None


# What `json:` may ask of a structured-output reply: generate.py's kinds, and two more that
# only make sense for a whole reply (docs/scenarios.md, "Structured output").
JSON_KINDS = (
    "valid",
    "missing_required",
    "wrong_type",
    "enum_violation",
    "extra_property",
    "not_an_object",
    "double_encoded",
    "not_json",
    "in_prose",
)
APIS = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "bedrock-converse",
    "bedrock-invoke",
    "ollama",
)


@dataclass(frozen=True, slots=True)
class RequestMatch:
    """What identifies a request: a side request's rule, or a keyed turn's (core/matching.py).
    Every condition given must hold; None means "any"."""

    system: TextMatch | None = None
    user: TextMatch | None = None  # the latest user message's text
    model: TextMatch | None = None
    tool_results: TextMatch | None = None  # any result sent after the last assistant reply
    no_tools: bool | None = None  # True: no tools offered; False: some offered
    tool: str | None = None  # this tool is among those offered
    json: bool | None = None  # whether the request asks for JSON output
    api: tuple[str, ...] | None = None

    def texts(self) -> tuple[tuple[str, TextMatch], ...]:
        found = (
            ("system", self.system),
            ("user", self.user),
            ("model", self.model),
            ("tool_results", self.tool_results),
        )
        return tuple((k, m) for k, m in found if m is not None)


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    name: str  # with near_miss: the offered tool the wrong name is derived from
    arguments: str  # exactly what goes on the wire (unused with generate)
    id: str | None = None
    generate: str | None = (
        None  # derive arguments from the tool's schema: valid, missing_required, …
    )
    near_miss: bool = False  # send a plausible wrong name derived from `name`
    mcp: tuple[str, str] | None = None  # {mcp: SERVER/TOOL}: the offered tool naming it

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
    json: str | None = None  # a structured-output reply generated from the request's schema
    refusal: str | None = None  # OpenAI's `refusal`: the model declines to answer


@dataclass(frozen=True, slots=True)
class HttpFault:
    status: int
    type: str | None = None
    message: str | None = None
    code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class StreamError:
    after_events: int | None = None  # None: half way through the stream
    type: str | None = None
    message: str | None = None
    status: int | None = None  # for a non-streamed request


Disconnect = Literal["close", "reset"]


@dataclass(frozen=True, slots=True)
class Truncate:
    after_events: int | None = None
    after_bytes: int | None = None
    call: int | None = None  # inside the arguments of this call
    # None of the three (chaos): inside call 0's arguments when there is a call, else half way.
    disconnect: Disconnect = "reset"  # how the cut reply ends: the connection reset, or closed

    @property
    def inside(self) -> int | None:
        """The call whose arguments the cut falls inside, if the cut is placed that way."""
        if self.call is not None or (self.after_events is None and self.after_bytes is None):
            return self.call or 0
        return None

    def describe(self) -> str:
        if self.after_bytes is not None:
            return f"after {self.after_bytes} bytes"
        if self.after_events is not None:
            return f"after {self.after_events} events"
        return f"inside the arguments of call {self.inside}"


@dataclass(frozen=True, slots=True)
class Stall:
    """Headers, then nothing: the reply is held back until the client gives up."""


@dataclass(frozen=True, slots=True)
class Delay:
    first_byte_ms: int = 0
    between_chunks_ms: int = 0


# The parts of a fault that decide what the client gets instead of the whole reply. They
# exclude one another (each replaces or holds back what another would act on), so a fault
# holds one of them; a delay goes with any, or alone.
Part = HttpFault | Stall | StreamError | Truncate


@dataclass(frozen=True, slots=True)
class Fault:
    """How a reply is delivered wrong (docs/scenarios.md): at most one `Part`, and a delay."""

    part: Part | None = None  # None: the whole reply, only late (a delay) or not at all
    delay: Delay | None = None
    times: int | None = None  # only the first N attempts

    def applies(self, attempt: int) -> bool:
        return self.times is None or attempt <= self.times

    @property
    def kind(self) -> str:
        """The stable name in the log: the part that decides what the client sees."""
        match self.part:
            case HttpFault():
                return "http"
            case Stall():
                return "stall"
            case StreamError():
                return "stream_error"
            case Truncate():
                return "truncate"
            case None:
                return "delay" if self.delay else "none"
            case unreachable:
                assert_never(unreachable)

    @property
    def cuts(self) -> bool:
        """Whether the client gets less than the whole reply (a delay alone delivers it)."""
        return self.part is not None

    def describe(self) -> str:
        match self.part:
            case HttpFault(status=status):
                return f"HTTP {status}"
            case Stall():
                return "headers, then nothing"
            case StreamError(after_events=after):
                return f"error event after {'half the' if after is None else after} events"
            case Truncate() as truncate:
                return f"cut {truncate.describe()}, then {truncate.disconnect}"
            case None:
                return f"delay {self.delay}"
            case unreachable:
                assert_never(unreachable)


@dataclass(frozen=True, slots=True)
class Chaos:
    rates: tuple[tuple[str, float], ...]  # (fault kind, probability), in a fixed order
    seed: int | None = None  # None: the server's --seed


@dataclass(frozen=True, slots=True)
class Turn:
    reply: Reply
    expect: Expect | None = None
    repeat: bool = False
    fault: Fault | None = None
    has_reply: bool = True  # False: only an unconditional HTTP fault answers this turn
    match: RequestMatch | None = None  # a keyed turn: picked by what the request holds
    allow: Mapping[str, str] = field(default_factory=dict, compare=False)  # check -> reason


@dataclass(frozen=True, slots=True)
class SideRequest:
    """A request that is not a turn of the agent loop (a title, a router, a memory agent):
    answered by its own rule, never counted as a turn or an attempt (core/side.py)."""

    name: str
    match: RequestMatch
    reply: Reply
    fault: Fault | None = None
    origin: str = ""  # "" for the scenario's own, else the rule set it came from
    has_reply: bool = True  # False: only its HTTP fault answers it


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
    chaos: Chaos | None = None  # None: the server's --chaos
    source: str = "<mapping>"
    mcp_servers: tuple[McpServer, ...] = ()  # the tool side (core/mcp.py, docs/mcp.md)
    side_requests: tuple[SideRequest, ...] = ()
    # Assistant messages the harness writes itself (never served by mockllm): not turns.
    seeds: tuple[TextMatch, ...] = ()
    includes: tuple[str, ...] = ()  # the rule sets it includes, as named
    allow: Mapping[str, str] = field(default_factory=dict, compare=False)  # check -> reason
    # Whether a reply makes two calls or more, which a client may split over messages
    # (core/rejoin.py): derived once here, asked by every request.
    parallel_calls: bool = field(init=False, compare=False, repr=False)

    # Whether some turn is keyed (picked by content, core/matching.py): derived once.
    keyed: bool = field(init=False, compare=False, repr=False)
    # The texts its turns serve: an assistant message with one is never taken for a seed.
    served_texts: frozenset[str] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        parallel = any(len(t.reply.tool_calls) > 1 for t in self.turns)
        object.__setattr__(self, "parallel_calls", parallel)
        object.__setattr__(self, "keyed", any(t.match is not None for t in self.turns))
        object.__setattr__(self, "served_texts", frozenset(t.reply.text for t in self.turns))

    def mcp_server(self, name: str) -> McpServer | None:
        return next((s for s in self.mcp_servers if s.name == name), None)

    def mcp_tool_of(self, call_name: str) -> tuple[str, str] | None:
        """(server, tool) of the scripted MCP tool a model's call names, by any prefix."""
        for server in self.mcp_servers:
            for tool in server.tools:
                if names_mcp_tool(call_name, server.name, tool.name):
                    return server.name, tool.name
        return None

    def turn(self, index: int) -> Turn | None:
        """The turn answering `index`, honouring `repeat` on the last one; None past the end."""
        if index < len(self.turns):
            return self.turns[index]
        last = self.turns[-1]
        return last if last.repeat else None

    def allowances(self, index: int | None) -> Mapping[str, str]:
        """The verdict checks waived for a request at turn `index`: the scenario's and the
        turn's (the turn's reason wins)."""
        turn = self.turn(index) if index is not None else None
        if turn is None or not turn.allow:
            return self.allow
        return {**self.allow, **turn.allow}

    def tools(self) -> tuple[str, ...]:
        """The tool names a request must offer: what the turns expect, else what they call."""
        expected = [n for t in self.turns if t.expect and t.expect.tools for n in t.expect.tools]
        called = [c.name for t in self.turns for c in t.reply.tool_calls]
        return tuple(dict.fromkeys(expected or called))

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
    return compact_json(arguments)


def build_scenario(data: Mapping[str, Any], name: str, source: str) -> Scenario:
    """Build from a mapping that already passed the JSON Schema."""
    servers = build_servers(data.get("mcp_servers") or {})
    turns = tuple(_turn(t) for t in data["turns"])
    if servers:
        turns = _from_mcp(turns, servers)
    stream = data.get("stream", {})
    return Scenario(
        name=data.get("name", name),
        turns=turns,
        description=data.get("description", "").strip(),
        validation=data.get("validation"),
        flavor=data.get("flavor"),
        stream=StreamConfig(**stream),
        chaos=_chaos(data["chaos"]) if "chaos" in data else None,
        source=source,
        mcp_servers=servers,
        side_requests=tuple(_side(r, origin) for r, origin in _with_origin(data, "side_requests")),
        seeds=tuple(_text_match_required(m) for m, _ in _with_origin(data, "seed")),
        includes=tuple(data.get("include", ())),
        allow=dict(data.get("allow") or {}),
    )


def _from_mcp(turns: tuple[Turn, ...], servers: tuple[McpServer, ...]) -> tuple[Turn, ...]:
    """`from_mcp: true` made concrete: the texts the scripted tool gives the call it
    answers (the previous turn's call at that place), found once, when the scenario is built."""
    from dataclasses import replace

    out = list(turns)
    for i, turn in enumerate(turns):
        results = turn.expect.tool_results if turn.expect else None
        if not results or i == 0 or not any(r.from_mcp is not None for r in results):
            continue
        calls = turns[i - 1].reply.tool_calls
        made = []
        for j, match in enumerate(results):
            if match.from_mcp is not None and j < len(calls):
                match = replace(match, from_mcp=_mcp_texts(calls[j], servers))
            made.append(match)
        assert turn.expect is not None
        out[i] = replace(turn, expect=replace(turn.expect, tool_results=tuple(made)))
    return tuple(out)


def _mcp_texts(call: ScriptedCall, servers: tuple[McpServer, ...]) -> tuple[str, ...]:
    ref = call.mcp or next(
        (
            (s.name, t.name)
            for s in servers
            for t in s.tools
            if names_mcp_tool(call.name, s.name, t.name)
        ),
        None,
    )
    server = next((s for s in servers if ref and s.name == ref[0]), None)
    tool = server.tool(ref[1]) if server and ref else None
    if tool is None:
        return ()
    arguments = call.arguments_object() or {}
    picked = [r for r in tool.results if r.answers(arguments)][:1] or [
        r for r in tool.results if r.when is None
    ]
    return tuple(dict.fromkeys(r.content_text() for r in picked))


def _with_origin(data: Mapping[str, Any], key: str) -> list[tuple[Any, str]]:
    """The scenario's own entries under `key`, then those of the rule sets it includes
    (the loader puts them under `_included`: [(name, rule set), ...])."""
    own = [(item, "") for item in data.get(key, ())]
    for name, rules in data.get("_included", ()):
        own += [(item, name) for item in rules.get(key, ())]
    return own


def _side(data: Mapping[str, Any], origin: str) -> SideRequest:
    fault = data.get("fault")
    return SideRequest(
        name=data["name"],
        match=_request_match(data["match"]),
        reply=_reply(data.get("reply", {})),
        fault=_fault(fault) if fault is not None else None,
        origin=origin,
        has_reply="reply" in data,
    )


def _request_match(data: Mapping[str, Any]) -> RequestMatch:
    tools = data.get("tools")
    api = data.get("api")
    return RequestMatch(
        system=_text_match(data.get("system")),
        user=_text_match(data.get("user")),
        model=_text_match(data.get("model")),
        tool_results=_text_match(data.get("tool_results")),
        no_tools={"none": True, "some": False}.get(tools) if isinstance(tools, str) else None,
        tool=tools.get("includes") if isinstance(tools, Mapping) else None,
        json=data.get("json"),
        api=(api,) if isinstance(api, str) else tuple(api) if api is not None else None,
    )


def _text_match_required(value: str | Mapping[str, str]) -> TextMatch:
    match = _text_match(value)
    assert match is not None
    return match


def check_scenario(scenario: Scenario, locate: Locate, data: Mapping[str, Any]) -> list[Problem]:
    """Mistakes the schema cannot see: they would only surface at request time. `data`: the
    mapping it was built from, for what the objects cannot hold (two exclusive fault parts)."""
    problems: list[Problem] = []
    last = len(scenario.turns) - 1
    for i, turn in enumerate(scenario.turns):
        if turn.repeat and i != last:
            problems.append(_at(locate(("turns", i, "repeat")), "only the last turn can repeat"))
        problems += _check_turn_shape(turn, i, locate, data["turns"][i].get("fault"))
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
    if scenario.mcp_servers or any(c.mcp for t in scenario.turns for c in t.reply.tool_calls):
        refs = [
            (i, j, "/".join(c.mcp))
            for i, t in enumerate(scenario.turns)
            for j, c in enumerate(t.reply.tool_calls)
            if c.mcp
        ]
        problems += check_servers(scenario.mcp_servers, refs, locate)
    problems += _check_from_mcp(scenario, locate)
    problems += _check_matches(scenario, locate, data.get("side_requests") or ())
    if scenario.chaos and sum(rate for _, rate in scenario.chaos.rates) > 1:
        problems.append(_at(locate(("chaos",)), "the rates add up to more than 1"))
    return problems


def _check_matches(
    scenario: Scenario, locate: Locate, sides: Sequence[Mapping[str, Any]]
) -> list[Problem]:
    """Regular expressions of side requests, seeds and keyed turns compile; a side request
    answers every time (it has no attempts to count), so `times` makes no sense on it.
    `sides`: the scenario's own side requests as written."""
    problems: list[Problem] = []
    own = [s for s in scenario.side_requests if not s.origin]
    for j, side in enumerate(own):
        for key, match in side.match.texts():
            if match.how == "regex":
                where = locate(("side_requests", j, "match", key, "regex"))
                problems += _check_regex(match.value, where)
        answers = side.fault is not None and isinstance(side.fault.part, HttpFault)
        if not side.has_reply and not answers:
            message = "give a reply (text, json or refusal), or a fault: {http: …} to answer with"
            problems.append(_at(locate(("side_requests", j)), message))
        if side.fault is not None and side.fault.times is not None:
            message = "a side request is never counted as an attempt: times cannot apply"
            problems.append(_at(locate(("side_requests", j, "fault", "times")), message))
        if side.fault is not None:
            at = ("side_requests", j, "fault")
            problems += _check_fault(side.fault, sides[j]["fault"], at, locate)
    for j, seed in enumerate(scenario.seeds):  # the scenario's own first: their index is theirs
        if seed.how == "regex":
            problems += _check_regex(seed.value, locate(("seed", j, "regex")))
    for i, turn in enumerate(scenario.turns):
        for key, match in turn.match.texts() if turn.match else ():
            if match.how == "regex":
                problems += _check_regex(match.value, locate(("turns", i, "match", key, "regex")))
        if turn.match is not None and turn.repeat:
            message = "a keyed turn answers whatever it matches: repeat cannot apply"
            problems.append(_at(locate(("turns", i, "repeat")), message))
    return problems


def _check_turn_shape(
    turn: Turn, i: int, locate: Locate, written: Mapping[str, Any] | None
) -> list[Problem]:
    """A reply must exist unless an unconditional HTTP fault replaces it; faults must fit it.
    `written`: the turn's fault as written."""
    problems = []
    fault = turn.fault
    http = fault is not None and isinstance(fault.part, HttpFault)
    if not turn.has_reply and (fault is None or not http or fault.times is not None):
        why = (
            "later attempts, past times, are answered by it"
            if http
            else ("only an HTTP fault replaces it")
        )
        problems.append(_at(locate(("turns", i)), f"missing required key 'reply' ({why})"))
    truncate = fault.part if fault and isinstance(fault.part, Truncate) else None
    if truncate is not None:
        ways = [
            w for w in (truncate.after_events, truncate.after_bytes, truncate.call) if w is not None
        ]
        where = locate(("turns", i, "fault", "truncate"))
        if len(ways) != 1:
            problems.append(
                _at(
                    where,
                    "give exactly one of after_events, after_bytes, or inside: arguments with call",
                )
            )
        elif truncate.call is not None and truncate.call >= len(turn.reply.tool_calls):
            calls = len(turn.reply.tool_calls)
            problems.append(
                _at(where, f"call {truncate.call} does not exist: the reply makes {calls} call(s)")
            )
    if fault is not None and written is not None:
        problems += _check_fault(fault, written, ("turns", i, "fault"), locate)
    for j, call in enumerate(turn.reply.tool_calls):
        if call.generate is not None and call.arguments != "{}":
            where = locate(("turns", i, "reply", "tool_calls", j, "generate"))
            problems.append(_at(where, "give arguments or generate, not both"))
    return problems


# The keys of a fault's `Part`s, in the order a fault built from several would pick one (the
# loader refuses that): any earlier one (replacing the reply, or holding it back) leaves
# nothing for a later one to act on.
_PARTS = ("http", "stall", "stream_error", "truncate")
# A header value may not hold a line break (it would end the header) or another control
# character; a name must be an HTTP token.
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEADER_VALUE_BAD = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _check_fault(
    fault: Fault, written: Mapping[str, Any], where: tuple[str | int, ...], locate: Locate
) -> list[Problem]:
    """What a fault as `written` combines that its `Fault` cannot hold, and header values."""
    problems = []
    given = [key for key in _PARTS if written.get(key) not in (None, False)]  # stall: false
    for first, second in combinations(given, 2):
        message = f"{first} and {second} cannot combine: {first} leaves nothing for {second}"
        problems.append(_at(locate((*where, second)), message))
    if written.get("disconnect") is not None and written.get("truncate") is None:
        message = "disconnect only says how a truncated reply ends: add truncate"
        problems.append(_at(locate((*where, "disconnect")), message))
    for name, value in fault.part.headers if isinstance(fault.part, HttpFault) else ():
        at = locate((*where, "http", "headers", name))
        if not _HEADER_NAME.fullmatch(name):
            problems.append(_at(at, f"{name!r} is not a valid HTTP header name"))
        elif _HEADER_VALUE_BAD.search(value):
            message = f"the value {value!r} holds a line break or control character"
            problems.append(_at(at, message + ", which HTTP header values cannot"))
    return problems


def _check_from_mcp(scenario: Scenario, locate: Locate) -> list[Problem]:
    problems = []
    for i, turn in enumerate(scenario.turns):
        for j, match in enumerate(turn.expect.tool_results or () if turn.expect else ()):
            if match.from_mcp == ():
                where = locate(("turns", i, "expect", "tool_results", j, "from_mcp"))
                problems.append(
                    _at(
                        where,
                        (
                            f"call {j} of turn {i - 1} names no scripted MCP tool with a result "
                            "for its arguments"
                        ),
                    )
                )
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
    problem = bounded.check(pattern)
    return [_at(where, f"invalid regular expression: {problem}")] if problem else []


def _at(where: Problem, message: str) -> Problem:
    return where.with_message(message)


def _turn(data: Mapping[str, Any]) -> Turn:
    expect = data.get("expect")
    fault = data.get("fault")
    return Turn(
        reply=_reply(data.get("reply", {})),
        expect=_expect(expect) if expect is not None else None,
        repeat=data.get("repeat", False),
        fault=_fault(fault) if fault is not None else None,
        has_reply="reply" in data,
        match=_request_match(data["match"]) if "match" in data else None,
        allow=dict(data.get("allow") or {}),
    )


def _fault(data: Mapping[str, Any]) -> Fault:
    delay = data.get("delay")
    return Fault(_part(data), Delay(**delay) if delay is not None else None, data.get("times"))


def _part(data: Mapping[str, Any]) -> Part | None:
    """The fault's one `Part`: the first of `_PARTS` given (check_scenario refuses more)."""
    if (http := data.get("http")) is not None:
        return _http(http)
    if data.get("stall"):
        return Stall()
    if (error := data.get("stream_error")) is not None:
        return StreamError(**error)
    if (truncate := data.get("truncate")) is not None:
        return _truncate(truncate, data.get("disconnect") or "reset")
    return None


def _truncate(data: Mapping[str, Any], disconnect: Disconnect) -> Truncate:
    call = data.get("call", 0 if "inside" in data else None)  # inside: arguments means call 0
    return Truncate(data.get("after_events"), data.get("after_bytes"), call, disconnect)


def _http(data: Mapping[str, Any]) -> HttpFault:
    headers = tuple((str(k).lower(), _header_value(v)) for k, v in data.get("headers", {}).items())
    return HttpFault(
        data["status"], data.get("type"), data.get("message"), data.get("code"), headers
    )


def _header_value(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


CHAOS_KINDS = ("429", "500", "503", "529", "truncate", "stream_error", "delay")


def _chaos(data: Mapping[str, Any]) -> Chaos:
    rates = tuple((k, float(data[k])) for k in CHAOS_KINDS if k in data)  # a fixed order
    return Chaos(rates, data.get("seed"))


def _reply(data: Mapping[str, Any]) -> Reply:
    calls = tuple(_call(c) for c in data.get("tool_calls", ()))
    usage = data.get("usage", {})
    return Reply(
        text=data.get("text", ""),
        reasoning=data.get("reasoning"),
        tool_calls=calls,
        finish=data.get("finish", "tool_calls" if calls else "stop"),
        usage=Usage(usage.get("input"), usage.get("output")),
        json=data.get("json"),
        refusal=data.get("refusal"),
    )


def _call(data: Mapping[str, Any]) -> ScriptedCall:
    name = data["name"]
    if isinstance(name, Mapping) and "mcp" in name:
        ref = mcp_ref(name["mcp"])
        return ScriptedCall(
            name=ref[1] if ref else name["mcp"],
            arguments=dump_arguments(data.get("arguments", {})),
            id=data.get("id"),
            generate=data.get("generate"),
            mcp=ref,
        )
    near_miss = isinstance(name, Mapping)
    return ScriptedCall(
        name=name["near_miss"] if near_miss else name,
        arguments=dump_arguments(data.get("arguments", {})),
        id=data.get("id"),
        generate=data.get("generate"),
        near_miss=near_miss,
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
        tool_results=tuple(_result_match(r) for r in results) if results is not None else None,
    )


def _result_match(data: Mapping[str, Any]) -> ResultMatch:
    from_mcp = () if data.get("from_mcp") else None  # made concrete by _from_mcp
    return ResultMatch(data.get("contains"), data.get("regex"), data.get("is_error"), from_mcp)


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
