"""Provider history rules as data: each rule has a stable name and yields violations.

A provider module declares its rules with a `RuleSet`; the app runs them per request and,
by mode, rejects on the first violation (`strict`), only logs them (`warn`), or skips
them (`off`). The rule names are the ones in the log, in docs/validation.md and in tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mockllm.core import disk_cache, schema_budget
from mockllm.core.cache import sized_cache
from mockllm.core.conversation import Conversation
from mockllm.core.scenario import Scenario
from mockllm.core.values import value
from mockllm.errors import Finding, RequestError

# What a rule check yields: (message, param, code); the rule supplies its name.
Raised = tuple[str, str | None, str | None]


# On every 400 a mockllm rule refused: the body stays exactly the provider's.
RULE_HEADER = "x-mockllm-rule"


_UNSET = object()
_KEYS_KEPT = 64  # a body with more top-level keys is not remembered by them (a hostile one)
_KEY_SETS_KEPT = 256  # key sets remembered per rule set; past that, tested per request


@value  # one per request: see values.py
class RuleContext:
    """What rules may consult besides the raw body: the parsed conversation (with any
    server-side history), the scenario, and the provider flavour."""

    conversation: Conversation
    scenario: Scenario
    flavor: str = "openai"
    # Views of the body several rules share, computed once per request (see `shared`).
    memo: dict[str, Any] = field(default_factory=dict)

    def shared(self, name: str, compute: Callable[[], Any]) -> Any:
        found = self.memo.get(name, _UNSET)
        if found is _UNSET:
            found = self.memo[name] = compute()
        return found


@dataclass(frozen=True, slots=True)
class Violation:
    """A history rule a request broke, with the provider's error."""

    rule: str
    message: str
    param: str | None = None
    code: str | None = None
    status: int = 400

    def finding(self) -> Finding:
        return Finding(self.rule, self.message)

    def error(self) -> RequestError:
        # The body is the provider's, word for word; the header says whose rule it was.
        return RequestError(
            self.status,
            self.message,
            kind=self.rule,
            param=self.param,
            code=self.code,
            headers=((RULE_HEADER, self.rule),),
        )


Check = Callable[[dict[str, Any], RuleContext], Iterable[Raised]]


@dataclass(frozen=True, slots=True)
class Rule:
    """A provider history rule: the check and the error it answers."""

    name: str  # stable, e.g. "chat.tool_call_unanswered"
    code: str  # the row in docs/validation.md, e.g. "C1"
    check: Check
    # Body keys of which the rule needs at least one to find anything (empty: always run);
    # most requests set none of `tool_choice`, `parallel_tool_calls`, `thinking`, ….
    needs: frozenset[str] = frozenset()
    # The flavours the rule is about (empty: all); DeepSeek's rules run on DeepSeek only.
    flavors: frozenset[str] = frozenset()


@dataclass
class RuleSet:
    """An ordered list of rules: the first violation is the one a strict server answers."""

    rules: list[Rule] = field(default_factory=list)
    # The rules a body's top-level keys and the flavour call for, by those: a harness sends
    # the same few key sets, so each rule's `needs` is tested once per key set and flavour.
    _called: dict[tuple[str, ...], tuple[Rule, ...]] = field(default_factory=dict, repr=False)

    def rule(
        self, code: str, name: str, needs: tuple[str, ...] = (), flavors: tuple[str, ...] = ()
    ) -> Callable[[Check], Check]:
        def register(check: Check) -> Check:
            self.rules.append(Rule(name, code, check, frozenset(needs), frozenset(flavors)))
            self._called.clear()
            return check

        return register

    def run(self, body: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        return [
            Violation(rule.name, message, param, code)
            for rule in self._called_by(body, ctx.flavor)
            for message, param, code in rule.check(body, ctx)
        ]

    def _called_by(self, body: dict[str, Any], flavor: str) -> tuple[Rule, ...]:
        keys = (flavor, *body) if len(body) <= _KEYS_KEPT else None
        found = self._called.get(keys) if keys is not None else None
        if found is None:
            present = body.keys()
            found = tuple(
                r
                for r in self.rules
                if (not r.needs or not present.isdisjoint(r.needs))
                and (not r.flavors or flavor in r.flavors)
            )
            if keys is not None and len(self._called) < _KEY_SETS_KEPT:
                self._called[keys] = found
        return found


def items(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, mapping) for each mapping in a list; anything else yields nothing."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                yield i, item


def schema_problem(schema: Any) -> str | None:
    """Why `schema` is not a valid JSON Schema (draft 2020-12), or None. A harness sends the
    same tools on every request, so the (slow) meta-schema check runs once per schema."""
    return _schema_problem(json.dumps(schema, sort_keys=True))


@sized_cache(1024)  # keyed by a client's schema: bounded in bytes too
def _schema_problem(text: str) -> str | None:
    """Remembered across runs too (disk_cache): the first request of a fresh server would
    otherwise import jsonschema for a schema every earlier run already checked."""
    known = disk_cache.get("schemas", text.encode())
    if isinstance(known, dict):
        problem = known.get("problem")
        return problem if isinstance(problem, str) else None
    import jsonschema  # deferred: only a schema never seen before pays for it

    try:
        with schema_budget.walk():  # a hostile schema: SchemaTooCostly, the request's 400
            schema_budget.check_schema(json.loads(text))
        problem = None
    except jsonschema.SchemaError as e:
        problem = str(e.message)
    disk_cache.put("schemas", text.encode(), {"problem": problem})
    return problem
