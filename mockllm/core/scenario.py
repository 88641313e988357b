"""The scenario model: the frozen dataclasses every request reads.

It is built from a schema-valid mapping by core/scenario_build.py (YAML files and Python
mappings alike) and checked for what the schema cannot see by core/scenario_checks.py,
so a new scenario key edits those two and, only for a new field, this one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mockllm.core import bounded
from mockllm.core.conversation import ToolChoice
from mockllm.core.embedding_rules import EmbeddingRules
from mockllm.core.keepalive import KeepAlive
from mockllm.core.mcp import McpServer
from mockllm.core.values import assert_never

Finish = Literal["stop", "tool_calls", "length", "content_filter"]
# An empty reply (docs/scenarios.md, "Replies that are valid and still wrong"): Chat's
# `content` null or "" (both are seen); every other wire has one empty shape.
Empty = Literal["null", "string"]
# Which filter stopped a `content_filter` reply: Gemini names it in its finishReason; the
# other wires have one filter reason each.
FilterReason = Literal["SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII"]
# Why Gemini blocked the prompt itself (promptFeedback.blockReason: no candidate at all).
BlockReason = Literal["SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT", "IMAGE_SAFETY"]

ValidationMode = Literal["strict", "warn", "off"]

Flavor = Literal[
    "openai", "deepseek", "qwen", "kimi", "glm", "doubao", "minimax", "mistral", "azure"
]

# The Chat Completions flavours (docs/flavours.md), in the order the docs list them.
FLAVORS: tuple[Flavor, ...] = (
    "openai",
    "deepseek",
    "qwen",
    "kimi",
    "glm",
    "doubao",
    "minimax",
    "mistral",
    "azure",
)


@dataclass(frozen=True, slots=True)
class TextMatch:
    """How a text is expected: equal to, containing, or matching a regex."""

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
    """What a tool result sent back is expected to hold."""

    contains: str | None = None
    regex: str | None = None
    is_error: bool | None = None
    # from_mcp: the texts the scripted MCP tool gives for that call; the result carries one
    from_mcp: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Expect:
    """A turn's `expect:`: what the request it answers should carry."""

    user: TextMatch | None = None
    system: TextMatch | None = None
    model: TextMatch | None = None
    tools: tuple[str, ...] | None = None
    tool_choice: ToolChoice | None = None
    stream: bool | None = None
    tool_results: tuple[ResultMatch, ...] | None = None


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
    """A tool call a turn's reply makes."""

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
    """The token counts a reply reports (None: counted from the texts)."""

    input: int | None = None
    output: int | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """What a turn answers: text, reasoning, tool calls, finish reason."""

    text: str = ""
    reasoning: str | None = None
    tool_calls: tuple[ScriptedCall, ...] = ()
    finish: Finish = "stop"
    usage: Usage = Usage()
    json: str | None = None  # a structured-output reply generated from the request's schema
    refusal: str | None = None  # the model declines to answer (each wire's own refusal)
    # `search_tools: QUERY`: the model searches the request's deferred tools first
    # (docs/scenarios.md, "Tool search"): a call of the client's search tool, or the
    # provider's own server-side search, whichever the request offers.
    search: str | None = None
    # A server-side search's result, made concrete per request: the deferred tools found.
    found: tuple[str, ...] = ()
    empty: Empty | None = None  # a 200 with no text, no calls, nothing
    filter: FilterReason | None = None  # the filter that stopped it (finish content_filter)
    blocked: BlockReason | None = None  # the prompt was blocked: no candidate (Gemini)
    # Nothing of it depends on the request (no `generate:`, `near_miss`, `mcp`, `json:` or
    # `search_tools`), decided once: `concrete()` hands it back as it is, unless it calls
    # a tool and the request offers strict tools (their required properties filled in).
    fixed: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        fixed = self.search is None and self.json is None
        for call in self.tool_calls:  # (a loop: any() over a generator is a call more)
            if call.generate or call.near_miss or call.mcp:
                fixed = False
        object.__setattr__(self, "fixed", fixed)

    @property
    def text_part(self) -> bool:
        """Whether a wire made of parts (Anthropic, Gemini, Responses, Bedrock) sends a text
        part: the text, or an empty one when the reply holds nothing else at all. An empty
        reply, a refusal, a blocked prompt and a tool search hold no text part."""
        others = self.tool_calls or self.reasoning is not None or self.refusal is not None
        others = others or self.search is not None
        nothing = self.empty is not None or self.blocked is not None
        return bool(self.text) or not (others or nothing)

    @property
    def kind(self) -> str | None:
        """The kind of valid-but-wrong reply this is (core/misbehaviour.py), if any."""
        if self.blocked is not None:
            return "blocked_prompt"
        if self.refusal is not None:
            return "refusal"
        if self.finish == "content_filter":
            return "content_filter"
        if self.empty is not None:
            return "empty"
        alone = not self.text and not self.tool_calls and self.search is None
        if self.reasoning is not None and alone:
            return "reasoning_only"
        return None


@dataclass(frozen=True, slots=True)
class HttpFault:
    """A scripted HTTP error answer (status, type, message)."""

    status: int
    type: str | None = None
    message: str | None = None
    code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    # Azure's prompt filter (`content_filter:` in a fault): (category, severity) it flags.
    filtered: tuple[str, str] | None = None


# Azure OpenAI's answer to a prompt its content filter blocks (docs/azure.md#the-content-filter).
CONTENT_FILTER_MESSAGE = (
    "The response was filtered due to the prompt triggering Azure OpenAI's content management "
    "policy. Please modify your prompt and retry. To learn more about our content filtering "
    "policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766"
)


@dataclass(frozen=True, slots=True)
class StreamError:
    """An error event sent in the middle of a stream."""

    after_events: int | None = None  # None: half way through the stream
    type: str | None = None
    message: str | None = None
    status: int | None = None  # for a non-streamed request


Disconnect = Literal["close", "reset"]


@dataclass(frozen=True, slots=True)
class Truncate:
    """A reply cut short: after some events or bytes, or by a disconnect."""

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


MisbehaviourKind = Literal["refusal", "content_filter", "empty", "reasoning_only"]
_MISBEHAVING = {
    "refusal": "a refusal",
    "content_filter": "a reply stopped by a content filter",
    "empty": "an empty reply",
    "reasoning_only": "reasoning and no answer",
}


@dataclass(frozen=True, slots=True)
class Misbehave:
    """The turn's reply replaced by a valid but wrong one of this kind (misbehaviour.py):
    delivered whole, so a harness retrying it gets the turn's own reply once `times` ends."""

    kind: MisbehaviourKind


@dataclass(frozen=True, slots=True)
class Delay:
    """Pauses before the first byte and between chunks."""

    first_byte_ms: int = 0
    between_chunks_ms: int = 0


# The parts of a fault that decide what the client gets instead of the whole reply. They
# exclude one another (each replaces or holds back what another would act on), so a fault
# holds one of them; a delay goes with any, or alone.
Part = HttpFault | Stall | StreamError | Truncate | Misbehave


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
            case Misbehave(kind=kind):
                return kind
            case None:
                return "delay" if self.delay else "none"
            case unreachable:
                assert_never(unreachable)

    @property
    def cuts(self) -> bool:
        """Whether the client gets less than the whole reply (a delay alone delivers it, and
        a misbehaving reply is whole)."""
        return self.part is not None and not isinstance(self.part, Misbehave)

    def describe(self) -> str:
        match self.part:
            case HttpFault(filtered=(category, _)):
                return f"HTTP 400 (content filter: {category})"
            case HttpFault(status=status):
                return f"HTTP {status}"
            case Stall():
                return "headers, then nothing"
            case StreamError(after_events=after):
                return f"error event after {'half the' if after is None else after} events"
            case Truncate() as truncate:
                return f"cut {truncate.describe()}, then {truncate.disconnect}"
            case Misbehave(kind=kind):
                return f"{_MISBEHAVING[kind]} instead of the reply"
            case None:
                return f"delay {self.delay}"
            case unreachable:
                assert_never(unreachable)


@dataclass(frozen=True, slots=True)
class Chaos:
    """Faults drawn at random, each with its probability, from a seed."""

    rates: tuple[tuple[str, float], ...]  # (fault kind, probability), in a fixed order
    seed: int | None = None  # None: the server's --seed


@dataclass(frozen=True, slots=True)
class Turn:
    """One scripted step of a scenario: the request it expects, the reply it gives."""

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
    """How replies are cut into stream events."""

    text_chunk_chars: int = 16
    argument_fragments: int = 3
    keep_alive: KeepAlive | None = None  # SSE comments between the events (core/keepalive.py)


@dataclass(frozen=True, slots=True)
class Plain:
    """What a plain scenario decides once, at load, for every request it answers
    (`Engine.plain`, `MemoryStore.answer`): a scenario with no side request, no fault, no
    chaos of its own, no seed and no keyed turn, whose requests skip the checks for those."""

    # Per turn: `Scenario.allowances` (the log's `allow`), the last one for a `repeat`.
    allow: tuple[Mapping[str, str], ...]
    # Some reply calls a tool: a reply merged by the client may be read apart (rejoin.py)
    calls: bool


def _plain(scenario: Scenario) -> Plain | None:
    turns = scenario.turns
    if scenario.side_requests or scenario.chaos or scenario.seeds or scenario.keyed:
        return None
    if not turns or any(t.fault is not None or not t.has_reply for t in turns):
        return None
    return Plain(
        tuple(scenario.allowances(i) for i in range(len(turns))),
        any(t.reply.tool_calls for t in turns),
    )


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scripted conversation, as loaded from one file."""

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
    # How embeddings requests are answered beyond the hashed vectors (docs/embeddings.md)
    embeddings: EmbeddingRules | None = None
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
    # What every request of a plain scenario skips, decided here once (None: not plain).
    plain: Plain | None = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        parallel = any(len(t.reply.tool_calls) > 1 for t in self.turns)
        object.__setattr__(self, "parallel_calls", parallel)
        object.__setattr__(self, "keyed", any(t.match is not None for t in self.turns))
        object.__setattr__(self, "served_texts", frozenset(t.reply.text for t in self.turns))
        object.__setattr__(self, "plain", _plain(self))

    def mcp_server(self, name: str) -> McpServer | None:
        return next((s for s in self.mcp_servers if s.name == name), None)

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


CHAOS_KINDS = (
    "429",
    "500",
    "503",
    "529",
    "truncate",
    "stream_error",
    "delay",
    "refusal",
    "content_filter",
    "empty",
    "reasoning_only",
)
