"""Tool-call arguments derived from a tool's JSON Schema: valid ones, and the classic ways to
break them. Pure and deterministic: every choice is a hash of (seed, JSON path), never
`random`, so the same (kind, schema, seed) always gives the same text. Every result is
checked with jsonschema before it is returned: `valid` passes, every other kind fails for its
intended reason, or GenerateError says in one line why this schema cannot produce it.
"""

from __future__ import annotations

import contextlib
import copy
import math
import re
import string
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from mockllm.core import schema_budget
from mockllm.core.encoding import compact_json, digest
from mockllm.errors import MockLLMError

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

_T = TypeVar("_T")
_Path = tuple[str | int, ...]
_Node = tuple[_Path, dict[str, Any], Any]  # where, its effective (resolved) schema, its value
_Edit = tuple[_Path, Any]  # where, and the value put there; _GONE removes, () is the whole

_ROOT_KINDS = ("not_an_object", "double_encoded")
_MAX_DEPTH = 32  # a required self-reference deeper than this can never end
_OPTIONAL_DEPTH = 4  # optional properties stop here, so recursive schemas terminate
_SAME = {"unevaluatedProperties": "additionalProperties"}
_GONE = object()  # no value: an optional slot left empty, a property removed


class GenerateError(MockLLMError):
    """The schema cannot produce the asked kind of arguments; the message says why."""


# Bounds on what a client's tool schema can make the server build (docs/security.md).
MAX_STRING = 10_000  # characters of one generated string (minLength, pattern repeats)
MAX_ITEMS = 1_000  # items of one generated array (minItems)
MAX_VALUES = 10_000  # values in all the generated arguments


class _Unsatisfiable(Exception):
    """Raised while generating; becomes a GenerateError naming the tool and the kind."""


def generate_arguments(kind: str, schema: object, seed: str, *, tool: str = "the tool") -> str:
    """The arguments text (compact JSON) of `kind` for a tool with this JSON Schema; its
    work is charged to the schema budget (schema_budget.SchemaTooCostly past it)."""
    if kind not in KINDS:
        raise GenerateError(f"unknown kind {kind!r}: expected one of {', '.join(KINDS)}")
    with schema_budget.walk():
        try:
            return _arguments(kind, schema, seed, tool)
        except schema_budget.unresolvable() as e:  # a $ref to "#/nope" or "http://x/y"
            raise _error(kind, tool, f"its schema has a $ref that points nowhere ({e})") from None


def _arguments(kind: str, schema: object, seed: str, tool: str) -> str:
    validator = _validator(schema, kind, tool)
    root = schema if isinstance(schema, dict) else {}
    gen = _Generator(root, seed)
    try:
        valid = gen.value(root, ())
    except _Unsatisfiable as e:
        raise _error(kind, tool, str(e)) from None
    error = next(validator.iter_errors(valid), None)
    if error is not None:  # a constraint the generator does not know (uniqueItems, not, …)
        raise _error(kind, tool, f"its schema rejects the generated arguments ({error.message})")
    if kind == "valid":
        return compact_json(valid)
    return compact_json(_broken(kind, valid, gen.nodes, validator, seed, tool))


def near_miss(name: str, offered: Sequence[str], seed: str) -> str:
    """A plausible wrong tool name: a typo, a case change or a singular/plural of `name`,
    never `name` itself nor any offered name (another real tool is not a miss)."""
    taken = {name, *offered}
    families = (_typos(name), _case_changes(name), _number_changes(name))
    start = _hash(seed, name, "family")
    for i in range(len(families)):
        options = [c for c in dict.fromkeys(families[(start + i) % 3]) if c not in taken]
        if options:
            return _pick(options, seed, name, "near_miss")
    n = 2  # every family collides with an offered name: only then a numbered variant
    while f"{name}_{n}" in taken:
        n += 1
    return f"{name}_{n}"


# --- seeded choices and checking ----------------------------------------------------------


def _hash(*parts: object) -> int:
    data = "\x1f".join(map(str, parts)).encode()
    return int.from_bytes(digest(data, 8), "big")


def _pick(options: Sequence[_T], *parts: object) -> _T:
    return options[_hash(*parts) % len(options)]


def _rotated(items: list[_T], *parts: object) -> list[_T]:
    """All of `items` from a seeded start: the seed picks, the rest are fallbacks in order."""
    k = _hash(*parts) % len(items) if items else 0
    return items[k:] + items[:k]


def _validator(schema: object, kind: str, tool: str) -> Validator:
    import jsonschema  # deferred: it is the slowest import we have

    if not isinstance(schema, (dict, bool)):
        raise _error(kind, tool, "its schema is not a JSON object")
    try:
        schema_budget.check_schema(schema)
    except jsonschema.SchemaError as e:
        raise _error(kind, tool, f"its schema is invalid: {e.message}") from None
    return schema_budget.validator(schema)


def _is_error(error: ValidationError, keyword: str, at_root: bool) -> bool:
    # unevaluatedProperties: false closes an object just as additionalProperties: false does
    if _SAME.get(str(error.validator), error.validator) == keyword:
        return not (at_root and error.absolute_path)
    # anyOf/oneOf report their branches' errors as context: the intended one may be there
    return any(_is_error(e, keyword, at_root) for e in error.context or ())


def _error(kind: str, tool: str, why: str) -> GenerateError:
    return GenerateError(f"cannot generate {kind} for {tool}: {why}".replace("\n", " "))


def _where(path: _Path) -> str:
    return "/" + "/".join(map(str, path)) if path else "the top level"


# --- the valid value ----------------------------------------------------------------------


class _Generator:
    """Builds a valid value and records every node, so breakers know where they can strike."""

    def __init__(self, root: dict[str, Any], seed: str) -> None:
        self.root = root
        self.seed = seed
        self.nodes: list[_Node] = []
        self.made = 0

    def value(self, schema: Any, path: _Path, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise _Unsatisfiable("its schema requires itself without end")
        if schema is False or not isinstance(schema, (dict, bool)):
            raise _Unsatisfiable(f"nothing is allowed at {_where(path)}")
        self.made += 1
        schema_budget.charge()
        if self.made > MAX_VALUES:
            raise _Unsatisfiable(
                f"its schema asks for more than the {MAX_VALUES} values generated arguments "
                "may hold"
            )
        schema = self._flatten(_as_dict(schema), path, 0)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self._branch(schema, key, path, depth)
        value = self._plain(schema, path, depth)
        self.nodes.append((path, schema, value))
        return value

    def _flatten(self, schema: dict[str, Any], path: _Path, hops: int) -> dict[str, Any]:
        """`$ref` and `allOf` merged into one schema (siblings of `$ref` apply in 2020-12)."""
        if hops > _MAX_DEPTH:
            raise _Unsatisfiable(f"its $ref chain never ends at {_where(path)}")
        schema_budget.charge()  # allOf fans out: each part is a step, whatever the depth
        if "$ref" in schema:
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            return self._flatten(_merge(self._resolve(schema["$ref"]), rest), path, hops + 1)
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema.get("allOf", ()):
            merged = _merge(merged, self._flatten(_as_dict(part), path, hops + 1))
        return merged

    def _resolve(self, ref: str) -> dict[str, Any]:
        if not ref.startswith("#"):
            raise _Unsatisfiable(f"unsupported $ref {ref!r} (only '#/...' within the schema)")
        target: Any = self.root
        for raw in ref[1:].split("/")[1:]:
            part = raw.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or part not in target:
                raise _Unsatisfiable(f"$ref {ref!r} points nowhere")
            target = target[part]
        return _as_dict(target)

    def _branch(self, schema: dict[str, Any], key: str, path: _Path, depth: int) -> Any:
        """The first branch the generator can satisfy, merged with the schema around it."""
        rest = {k: v for k, v in schema.items() if k != key}
        last = _Unsatisfiable(f"no branch of {key} can be satisfied at {_where(path)}")
        for branch in (b for b in schema[key] if b is not False):
            mark = len(self.nodes)
            try:
                return self.value(_merge(rest, _as_dict(branch)), path, depth)
            except _Unsatisfiable as e:
                del self.nodes[mark:]  # a failed branch leaves no nodes behind
                last = e
        raise last

    def _plain(self, schema: dict[str, Any], path: _Path, depth: int) -> Any:
        if "const" in schema:
            return _copy(schema["const"])
        if "default" in schema:  # the author's own example beats a seeded pick
            return _copy(schema["default"])
        if schema.get("enum"):
            return copy.deepcopy(_pick(schema["enum"], self.seed, path))
        last = _Unsatisfiable(f"no type can be satisfied at {_where(path)}")
        for kind in _types(schema, "object" if not path else "string"):
            try:
                return self._typed(kind, schema, path, depth)
            except _Unsatisfiable as e:
                last = e
        raise last

    def _typed(self, kind: str, schema: dict[str, Any], path: _Path, depth: int) -> Any:
        name = next((p for p in reversed(path) if isinstance(p, str)), "")
        if kind == "object":
            return self._object(schema, path, depth)
        if kind == "array":
            return self._array(schema, path, depth)
        if kind == "string":
            return _string(schema, _plausible(name, self.seed, path), self.seed, path)
        if kind in ("integer", "number"):
            return _number(schema, kind == "integer", _base_number(name, self.seed, path), path)
        if kind == "boolean":
            return _hash(self.seed, path) % 2 == 0
        return None  # "null"; check_schema has refused any other type name

    def _object(self, schema: dict[str, Any], path: _Path, depth: int) -> dict[str, Any]:
        required = schema.get("required", [])
        out: dict[str, Any] = {}
        for key, sub in schema.get("properties", {}).items():
            if key in required:
                out[key] = self.value(sub, (*path, key), depth + 1)
            elif (value := self._optional(sub, (*path, key), depth + 1)) is not _GONE:
                out[key] = value
        extra = schema.get("additionalProperties", {})
        for key in required:
            if key not in out:  # required but undeclared: whatever additionalProperties allows
                out[key] = self.value(extra, (*path, key), depth + 1)
        return out

    def _array(self, schema: dict[str, Any], path: _Path, depth: int) -> list[Any]:
        prefix, items = schema.get("prefixItems", []), schema.get("items", {})
        wanted = schema.get("minItems", 0)
        if isinstance(wanted, int) and wanted > MAX_ITEMS:
            raise _Unsatisfiable(
                f"minItems {wanted} at {_where(path)} is past the limit of {MAX_ITEMS} items a "
                "generated array may have"
            )
        subs = [prefix[i] if i < len(prefix) else items for i in range(wanted)]
        out = [self.value(sub, (*path, i), depth + 1) for i, sub in enumerate(subs)]
        if not out and schema.get("maxItems", 1):  # one optional item: its schema can be broken
            first = self._optional(prefix[0] if prefix else items, (*path, 0), depth + 1)
            out = [] if first is _GONE else [first]
        return out

    def _optional(self, schema: Any, path: _Path, depth: int) -> Any:
        """A value for an optional slot, or _GONE when too deep (recursive schemas end here)
        or unsatisfiable (an optional property we cannot fill is left out)."""
        mark = len(self.nodes)
        try:
            return self.value(schema, path, depth) if depth <= _OPTIONAL_DEPTH else _GONE
        except _Unsatisfiable:
            del self.nodes[mark:]
            return _GONE


def _copy(value: Any) -> Any:
    schema_budget.charge(schema_budget.weight(value))
    return copy.deepcopy(value)


def _as_dict(schema: Any) -> dict[str, Any]:
    if schema is False:
        return {"not": {}}  # merged in, it still refuses everything
    return schema if isinstance(schema, dict) else {}


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    schema_budget.charge(len(a) + len(b) + len(a.get("properties", ())))
    out = dict(a)
    for key, value in b.items():
        if key == "properties" and key in out:
            out[key] = {**out[key], **value}
        elif key == "required" and key in out:
            out[key] = list(dict.fromkeys([*out[key], *value]))
        else:
            out[key] = value
    return out


def _types(schema: dict[str, Any], fallback: str) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return sorted(declared, key=lambda t: t == "null")  # a real value before null
    hinted = [_TYPE_HINTS[k][0] for k in schema if k in _TYPE_HINTS]
    return hinted[:1] or [fallback]


# --- strings and numbers ------------------------------------------------------------------


def _table(text: str) -> dict[str, tuple[str, ...]]:
    """Lines of `key alias…: value | value`: one entry per key and alias (data, not code)."""
    rows = (line.split(": ", 1) for line in text.strip().splitlines())
    return {key: tuple(values.split(" | ")) for keys, values in rows for key in keys.split()}


# Cheap plausibility from a property's name (its last word that is listed); chosen by seed.
_WORDS = _table("""
    city town: Paris | Tokyo | Lima | Nairobi
    location place: Paris, France | Tokyo, Japan | Lima, Peru
    country: France | Japan | Peru
    name username: Ada Lovelace | Alan Turing | Grace Hopper
    email: ada@example.com | grace@example.org
    date: 2024-05-17 | 2025-01-03
    time: 09:30 | 14:05
    url uri link website: https://example.com/docs | https://example.org/
    query q search keyword prompt: weather in Paris | open issues
    path file filename directory dir: src/main.py | docs/README.md
    id: abc123 | item-42
    language lang locale: en | fr | ja
    message text content body comment note: Hello! | Thanks, that works.
    title subject: Quarterly report | Meeting notes
    currency: EUR | USD | JPY
    timezone tz: Europe/Paris | Asia/Tokyo
""")
_FORMATS = _table("""
    date: 2024-05-17
    date-time: 2024-05-17T09:30:00Z
    time: 09:30:00Z
    duration: P3D
    email idn-email: ada@example.com
    uri iri uri-reference iri-reference: https://example.com/
    uuid: 3f2b8c1e-6d4a-4f7b-9c2e-8a1d5e7f9b03
    hostname idn-hostname: example.com
    ipv4: 192.0.2.1
    ipv6: 2001:db8::1
""")
_NUMBERS = _table("""
    latitude lat: 48.8566
    longitude lon lng: 2.3522
    limit: 10
    count days quantity: 3
    age: 42
    year: 2024
    page: 1
    temperature: 21
    price amount: 9.5
""")
_TYPE_HINTS = _table("""
    properties required additionalProperties minProperties: object
    items prefixItems minItems maxItems: array
    minLength maxLength pattern format: string
    minimum maximum exclusiveMinimum exclusiveMaximum multipleOf: number
""")
_CLASSES = {"d": string.digits, "w": string.ascii_letters + string.digits + "_", "s": " "}
# One atom of a simple pattern: \d \w \s, an escaped symbol, a [class], a literal, or "."
_ATOM = re.compile(r"\\([dws])|\\([^A-Za-z0-9])|\[([^\]\\^]+)\]|([^\\\[\](){}|?*+.^$])|\.")
_QUANT = re.compile(r"\{(\d+)(?:,\d*)?\}|([?*+])")
_BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf")


def _words(name: str) -> list[str]:
    """snake_case, kebab-case and camelCase alike: get_weather, getWeather → get, weather."""
    return re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)


def _listed(name: str, table: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The entry for the last listed word of `name` (start_date → date), plurals singular."""
    for word in reversed([w.lower() for w in _words(name)]):
        for key in (word, re.sub(r"ies$", "y", word), word.removesuffix("s")):
            if key in table:
                return table[key]
    return None


def _plausible(name: str, seed: str, path: _Path) -> str:
    options = _listed(name, _WORDS)
    return _pick(options, seed, path) if options else " ".join(_words(name)).lower() or "example"


def _string(schema: dict[str, Any], plausible: str, seed: str, path: _Path) -> str:
    fmt = _FORMATS.get(schema.get("format", ""), (None,))[0]
    pattern = schema.get("pattern")
    if pattern is None:
        return _fit(fmt or plausible, schema)
    for candidate in (fmt, plausible, _from_pattern(pattern, seed, path)):
        try:
            if candidate is not None and schema_budget.search(pattern, _fit(candidate, schema)):
                return _fit(candidate, schema)
        except schema_budget.SchemaTooCostly as e:
            raise _Unsatisfiable(f"at {_where(path)}: {e.why}") from None
    raise _Unsatisfiable(f"cannot produce a string matching {pattern!r} at {_where(path)}")


def _fit(text: str, schema: dict[str, Any]) -> str:
    wanted = schema.get("minLength", 0)
    if isinstance(wanted, int) and wanted > MAX_STRING:
        raise _Unsatisfiable(
            f"minLength {wanted} is past the limit of {MAX_STRING} characters a generated "
            "string may have"
        )
    short = wanted - len(text)
    text += (text[-1:] or "x") * max(0, short)  # repeating the last character keeps its class
    return text[: schema["maxLength"]] if "maxLength" in schema else text


def _from_pattern(pattern: str, seed: str, path: _Path) -> str | None:
    """A match for a simple pattern (literals, \\d \\w \\s, [a-z] classes, quantifiers),
    or None when it has groups, alternation or anything else."""
    body, out, i = pattern.removeprefix("^").removesuffix("$"), "", 0
    while i < len(body):
        atom = _ATOM.match(body, i)
        if atom is None:
            return None
        quant = _QUANT.match(body, atom.end())
        i = quant.end() if quant else atom.end()
        count = 1 if quant is None else int(quant[1]) if quant[1] else int(quant[2] == "+")
        if len(out) + count > MAX_STRING:
            raise _Unsatisfiable(
                f"pattern {pattern!r} asks for more than the {MAX_STRING} characters a "
                "generated string may have"
            )
        out += "".join(_pick(_atom_chars(atom), seed, path, len(out), k) for k in range(count))
    return out


def _atom_chars(atom: re.Match[str]) -> str:
    cls, escaped, group, literal = atom.groups()
    if group:  # ranges spelled out: [A-Z0-9] → every letter and digit
        return re.sub(
            r"(.)-(.)", lambda m: "".join(map(chr, range(ord(m[1]), ord(m[2]) + 1))), group
        )
    return _CLASSES[cls] if cls else escaped or literal or string.ascii_lowercase


def _base_number(name: str, seed: str, path: _Path) -> float:
    listed = _listed(name, _NUMBERS)
    return float(listed[0]) if listed else 1 + _hash(seed, path) % 9


def _number(schema: dict[str, Any], integer: bool, base: float, path: _Path) -> int | float:
    """The plausible base if it fits, else a bound, one step inside a bound, or the middle."""
    lo, xlo, hi, xhi, step = (schema.get(k) for k in _BOUNDS)
    low = max((v for v in (lo, xlo) if v is not None), default=None)
    high = min((v for v in (hi, xhi) if v is not None), default=None)
    anchors = [base, lo, hi, None if xlo is None else xlo + 1, None if xhi is None else xhi - 1]
    if low is not None and high is not None:
        with contextlib.suppress(OverflowError):  # two integers past a double's range
            anchors.append((low + high) / 2)
    bounds = schema_budget.validator({k: schema[k] for k in _BOUNDS if k in schema})
    for anchor in (a for a in anchors if a is not None):
        for x in _snaps(anchor, step, integer):
            if _fits(bounds, x):  # jsonschema's own test, float multipleOf quirks included
                return int(x) if float(x).is_integer() else x
    raise _Unsatisfiable(f"no {'integer' if integer else 'number'} fits at {_where(path)}")


def _fits(bounds: Validator, x: float) -> bool:
    try:
        return bool(bounds.is_valid(x))
    except (OverflowError, ValueError):  # a number past what a double holds fits nothing
        return False


def _snaps(anchor: float, step: float | None, integer: bool) -> list[float]:
    """The multiples of `step` either side of `anchor` (integers either side for an integer);
    none where the arithmetic leaves the doubles (multipleOf 1e-300 near 1e300)."""
    try:
        near = (
            [math.ceil(anchor / step) * step, math.floor(anchor / step) * step]
            if step
            else [anchor]
        )
        near = [x for x in near if math.isfinite(x)]
        return [r(x) for x in near for r in (math.ceil, math.floor)] if integer else near
    except (OverflowError, ValueError, ZeroDivisionError):
        return []


# --- breaking the valid value -------------------------------------------------------------


def _missing_required(valid: Any, nodes: list[_Node], seed: str) -> list[_Edit]:
    spots = [(p, k) for p, s, v in nodes if isinstance(v, dict) for k in s.get("required", ())]
    return [((*p, k), _GONE) for p, k in _rotated(spots, seed, "missing_required")]


def _wrong_type(valid: Any, nodes: list[_Node], seed: str) -> list[_Edit]:
    spots = _rotated([(p, v) for p, s, v in nodes if p and "type" in s], seed, "wrong_type")
    return [(p, w) for p, v in spots for w in _mistyped(v)]


def _mistyped(value: Any) -> list[Any]:
    """Another JSON type, the way models get it wrong: a number or boolean quoted, a nested
    value sent as a JSON string, a string wrapped in a list."""
    if isinstance(value, str):
        return [[value], 0, True]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [compact_json(value), [value]]
    return [compact_json(value), 0]


def _enum_violation(valid: Any, nodes: list[_Node], seed: str) -> list[_Edit]:
    spots = _rotated([(p, s["enum"], v) for p, s, v in nodes if p and "enum" in s], seed, "enum")
    return [(p, w) for p, enum, v in spots for w in _off_enum(v, enum)]


def _off_enum(value: Any, enum: list[Any]) -> list[Any]:
    """Near the allowed values, as models miss them: another case, a plural, one past the end."""
    schema_budget.charge(len(enum))
    near: list[Any] = ["other"]
    if isinstance(value, str):
        near = [value.capitalize(), value.lower(), value.upper(), value + "s", *near]
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        near = [max(e for e in enum if isinstance(e, (int, float))) + 1, *near]
    return [w for w in near if w not in enum]


_EXTRAS = (("verbose", True), ("debug", True), ("notes", "as discussed"), ("priority", "high"))
_CLOSED = ("additionalProperties", "unevaluatedProperties")


def _extra_property(valid: Any, nodes: list[_Node], seed: str) -> list[_Edit]:
    closed = [(p, v) for p, s, v in nodes if any(s.get(k) is False for k in _CLOSED)]
    spots = [(p, v) for p, v in closed if isinstance(v, dict)]
    extras = [
        ((*p, k), x) for p, v in spots for k, x in _rotated([*_EXTRAS], seed, p) if k not in v
    ]
    return _rotated(extras, seed, "extra_property")


def _not_an_object(valid: Any, nodes: list[_Node], seed: str) -> list[_Edit]:
    return [((), [*valid.values()])] if isinstance(valid, dict) else []


def _double_encoded(valid: Any, nodes: list[_Node], seed: str) -> list[_Edit]:
    # dumped once more on the way out: a JSON string holding the object's JSON
    return [((), compact_json(valid))] if isinstance(valid, dict) else []


def _edited(doc: Any, edit: _Edit) -> Any:
    """A copy of `doc` with one value replaced, added or removed."""
    path, value = edit
    if not path:
        return value
    schema_budget.charge(schema_budget.weight(doc))  # one copy per candidate edit
    out = copy.deepcopy(doc)
    parent = out
    for part in path[:-1]:
        parent = parent[part]
    if value is _GONE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return out


_Breaker = Callable[[Any, list[_Node], str], list[_Edit]]
_NOT_OBJECT = 'its schema does not require an object (no "type": "object")'
_OPEN = 'its schema allows additional properties (no "additionalProperties": false)'
# kind → (edits in seeded order, the validator keyword that must then fail, why when none does)
_BREAKS: dict[str, tuple[_Breaker, str, str]] = {
    "missing_required": (_missing_required, "required", "its schema requires no property"),
    "wrong_type": (_wrong_type, "type", "no property declares a type"),
    "enum_violation": (_enum_violation, "enum", "no property has an enum"),
    "extra_property": (_extra_property, "additionalProperties", _OPEN),
    "not_an_object": (_not_an_object, "type", _NOT_OBJECT),
    "double_encoded": (_double_encoded, "type", _NOT_OBJECT),
}
KINDS = ("valid", *_BREAKS)  # every kind generate_arguments knows


def _broken(
    kind: str, valid: Any, nodes: list[_Node], validator: Validator, seed: str, tool: str
) -> Any:
    """The first edit, in seeded order, that makes validation fail for the intended reason."""
    make, keyword, why = _BREAKS[kind]
    edits = make(valid, nodes, seed)
    at_root = kind in _ROOT_KINDS
    for edit in edits:
        doc = _edited(valid, edit)
        if any(_is_error(e, keyword, at_root) for e in validator.iter_errors(doc)):
            return doc
    if edits and not at_root:
        why = f"every {kind} candidate still passes its schema ({len(edits)} tried)"
    raise _error(kind, tool, why)


# --- near misses --------------------------------------------------------------------------


def _typos(name: str) -> list[str]:
    """Adjacent letters swapped, a letter dropped or doubled; never the first letter."""
    at = [i for i in range(1, len(name)) if name[i].isalpha()]
    swaps = [i for i in at[:-1] if name[i + 1].isalpha() and name[i] != name[i + 1]]
    return [
        *(name[:i] + name[i + 1] + name[i] + name[i + 2 :] for i in swaps),
        *(name[:i] + name[i + 1 :] for i in at),
        *(name[:i] + name[i] + name[i:] for i in at),
    ]


def _case_changes(name: str) -> list[str]:
    """camelCase, PascalCase, snake_case, and one snake word capitalized (get_Weather)."""
    words = [w.lower() for w in _words(name)]
    parts = name.split("_")
    ups = [
        "_".join([*parts[:i], p[:1].upper() + p[1:], *parts[i + 1 :]])
        for i, p in enumerate(parts)
        if i
    ]
    if not words:
        return ups
    camel = words[0] + "".join(w.capitalize() for w in words[1:])
    return [camel, "".join(w.capitalize() for w in words), "_".join(words), *ups]


def _number_changes(name: str) -> list[str]:
    if name.endswith("ies"):
        return [name[:-3] + "y"]
    if name.endswith(("ss", "sh", "ch", "x")):
        return [name + "es"]
    if name.endswith("s"):
        return [name[:-1]]
    return [name[:-1] + "ies"] if re.search(r"[^aeiou]y$", name) else [name + "s"]
