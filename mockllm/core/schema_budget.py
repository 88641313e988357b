"""One bound on the work a JSON Schema from a request or a scenario may cost.

A client's schema is walked on the request's path: Gemini's responseSchema converted,
`$ref`/`allOf` flattened and a value generated (`generate:`, `json:` replies), checked
against the meta-schema and used to validate (the provider rules, the log's verdict on a
served call, MCP `tools/call` arguments). Depth bounds do not bound that work: `allOf`
fan-out doubles it per level in a few bytes, a hostile `pattern` backtracks for hours. So
every walk counts the nodes it visits against one budget (`--max-schema-work` steps per
request; a scenario's schema per use) and every regex in it runs on the `regex` engine with
a timeout; past either, the walk stops with SchemaTooCostly, the provider's 400 naming the
limit and its flag (docs/security.md, "JSON Schemas"). A clock checked every few thousand
steps backs both up, so no walk holds the event loop longer than MAX_SECONDS.

jsonschema is given a counting validator: every keyword it applies charges a step (and the
size of its value, so a 100,000-entry `enum` costs what it takes); `uniqueItems` is checked by
hashing (jsonschema compares unhashable items pairwise: quadratic); and the `re` its keyword
modules call is swapped, inside a budget only, for the `regex` engine with a timeout
(`pattern`, `patternProperties`, `additionalProperties` and `unevaluatedProperties` all
search through it). Outside a budget jsonschema behaves exactly as it ships.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import TYPE_CHECKING, Any

from mockllm.core import bounded, disk_cache
from mockllm.errors import RequestError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

MAX_SCHEMA_WORK = 200_000
"""Steps (schema nodes visited, keywords applied) one request's schemas may cost by default."""
MAX_SECONDS = 1.0
"""Wall-clock seconds one budget may last, whatever its steps: the backstop."""
_CLOCK_EVERY = 2048  # steps between two looks at the clock

_limit = MAX_SCHEMA_WORK


def configure(limit: int) -> None:
    """The server's --max-schema-work: what every budget opened without a limit allows."""
    global _limit
    _limit = limit


class SchemaTooCostly(RequestError):
    """A schema's walk went past its budget: the provider's 400, naming the limit."""

    def __init__(self, why: str) -> None:
        super().__init__(400, f"mockllm: {why}", kind="schema_too_costly", code="schema_too_costly")
        self.why = why


class Budget:
    """Steps left for a request's walks, and their deadline: MAX_SECONDS from the first walk
    (the clock starts there: a slow upload is no schema's work). Open while its `with`
    lasts (see `budget`): a class, not a generator, as every request opens one."""

    __slots__ = ("_token", "clock_at", "deadline", "left", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit
        self.deadline: float | None = None
        self.clock_at = limit - _CLOCK_EVERY

    def __enter__(self) -> Budget:
        self._token = _current.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._token)

    def charge(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            raise SchemaTooCostly(
                f"a JSON Schema in this request takes more than the {self.limit} steps of work "
                "allowed (--max-schema-work): simplify it (fewer allOf/anyOf/oneOf branches, "
                "$refs or properties)"
            )
        if self.left < self.clock_at:
            self.clock_at = self.left - _CLOCK_EVERY
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise SchemaTooCostly(
                    f"a JSON Schema in this request took more than the {MAX_SECONDS:g} s its "
                    "work may take (--max-schema-work bounds its steps): simplify it"
                )

    def seconds_left(self) -> float:
        if self.deadline is None:
            return MAX_SECONDS
        return max(0.001, self.deadline - time.monotonic())


_current: ContextVar[Budget | None] = ContextVar("mockllm_schema_budget", default=None)
# The open budget, for a caller that sets and resets it itself: the model route opens one
# per request, and the `with`'s __enter__/__exit__ are two calls more (serving/exchange.py).
current = _current


def budget(limit: int | None = None) -> Budget:
    """One budget of `limit` steps (the server's --max-schema-work by default) for every walk
    inside its `with`, e.g. all those of one request."""
    return Budget(_limit if limit is None else limit)


@contextmanager
def walk(*, fresh: bool = False) -> Iterator[Budget]:
    """A walk of a schema, charged to the open budget (none open, or `fresh`: a budget of its
    own; fresh is for a check whose answer must not depend on what ran before it), starting
    its clock if no walk before did."""
    found = _current.get()
    if found is None or fresh:
        with budget(), walk() as walking:
            yield walking
        return
    if found.deadline is None:
        found.deadline = time.monotonic() + MAX_SECONDS
    yield found


def charge(steps: int = 1) -> None:
    """Count `steps` against the open budget (none open: nothing is counted)."""
    found = _current.get()
    if found is not None:
        found.charge(steps)


def weight(value: Any) -> int:
    """The nodes of a JSON value, for charging a copy or a comparison of it."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def search(pattern: str, text: str) -> bool:
    """`bounded.search` under the open budget: a step per 64 characters, and a timeout that
    is the regex limit or what is left of the budget's time, whichever is less."""
    found = _current.get()
    if found is None:
        return bounded.search(pattern, text)
    found.charge(1 + len(text) // 64)
    timeout = min(bounded.REGEX_TIMEOUT, found.seconds_left())
    import regex  # deferred, as in bounded: only a pattern pays for it

    try:
        return regex.search(pattern, text, timeout=timeout) is not None
    except TimeoutError:
        raise SchemaTooCostly(str(bounded.RegexTimeout(pattern, text))) from None
    except regex.error:
        return False  # a pattern `re` accepts and `regex` does not: it matches nothing


# --- jsonschema, counted ----------------------------------------------------------------------


def validator(schema: Any) -> Validator:
    """A Draft 2020-12 validator of `schema` that charges the open budget. Its registry is
    empty, so a `$ref` to a URL is unresolvable rather than fetched (jsonschema's default
    fetches it: a request could make the server reach the network)."""
    from referencing import Registry

    made: Validator = validator_class()(schema, registry=Registry())
    return made


def check_schema(schema: Any) -> None:
    """jsonschema's `check_schema`, charged: SchemaError when `schema` is not one."""
    from jsonschema.exceptions import SchemaError

    cls = validator_class()
    checker = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
    for error in checker.iter_errors(schema):
        raise SchemaError.create_from(error)


def problem(schema: Any) -> tuple[tuple[str | int, ...], str] | None:
    """Where and why a scenario's schema cannot be used (not a JSON Schema, a `$ref` that
    points nowhere, past the budget), or None: checked when the scenario loads. A schema
    that passed is remembered across runs (disk_cache), as a request's tool schemas are: a
    scenario with MCP tools would otherwise import jsonschema at every start. One that
    fails is checked again each time, so its message always comes from the check."""
    key = f"scenario schema, {_limit} steps\n{json.dumps(schema, sort_keys=True)}".encode()
    if disk_cache.get("schemas", key) == _PASSED:
        return None
    found = _problem(schema)
    if found is None:
        disk_cache.put("schemas", key, _PASSED)
    return found


_PASSED = {"valid": True}


def _problem(schema: Any) -> tuple[tuple[str | int, ...], str] | None:
    from jsonschema.exceptions import SchemaError

    try:
        with walk(fresh=True):
            check_schema(schema)
            return _ref_problem(schema)
    except SchemaError as e:
        return tuple(e.absolute_path), f"not a JSON Schema: {e.message}"
    except SchemaTooCostly as e:
        return (), e.why


def _ref_problem(schema: Any) -> tuple[tuple[str | int, ...], str] | None:
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        charge()
        if isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in enumerate(node))
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str) and not _points(schema, ref):
            return (*path, "$ref"), f"$ref {ref!r} points nowhere in this schema"
        stack.extend(((*path, k), v) for k, v in node.items() if k not in ("const", "enum"))
    return None


def _points(schema: Any, ref: str) -> bool:
    """Whether `ref` resolves within `schema` ('#', '#/a/b', or an '#anchor' left to
    jsonschema); a URL never does here (nothing is fetched)."""
    if not ref.startswith("#"):
        return False
    if ref[1:2] not in ("", "/"):
        return True
    target = schema
    for raw in ref[1:].split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        elif isinstance(target, dict) and part in target:
            target = target[part]
        else:
            return False
    return True


def unresolvable() -> type[Exception]:
    """What jsonschema raises on a `$ref` that points nowhere (`#/nope`, `http://x/y`)."""
    from referencing.exceptions import Unresolvable

    return Unresolvable


@cache
def validator_class() -> Any:
    import jsonschema
    from jsonschema import _keywords, _utils, validators

    base = jsonschema.Draft202012Validator
    keywords = {name: _counted(check) for name, check in base.VALIDATORS.items()}
    keywords["uniqueItems"] = _counted(_unique_items)
    for module in (_keywords, _utils):
        if getattr(module, "re", None) is re:
            module.re = _BudgetedRe()  # type: ignore[attr-defined]
    counted = validators.extend(base, keywords)  # type: ignore[no-untyped-call]
    counted.evolve = _evolve
    return counted


def _evolve(self: Any, **changes: Any) -> Any:
    """jsonschema's `evolve` without its look at `$schema`: a subschema naming a draft (the
    meta-schema's own vocabularies do) would otherwise be walked by an uncounted class."""
    cls = self.__class__
    changes.setdefault("schema", self.schema)
    for name, alias in _init_fields(cls):
        if alias not in changes:
            changes[alias] = getattr(self, name)
    return cls(**changes)


@cache
def _init_fields(cls: type) -> tuple[tuple[str, str], ...]:
    import attrs

    return tuple((f.name, f.alias) for f in attrs.fields(cls) if f.init)


def _counted(check: Callable[..., Any]) -> Callable[..., Any]:
    def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        charge(1 + len(value) if isinstance(value, (dict, list)) else 1)
        return check(validator, value, instance, schema)

    return counted


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema's uniqueItems in linear time: items compared by a hashable key with its
    equality (1 == 1.0, true != 1, objects whatever their key order)."""
    if not unique or not validator.is_type(instance, "array"):
        return
    charge(weight(instance))
    seen: set[Any] = set()
    for item in instance:
        key = _key(item)
        if key in seen:
            from jsonschema.exceptions import ValidationError

            yield ValidationError(f"{_clip(instance)} has non-unique elements")
            return
        seen.add(key)


def _key(value: Any) -> Any:
    if isinstance(value, bool):
        return (0, value)
    if isinstance(value, (int, float)):
        return (1, value)
    if isinstance(value, list):
        return (2, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return (3, frozenset((k, _key(v)) for k, v in value.items()))
    return (4, value)


def _clip(instance: list[Any]) -> str:
    shown = repr(instance)
    return shown if len(shown) <= 200 else f"{shown[:100]}…({len(instance)} items)"


class _BudgetedRe:
    """`re` as jsonschema's keyword modules see it: inside a budget, `search` is bounded."""

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)

    @staticmethod
    def search(pattern: Any, text: Any, flags: int = 0) -> Any:
        if _current.get() is None or flags or not isinstance(text, str):
            return re.search(pattern, text, flags)
        return search(str(pattern), text) or None
