"""What a careful harness must refuse about one served tool call: a tool not offered,
arguments that are not a JSON object, or that break the tool's schema. The log writes it
into each served call (log/journal.py) and the MCP fake checks a call's arguments with it
(serving/mcp.py), so both sides of the tool loop say the same."""

from __future__ import annotations

import json
from typing import Any, cast

from mockllm.core import schema_budget, wirejson
from mockllm.core.cache import Lru, SizedLru, sized_cache


def call_problem(
    name: str, arguments: str, tools: dict[str, Any], freeform: frozenset[str] = frozenset()
) -> str | None:
    """What is wrong with a served call that a careful harness must refuse to execute:
    a tool not offered, arguments that are not a JSON object, or that break its schema.
    A `freeform` tool takes any text (a Responses custom tool: Codex's `exec`)."""
    if name not in tools:
        return "not offered"
    if name in freeform:
        return None
    schema = tools[name]
    key = _SORTED(schema) if isinstance(schema, dict) else None
    if key is not None and len(arguments) <= _SMALL:  # checked before (its arguments read
        known = _checked.get((key, arguments), _UNKNOWN)  # as an object then): no parse, no
        if known is not _UNKNOWN:  # budget to open (a shared log checks every entry at close)
            return cast(str | None, known)
    try:
        value = json.loads(arguments)
    except ValueError:
        return "arguments are not valid JSON"
    if not isinstance(value, dict):
        return "arguments are not a JSON object"
    if key is None:
        return None
    costly = (hash(key), hash(arguments))
    known = _COSTLY.get(costly)
    if known is not None:  # an entry formatted again (a log read) does not pay again
        return known
    try:  # a budget of its own: the verdict on a call never depends on what ran before it
        with schema_budget.walk(fresh=True):
            if len(arguments) > _SMALL:
                return _arguments_problem(key, arguments)
            return _schema_problem(key, arguments)
    except schema_budget.SchemaTooCostly as e:
        return _COSTLY.put(costly, f"arguments not checked: {e.why}")


# json.dumps(schema, sort_keys=True)'s text, by an encoder made once (wirejson.encoder): a
# shared log checks every served call as its entry closes
_SORTED = wirejson.encoder(sort_keys=True)
_UNKNOWN = object()  # not in the cache (a remembered answer may be None)
_SMALL = 4096  # arguments up to this many characters have their answer remembered
# Checks that ran out of budget, by their texts' hashes: each cost up to a second.
_COSTLY: Lru[str] = Lru(256)


def _arguments_problem(schema: str, arguments: str) -> str | None:
    """Remembered: the same scripted call against the same tool recurs in every session
    (and a shared log formats each entry as it closes, on the request's path)."""
    validator = _validator(schema)
    if validator is None:
        return None
    import jsonschema  # deferred: only paid when an entry is formatted (in memory: when read)

    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(json.loads(arguments)))
    except schema_budget.SchemaTooCostly:
        raise  # not remembered: said by call_problem
    except Exception:  # a broken schema is a rule violation, never a broken log
        return None
    return f"arguments break the schema: {error.message}" if error is not None else None


# keyed by a client's schema and arguments: bounded in bytes too
_schema_problem = sized_cache(1024)(_arguments_problem)
_checked: SizedLru = _schema_problem.cache  # type: ignore[attr-defined]  # its answers


@sized_cache(256)
def _validator(schema: str) -> Any:
    """A checked validator per distinct schema: checking a schema against the metaschema
    costs milliseconds, and reading a log of thousands of calls to one tool paid it for
    every call. None for a schema that is not one."""
    try:
        parsed = json.loads(schema)
        schema_budget.check_schema(parsed)
        return schema_budget.validator(parsed)
    except schema_budget.SchemaTooCostly:
        raise
    except Exception:  # a broken schema is a rule violation, never a broken log
        return None
