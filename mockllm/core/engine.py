"""Choose scenario, turn and attempt; check expectations; hand back the reply to render.

Provider-neutral: it sees only `Conversation`s and answers with `Answer`s.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from mockllm.core import misbehaviour
from mockllm.core.concrete import concrete
from mockllm.core.conversation import Conversation
from mockllm.core.divergence import CONTINUED, CallId, diverged
from mockllm.core.encoding import digest
from mockllm.core.expectations import check
from mockllm.core.matching import UNMATCHED, WHY, diverged_keyed, located
from mockllm.core.possible import IMPOSSIBLE, impossible, impossible_reply
from mockllm.core.rejoin import rejoined, unmerged
from mockllm.core.scenario import (
    Chaos,
    Delay,
    Fault,
    Flavor,
    HttpFault,
    Misbehave,
    Reply,
    Scenario,
    StreamError,
    Truncate,
    Turn,
    ValidationMode,
)
from mockllm.core.side import SideMatch
from mockllm.core.structured import structured
from mockllm.core.validation import RULE_HEADER, Violation
from mockllm.core.values import value
from mockllm.errors import Finding, RequestError, did_you_mean

_NONE: list[Finding] = []  # shared, never mutated: answers and log entries hold many of them

# 2025-01-01T00:00:00Z: what every `created` field shows, so bodies are byte-identical across runs.
FIXED_CREATED = 1735689600


@value  # one per request: see values.py
class Resolved:
    """A reply ready to render: everything an adapter needs, nothing provider-specific."""

    scenario: Scenario
    turn: int
    reply: Reply
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    created: int  # unix time shown in `created` fields: fixed unless --real-time
    attempt: int = 1  # the attempt at the turn it answers: ids derive from it past the first

    @property
    def id_turn(self) -> int | str:
        """What response and call ids are derived from in place of the turn: the turn on a
        first attempt, and `turn.attempt` on a retry, so that every answer's ids are fresh
        (docs/scenarios.md, "Retries")."""
        return self.turn if self.attempt == 1 else f"{self.turn}.{self.attempt}"


@dataclass(slots=True)
class Answer:
    """What the engine decided for one request: the turn, its attempt, the reply or error."""

    turn: int
    attempt: int
    resolved: Resolved | None = None
    error: RequestError | None = None
    expectation_failures: list[Finding] = field(default_factory=list)
    violations: list[Finding] = field(default_factory=list)
    fault: Fault | None = None  # how the reply is delivered wrong, if at all
    fault_why: str = ""  # scripted (and which attempt), or the chaos draw
    cut: str | None = None  # how this turn's delivery is now cut short (None: whole)
    side: SideMatch | None = None  # a side request: no turn, no attempt (core/side.py)
    why: str | None = None  # which rule picked the turn, when not the plain count


# Chaos faults, in the order the draw walks them (scenario.CHAOS_KINDS). HTTP ones carry
# retry-after-ms: 20 so that an SDK's automatic retry stays fast; script an `http` fault
# for other headers.
_FAST_RETRY = (("retry-after-ms", "20"),)
CHAOS_FAULTS: dict[str, Fault] = {
    "429": Fault(HttpFault(429, headers=_FAST_RETRY)),
    "500": Fault(HttpFault(500, headers=_FAST_RETRY)),
    "503": Fault(HttpFault(503, headers=_FAST_RETRY)),
    "529": Fault(HttpFault(529, headers=_FAST_RETRY)),
    "truncate": Fault(Truncate()),  # inside call 0's arguments, else half way
    "stream_error": Fault(StreamError()),
    "delay": Fault(delay=Delay(first_byte_ms=250)),
    # Valid replies that are still wrong (core/misbehaviour.py), in place of the turn's.
    "refusal": Fault(Misbehave("refusal")),
    "content_filter": Fault(Misbehave("content_filter")),
    "empty": Fault(Misbehave("empty")),
    "reasoning_only": Fault(Misbehave("reasoning_only")),
}


class Engine:
    def __init__(
        self,
        scenarios: Iterable[Scenario],
        *,
        default: str | None,
        validation: ValidationMode,
        real_time: bool,
        flavor: Flavor,
        chaos: Chaos | None,
        seed: int,
    ) -> None:
        """The defaults live in `mockllm.options.ServerOptions`. Attempts and cut deliveries
        are kept by a store (mockllm.state), which hands them to `answer`."""
        self.scenarios: dict[str, Scenario] = {s.name: s for s in scenarios}
        self.default = default
        self.validation: ValidationMode = validation
        self.real_time = real_time
        self.flavor: Flavor = flavor
        self.chaos = chaos
        self.seed = seed

    def add(self, scenario: Scenario) -> bool:
        """Add or replace a scenario; True when it replaced one of the same name."""
        replaced = scenario.name in self.scenarios
        self.scenarios[scenario.name] = scenario
        return replaced

    def find(self, name: str | None) -> Scenario:
        name = name or self.default
        scenario = self.scenarios.get(name) if name else None
        if scenario is None:
            known = ", ".join(sorted(self.scenarios)) or "none"
            if name:
                message = f"mockllm: no scenario named {name!r}{did_you_mean(name, self.scenarios)}"
                message += f"; scenarios: {known}"
            else:
                message = (
                    "mockllm: no scenario chosen: use the path /s/NAME/..., the header "
                    f"X-Mockllm-Scenario, or start the server with --default; scenarios: {known}"
                )
            raise RequestError(404, message, kind="scenario_not_found", code="scenario_not_found")
        return scenario

    def mode(self, scenario: Scenario) -> ValidationMode:
        return scenario.validation or self.validation

    def joined(
        self, scenario: Scenario, conv: Conversation, call_id: CallId | None
    ) -> Conversation:
        """The conversation `answer` takes: merged replies read apart and split parallel
        calls joined back (core/rejoin.py), seeded
        assistant messages left out, a keyed turn picked (its `turn` is what the attempt is
        counted for; core/matching.py)."""
        if call_id is not None:
            conv = rejoined(unmerged(conv, scenario, call_id), scenario, call_id)
        return located(conv, scenario) if scenario.seeds or scenario.keyed else conv

    def side(
        self,
        scenario: Scenario,
        conv: Conversation,
        found: SideMatch,
        violations: tuple[Violation, ...] = (),
    ) -> Answer:
        """The answer to a side request (`core.side.side_request` found it). Never counted:
        it has no turn and no attempt; its fault, if any, always applies."""
        answer = Answer(found.turn, 0, side=found, why=found.why)
        answer.violations = [v.finding() for v in violations] if violations else _NONE
        if self.mode(scenario) == "strict" and violations:
            answer.error = violations[0].error()
            return answer
        rule = found.rule
        try:
            reply = structured(
                scenario, found.turn, rule.reply, conv, f"side request {rule.name!r}"
            )
        except RequestError as error:
            answer.error = error
            return answer
        created = int(time.time()) if self.real_time else FIXED_CREATED
        answer.resolved = _resolve(scenario, found.turn, reply, conv, created)
        if rule.fault is not None:
            answer.fault, answer.fault_why = rule.fault, found.why
        return answer

    def answer(
        self,
        scenario: Scenario,
        session: str,
        conv: Conversation,
        attempt: int,
        cuts: Mapping[int, str],
        violations: tuple[Violation, ...] = (),
        call_id: CallId | None = None,
    ) -> Answer:
        """Check in the order a real API refuses: the provider's rules, then the history
        against the script, then the script's end, then the turn's expectations, then
        whether any model could give the turn's reply to this request (core/possible.py).
        All that is found is logged; the first refusal is the answer (rules, divergence and
        impossible replies refuse in strict mode only).

        `conv` as `joined` gives it; `attempt` is this one's number at its turn, `cuts` how
        the session's earlier turns of the scenario were cut short. The answer's `cut` is
        what the store should hold for this turn afterwards."""
        index = conv.turn
        answer = Answer(
            index,
            attempt,
            expectation_failures=_NONE,  # (not the field's default: a list built per request)
            violations=[v.finding() for v in violations] if violations else _NONE,
            cut=cuts.get(index),
        )
        mode = scenario.validation or self.validation  # (`mode`, without its call)
        if mode == "strict" and violations:
            answer.error = violations[0].error()
        memo = conv.memo
        if memo:
            answer.why = memo.get(WHY)
            answer.error = answer.error or memo.get(UNMATCHED)
        # An unkeyed turn 0 has nothing served before it to diverge from (_check_history)
        if call_id is not None and mode != "off" and (index or scenario.keyed):
            _check_history(answer, scenario, conv, call_id, cuts, strict=mode == "strict")
        turn = scenario.turn(index)
        if turn is None:
            exhausted = Finding("scenario_exhausted", exhausted_message(scenario, index))
            answer.violations = [*answer.violations, exhausted]
            answer.error = answer.error or _refusal(exhausted, "scenario_exhausted")
            return answer
        failures = check(turn.expect, conv, index) if turn.expect else _NONE
        answer.expectation_failures = failures
        if failures:
            message = "mockllm expectation failed: " + "; ".join(f.message for f in failures)
            answer.error = answer.error or _refusal(Finding("", message), "expectation_failed")
        if answer.error is None and mode != "off":
            why = impossible(turn.reply, conv)  # (None for the usual request: nothing built)
            if why is not None:
                found = impossible_reply(scenario.name, index, why, conv)
                answer.violations = [*answer.violations, found[0]]
                if mode == "strict" and found[1]:
                    answer.error = _refusal(found[0], IMPOSSIBLE)
        if answer.error is None:
            self._serve(answer, scenario, session, turn, conv)
        return answer

    def plain(
        self,
        scenario: Scenario,
        conv: Conversation,
        attempt: int,
        cuts: Mapping[int, str],
        violations: tuple[Violation, ...],
        call_id: CallId | None,
    ) -> Answer | None:
        """`answer` for a request of a plain scenario (`Scenario.plain`: no fault, chaos, side
        request, seed or keyed turn, decided at load) when there is nothing to say of it: no
        rule broken, a turn there, the history as served, its expectations met, a reply
        some model could give. None otherwise, and `answer` then says what it found: both
        read the same request and change nothing, so the answer is the same. The server's
        --chaos is the caller's to rule out."""
        if violations:
            return None
        index, turns = conv.turn, scenario.turns
        turn = turns[index] if index < len(turns) else scenario.turn(index)
        if turn is None:
            return None
        answer = Answer(index, attempt, None, None, _NONE, _NONE)
        reply = turn.reply
        mode = scenario.validation or self.validation
        if mode != "off":
            if call_id is not None and index:
                _check_history(answer, scenario, conv, call_id, cuts, strict=mode == "strict")
                if answer.violations:
                    return None
            if impossible(reply, conv) is not None:
                return None
        if turn.expect and check(turn.expect, conv, index):
            return None
        fixed = reply.fixed
        if fixed and reply.tool_calls:  # a strict tool called gets its required properties:
            for tool in conv.tools:  # `concrete` fills them in (read here without building
                if tool.strict:  # the request's `strict_tools`, which is seldom needed)
                    fixed = False
                    break
        if not fixed:
            try:
                reply = concrete(scenario, index, reply, conv)
                if reply.json is not None:
                    reply = structured(scenario, index, reply, conv, f"turn {index}")
            except RequestError:
                return None
        created = int(time.time()) if self.real_time else FIXED_CREATED
        answer.resolved = _resolve(scenario, index, reply, conv, created, attempt)
        return answer

    def _serve(
        self, answer: Answer, scenario: Scenario, session: str, turn: Turn, conv: Conversation
    ) -> None:
        """The turn's reply made concrete for this request, and how it is delivered (wrong)."""
        index, attempt = answer.turn, answer.attempt
        try:
            reply = concrete(scenario, index, turn.reply, conv)
            if reply.json is not None:  # (structured's own test, without its call per request)
                reply = structured(scenario, index, reply, conv, f"turn {index}")
        except RequestError as error:
            answer.error = error
            return
        created = int(time.time()) if self.real_time else FIXED_CREATED
        if turn.fault is None and scenario.chaos is None and self.chaos is None:
            fault = None  # the usual turn: nothing delivers it wrong (answer.fault's default)
        else:
            fault, answer.fault_why = self._fault(scenario, session, index, attempt)
            answer.fault = fault
        if fault is not None and isinstance(fault.part, Misbehave):
            reply = misbehaviour.misbehaving(reply, fault.part.kind)
        answer.resolved = _resolve(scenario, index, reply, conv, created, attempt)
        if fault is not None and fault.cuts:
            answer.cut = f"{fault.describe()} on attempt {attempt}"
        else:
            answer.cut = None

    def _fault(
        self, scenario: Scenario, session: str, index: int, attempt: int
    ) -> tuple[Fault | None, str]:
        """The scripted fault while its `times` lasts; on a turn without one, a chaos draw
        (docs/scenarios.md: chaos goes to turns that have no scripted fault)."""
        turn = scenario.turn(index)
        fault = turn.fault if turn else None
        if fault is not None:
            if not fault.applies(attempt):
                return None, ""  # its `times` are spent: served whole, as scripted
            limit = f" of times: {fault.times}" if fault.times else ""
            return fault, f"scripted: attempt {attempt}{limit}"
        chaos = scenario.chaos or self.chaos
        if chaos is None:
            return None, ""
        seed = self.seed if chaos.seed is None else chaos.seed
        draw = chaos_draw(seed, session, scenario.name, index, attempt)
        bound = 0.0
        for kind, rate in chaos.rates:
            bound += rate
            if draw < bound:
                return CHAOS_FAULTS[
                    kind
                ], f"chaos: seed {seed}, draw {draw:.4f} < {bound:.4f} ({kind} at {rate:g})"
        return None, ""


def _check_history(
    answer: Answer,
    scenario: Scenario,
    conv: Conversation,
    call_id: CallId,
    cuts: Mapping[int, str],
    strict: bool,
) -> None:
    """The history against what the script served: a divergence is logged, and refused in
    strict mode, unless it is a harness continuing after a failed stream (its own mistake,
    not a request the provider would refuse: the verdict reports it, the answer goes on)."""
    if not scenario.keyed and conv.turn == 0:
        return  # nothing served before it to diverge from
    served = _ServedReplies(scenario, conv)
    if scenario.keyed:
        divergence = diverged_keyed(conv, scenario, call_id, served)
    else:
        divergence = diverged(conv, scenario, call_id, served, cuts.get)
    if divergence is None:
        return
    answer.violations = [*answer.violations, divergence]
    if strict and divergence.rule != CONTINUED:
        answer.error = answer.error or _refusal(divergence, "history_diverged")


def exhausted_message(scenario: Scenario, index: int) -> str:
    """Why a request found no turn, and the two ways out: counts that read as no contradiction."""
    count = len(scenario.turns)
    turns = "turn 0" if count == 1 else f"turns 0-{count - 1}"
    replies = "assistant reply" if index == 1 else "assistant replies"
    return (
        f"scenario {scenario.name!r} has no turn {index}: the request's history holds {index} "
        f"{replies}, so it asks for turn {index}, and the scenario has only {turns}. "
        f"Add a turn to the scenario, or set `repeat: true` on its last turn to answer every "
        "later request with it"
    )


def chaos_draw(seed: int, session: str, scenario: str, turn: int, attempt: int) -> float:
    """A uniform number in [0, 1) that depends on nothing else: a failing run replays exactly."""
    key = f"{seed}\x1f{session}\x1f{scenario}\x1f{turn}\x1f{attempt}".encode()
    return int.from_bytes(digest(key, 8), "big") / 2**64


class _ServedReplies:
    """What each earlier turn served, as this request's tools make it concrete."""

    def __init__(self, scenario: Scenario, conv: Conversation) -> None:
        self.scenario, self.conv = scenario, conv

    def __call__(self, index: int) -> Reply | None:
        turn = self.scenario.turn(index)
        if turn is None:
            return None
        try:
            return concrete(self.scenario, index, turn.reply, self.conv)
        except RequestError:
            return None  # cannot be made concrete now: nothing to compare against


def _refusal(finding: Finding, kind: str) -> RequestError:
    return RequestError(400, finding.message, kind=kind, code=kind, headers=((RULE_HEADER, kind),))


def _resolve(
    scenario: Scenario, index: int, reply: Reply, conv: Conversation, created: int, attempt: int = 1
) -> Resolved:
    """Memoised on the conversation: a harness repeats a request, and the request cache
    hands back the same conversation for it. Not by attempt: a body repeated is a new
    attempt each time, and the memo would keep one per attempt; the counts are the same."""
    key = ("resolved", id(scenario), index, id(reply), created)
    found: Resolved | None = conv.memo.get(key)
    if found is None or found.reply is not reply or found.scenario is not scenario:
        # (the very same objects: a recycled id() never matches); the counts written out
        # here, not in a call of their own: most bodies are seen once
        out_chars = len(reply.text) + len(reply.reasoning or "")
        for c in reply.tool_calls:  # (a loop: a generator is a call of its own)
            out_chars += len(c.name) + len(c.arguments)
        usage = reply.usage
        found = conv.memo[key] = Resolved(
            scenario,
            index,
            reply,
            # `_tokens` written out: two calls a request
            ((conv.input_chars + 3) // 4 or 1) if usage.input is None else usage.input,
            ((out_chars + 3) // 4 or 1) if usage.output is None else usage.output,
            _tokens(len(reply.reasoning)) if reply.reasoning else 0,
            created,
            attempt,
        )
        return found
    if found.attempt == attempt:
        return found
    return Resolved(
        scenario,
        index,
        reply,
        found.input_tokens,
        found.output_tokens,
        found.reasoning_tokens,
        created,
        attempt,
    )


def input_tokens(conversation: Conversation) -> int:
    """The request's input tokens as every reply's `usage` counts them (token counting)."""
    return _tokens(conversation.input_chars)


def _tokens(chars: int) -> int:
    """A deterministic stand-in for a tokenizer: about four characters a token (at least
    one: ceil(chars / 4) for chars > 0, which `_resolve` writes out)."""
    return (chars + 3) // 4 or 1
