"""Load scenarios from YAML files, folders, YAML text or mappings — all or nothing.

Every problem names `file:line:column`, the YAML path and what was allowed there.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from mockllm.core import disk_cache
from mockllm.core.scenario import Scenario
from mockllm.core.scenario_build import build_scenario
from mockllm.core.scenario_checks import check_scenario
from mockllm.errors import Problem, ScenarioError
from mockllm.loading.locations import Marks, YamlPath, dotted

_PACKAGE = Path(__file__).resolve().parent.parent
# Installed, the library ships as mockllm/bundled; in a source checkout it is ../scenarios.
BUNDLED = _PACKAGE / "bundled" if (_PACKAGE / "bundled").is_dir() else _PACKAGE.parent / "scenarios"


@cache
def schema() -> dict[str, Any]:
    text = (Path(__file__).parent / "scenario.schema.json").read_text("utf-8")
    result: dict[str, Any] = json.loads(text)
    return result


@cache
def _validator() -> Any:
    import jsonschema  # deferred: it is the slowest import we have

    return jsonschema.Draft202012Validator(schema())


def load_paths(paths: Iterable[str | Path]) -> list[Scenario]:
    """Every scenario in these files and folders (searched recursively)."""
    problems: list[Problem] = []
    scenarios: list[Scenario] = []
    for file in _scenario_files(paths, problems):
        try:
            scenarios.append(_load_file(file))
        except ScenarioError as e:
            problems += e.problems
        except (OSError, UnicodeDecodeError) as e:
            problems.append(Problem(str(file), "", f"cannot read: {e}"))
    problems += _duplicate_names(scenarios)
    if problems:
        raise ScenarioError(problems)
    return scenarios


def with_bundled(paths: Iterable[str | Path]) -> list[Scenario]:
    """The bundled library plus these files; a scenario of yours replaces a bundled one of
    the same name (how `mockllm serve --scenarios` and the pytest plugin both load)."""
    own = load_paths(paths)
    names = {s.name for s in own}
    return [s for s in load_paths([BUNDLED]) if s.name not in names] + own


def scenario_files(paths: Iterable[str | Path]) -> list[Path]:
    """The scenario files these paths name (folders searched recursively)."""
    return _scenario_files(paths, [])


def _load_file(file: Path) -> Scenario:
    """A file already checked in this exact form (see disk_cache) skips YAML and the
    schema; anything else is read and checked in full, and remembered when it passes."""
    raw = file.read_bytes()
    data = disk_cache.get("scenarios", raw)
    if data is not None and not _include_problems(data, _Locator(str(file), {}, {})):
        scenario = build_scenario(_with_rule_sets(data), file.stem, str(file))
        if not check_scenario(scenario, _Locator(str(file), {}, {}).at, data):
            return scenario
    data, marks, keys = _yaml().parse(decode(raw, str(file)), str(file))
    scenario = load_mapping(data, str(file), file.stem, marks, keys)
    disk_cache.put("scenarios", raw, data)
    return scenario


def decode(raw: bytes, source: str) -> str:
    """Scenario bytes as text: UTF-8 only, and a byte that is not names its line and column
    (whether it came from a file or from POST /_mockllm/scenarios)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        start = raw.rfind(b"\n", 0, e.start) + 1
        line = raw.count(b"\n", 0, e.start) + 1
        column = len(raw[start : e.start].decode("utf-8", "replace")) + 1
        message = f"not UTF-8: byte 0x{raw[e.start]:02x} cannot be read; save the file as UTF-8"
        raise ScenarioError([Problem(source, "", message, line, column)]) from None


def load_text(text: str, source: str = "<text>", default_name: str | None = None) -> Scenario:
    """One scenario from YAML (or JSON) text."""
    data, marks, keys = _yaml().parse(text, source)
    return load_mapping(data, source, default_name, marks, keys)


def parse_yaml(text: str, source: str = "<text>") -> Any:
    """The document as plain data, read exactly as `load_text` reads it (YAML 1.2 scalars)."""
    return _yaml().parse(text, source)[0]


def _yaml() -> Any:
    from mockllm.loading import yamlfile  # deferred: a restart on unchanged files never parses YAML

    return yamlfile


def load_mapping(
    data: Any,
    source: str = "<mapping>",
    default_name: str | None = None,
    marks: Marks | None = None,
    keys: Marks | None = None,
) -> Scenario:
    """One scenario from a mapping, checked exactly like a file."""
    locator = _Locator(source, marks or {}, keys or {})
    data = _status_keys_as_text(data)
    problems = _consequences_dropped(
        [_schema_problem(e, locator) for e in _validator().iter_errors(data)]
    )
    if not problems and "name" not in data and default_name is None:
        problems.append(locator.at(()).with_message("missing required key 'name'"))
    if problems:
        raise ScenarioError(sorted(problems, key=lambda p: (p.line or 0, p.column or 0)))
    scenario = build_scenario(_with_rule_sets(data), default_name or "", source)
    problems = _include_problems(data, locator) + check_scenario(scenario, locator.at, data)
    if problems:
        raise ScenarioError(problems)
    return scenario


# Bundled rule sets (`include: [harness/opencode]`): what a harness sends beside its agent
# turns, shipped with the scenarios (scenarios/harness/*.yaml), never loaded as scenarios.
RULE_SETS = BUNDLED / "harness"
_RULE_SET_PREFIX = "harness/"


def rule_set_names() -> list[str]:
    return sorted(_RULE_SET_PREFIX + p.stem for p in RULE_SETS.glob("*.yaml"))


@cache
def rule_set(name: str) -> dict[str, Any] | None:
    """The bundled rule set of this name, schema-checked; None when there is none."""
    stem = name.removeprefix(_RULE_SET_PREFIX)
    file = RULE_SETS / f"{stem}.yaml"
    if not name.startswith(_RULE_SET_PREFIX) or "/" in stem or not file.is_file():
        return None
    data, marks, keys = _yaml().parse(file.read_text("utf-8"), str(file))
    locator = _Locator(str(file), marks, keys)
    import jsonschema

    rules = {"$defs": schema()["$defs"], "$ref": "#/$defs/rule_set"}
    checker = jsonschema.Draft202012Validator(rules)
    problems = [_schema_problem(e, locator) for e in checker.iter_errors(data)]
    if problems:  # tests/unit/core/test_structured_matching.py loads each: never at a user's
        raise ScenarioError(problems)
    found: dict[str, Any] = data
    return found


def _include_problems(data: Any, locator: _Locator) -> list[Problem]:
    problems = []
    for i, name in enumerate(data.get("include", ()) if isinstance(data, Mapping) else ()):
        if rule_set(name) is None:
            known = ", ".join(rule_set_names())
            hint = difflib.get_close_matches(name, rule_set_names(), n=1)
            tip = f"; did you mean {hint[0]!r}?" if hint else ""
            message = f"no bundled rule set named {name!r} (known: {known}){tip}"
            problems.append(locator.at(("include", i)).with_message(message))
    return problems


def _with_rule_sets(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The scenario with the rule sets it includes, for `build_scenario` to append."""
    names = data.get("include")
    if not names:
        return data
    return {**data, "_included": [(n, rule_set(n) or {}) for n in dict.fromkeys(names)]}


def _status_keys_as_text(data: Any) -> Any:
    """`chaos: {429: 0.1}`: YAML reads 429 as a number, JSON keys are text; both mean 429."""
    chaos = data.get("chaos") if isinstance(data, Mapping) else None
    if not isinstance(chaos, Mapping) or all(isinstance(k, str) for k in chaos):
        return data
    text = {
        str(k) if isinstance(k, int) and not isinstance(k, bool) else k: v for k, v in chaos.items()
    }
    return {**data, "chaos": text}


def _scenario_files(paths: Iterable[str | Path], problems: list[Problem]) -> list[Path]:
    files: list[Path] = []
    resolved: dict[Path, Path] = {}
    rule_sets = RULE_SETS.resolve()  # compared with resolved folders: the bundle may be a link
    for path in map(Path, paths):
        if path.is_dir():
            files += sorted(
                p
                for p in path.rglob("*")
                if p.suffix in (".yaml", ".yml")
                and _folder_of(p, resolved) != rule_sets  # rule sets are no scenarios
            )
        elif path.is_file():
            files.append(path)
        else:
            problems.append(Problem(str(path), "", "no such file or folder"))
    return files


def _folder_of(file: Path, resolved: dict[Path, Path]) -> Path:
    """`file.resolve().parent`, each folder resolved once per listing (a start lists ~50
    files in a handful of folders): the same unless the file itself is a link."""
    if file.is_symlink():
        return file.resolve().parent
    folder = resolved.get(file.parent)
    if folder is None:
        folder = resolved[file.parent] = file.parent.resolve()
    return folder


def _duplicate_names(scenarios: list[Scenario]) -> list[Problem]:
    seen: dict[str, Scenario] = {}
    problems = []
    for s in scenarios:
        if s.name in seen:
            first = seen[s.name].source
            line, column = _name_mark(s.source)
            other = ":".join(map(str, (first, *_name_mark(first)))).rstrip(":")
            message = f"scenario {s.name!r} is also defined at {other}"
            problems.append(Problem(s.source, "name", message, line, column))
        seen.setdefault(s.name, s)
    return problems


def _name_mark(source: str) -> tuple[int, int] | tuple[None, None]:
    """Where a file gives its `name` (nowhere when the name is the file's stem)."""
    try:
        keys = _yaml().parse(Path(source).read_text("utf-8"), source)[2]
    except (OSError, ValueError, ScenarioError):
        return None, None
    line, column = keys.get(("name",), (None, None))
    return (int(line), int(column)) if line is not None else (None, None)


# --- schema errors, explained ---------------------------------------------------------


class _Locator:
    def __init__(self, source: str, marks: Marks, keys: Marks) -> None:
        self.source, self.marks, self.keys = source, marks, keys

    def at(self, path: YamlPath, key: bool = False) -> Problem:
        table = self.keys if key else self.marks
        probe = path
        while probe not in table and probe:
            probe = probe[:-1]
            table = self.marks
        line, col = table.get(probe, (None, None))
        return Problem(self.source, dotted(path), "", line, col)


def _schema_problem(error: Any, locator: _Locator) -> Problem:
    path: YamlPath = tuple(error.absolute_path)
    if error.validator in ("oneOf", "anyOf"):
        inner = _inner_error(error)
        if inner is not None:
            return _schema_problem(inner, locator)
    if error.validator == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        if extra:
            key = extra[0]
            hint = difflib.get_close_matches(str(key), allowed, n=1)
            tip = _indent_hint(str(key), path, error.instance) or (
                f"; did you mean {hint[0]!r}?" if hint else ""
            )
            where = locator.at((*path, key), key=True)
            return where.with_message(
                f"unknown key {key!r} (allowed here: {', '.join(allowed)}){tip}"
            )
    return locator.at(path).with_message(_explain(error))


def _consequences_dropped(problems: list[Problem]) -> list[Problem]:
    """Under-indented keys leave their parent empty: one mistake, said once."""
    emptied = set()
    for p in problems:
        found = re.search(r"indent it under `(\w+):`", p.message)
        if found:
            parent = p.path.rpartition(".")[0] if "." in p.path else ""
            emptied.add(f"{parent}.{found[1]}" if parent else found[1])
    return [p for p in problems if not (p.path in emptied and "got nothing" in p.message)]


def _indent_hint(key: str, path: YamlPath, instance: Any) -> str | None:
    """A key that is valid one level down or up is an indentation mistake, not a typo."""
    here = _schema_at(path)
    for child in _properties(here):
        if key in _properties(_schema_at((*path, child))):
            return f"; `{key}` belongs inside `{child}`: indent it under `{child}:`"
    if path:
        parent = path[:-2] if isinstance(path[-1], int) and len(path) > 1 else path[:-1]
        if key in _properties(_schema_at(parent)):
            name = next((p for p in reversed(path) if isinstance(p, str)), "")
            return f"; `{key}` belongs one level up, beside `{name}:`: indent it less"
    return None


def _schema_at(path: YamlPath) -> dict[str, Any]:
    """The schema of the value at `path` (properties of every branch merged), or {}."""
    node: dict[str, Any] = schema()
    for part in path:
        node = _resolve(node)
        if isinstance(part, int):
            node = _resolve(node.get("items", {}))
        else:
            node = _properties(node).get(part, {})
    return _resolve(node)


def _properties(node: dict[str, Any]) -> dict[str, Any]:
    node = _resolve(node)
    found = dict(node.get("properties", {}))
    for branch in (*node.get("oneOf", ()), *node.get("anyOf", ())):
        found.update(_properties(branch))
    return found


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref", "")
    if ref.startswith("#/$defs/"):
        resolved: dict[str, Any] = schema()["$defs"][ref.removeprefix("#/$defs/")]
        return resolved
    return node


def _inner_error(error: Any) -> Any:
    """In a oneOf, the branch the author evidently meant: the mapping whose keys are off."""
    structural = ("additionalProperties", "required", "minProperties", "maxProperties")
    for e in error.context:
        deeper = len(e.absolute_path) > len(error.absolute_path)
        if deeper or e.validator in structural:
            return e
    return None


_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "nothing",
}


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the string {value!r}"
    return f"the number {value!r}"


def _explain(error: Any) -> str:
    v, s, instance = error.validator, error.schema, error.instance
    if v == "required":
        missing = [k for k in s["required"] if k not in instance]
        return f"missing required key {missing[0]!r}"
    if v == "enum":
        allowed = ", ".join(str(x) for x in s["enum"])
        return f"{_describe(instance)} is not allowed here (allowed: {allowed})"
    if v == "type":
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        return f"expected {' or '.join(_TYPE_NAMES[t] for t in types)}, got {_describe(instance)}"
    if v in ("oneOf", "anyOf"):
        return f"expected {s.get('description', 'a different value')}, got {_describe(instance)}"
    if v == "pattern":  # only `name` has one
        allowed = "letters, digits, '.', '_' and '-', starting with a letter or digit"
        return f"{instance!r} may only use {allowed}"
    if v == "minItems":
        return f"needs at least {s['minItems']} item(s)"
    if v in ("minProperties", "maxProperties"):
        return f"needs exactly one of: {', '.join(s.get('properties', {}))}"
    return str(error.message)
