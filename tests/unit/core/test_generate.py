"""mockllm.core.generate: arguments derived from a tool's schema, each kind judged by jsonschema
itself, every impossible kind refused with its reason; and near-miss tool names."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from jsonschema.exceptions import ValidationError, best_match

from mockllm.core.generate import KINDS, GenerateError, generate_arguments, near_miss
from mockllm.errors import MockLLMError

WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city", "unit"],
    "additionalProperties": False,
}
ORDER: dict[str, Any] = {  # nested objects, arrays of objects, a pattern, an untyped enum
    "type": "object",
    "properties": {
        "customer": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
            "required": ["name", "email"],
            "additionalProperties": False,
        },
        "items": {
            "type": "array",
            "minItems": 2,
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string", "pattern": r"^[A-Z]{3}-\d{4}$"},
                    "quantity": {"type": "integer", "minimum": 1, "maximum": 99},
                    "size": {"enum": ["S", "M", "L"]},
                },
                "required": ["sku", "quantity"],
            },
        },
        "tags": {"type": "array", "items": {"type": "string", "minLength": 2, "maxLength": 8}},
        "gift": {"type": "boolean"},
    },
    "required": ["customer", "items"],
    "additionalProperties": False,
}
ROUTE: dict[str, Any] = {  # $defs and $ref, anyOf with null, oneOf, a type list
    "type": "object",
    "$defs": {
        "point": {
            "type": "object",
            "properties": {
                "lat": {"type": "number", "minimum": -90, "maximum": 90},
                "lon": {"type": "number", "minimum": -180, "maximum": 180},
            },
            "required": ["lat", "lon"],
            "additionalProperties": False,
        }
    },
    "properties": {
        "origin": {"$ref": "#/$defs/point"},
        "destination": {"$ref": "#/$defs/point"},
        "mode": {"anyOf": [{"type": "string", "enum": ["car", "bike", "walk"]}, {"type": "null"}]},
        "depart": {"oneOf": [{"type": "string", "format": "date-time"}, {"type": "integer"}]},
        "max_stops": {"type": ["null", "integer"], "minimum": 0},
    },
    "required": ["origin", "destination", "mode"],
    "additionalProperties": False,
}
EVENT: dict[str, Any] = {  # formats, definitions, const, default
    "type": "object",
    "definitions": {"email": {"type": "string", "format": "email"}},
    "properties": {
        "id": {"type": "string", "format": "uuid"},
        "day": {"type": "string", "format": "date"},
        "starts_at": {"type": "string", "format": "date-time"},
        "link": {"type": "string", "format": "uri"},
        "organizer": {"$ref": "#/definitions/email"},
        "version": {"const": 2},
        "visibility": {"type": "string", "enum": ["public", "private"], "default": "private"},
    },
    "required": ["id", "day", "organizer"],
    "additionalProperties": False,
}
SCHEMAS = {"weather": WEATHER, "order": ORDER, "route": ROUTE, "event": EVENT}
SEEDS = ["0", "1", "2", "seed-3", "長"]
# The validator keyword each broken kind must trip (the root kinds: "type" at the root).
INTENDED = {
    "missing_required": "required",
    "wrong_type": "type",
    "enum_violation": "enum",
    "extra_property": "additionalProperties",
    "not_an_object": "type",
    "double_encoded": "type",
}


def check(schema: dict[str, Any], text: str) -> list[ValidationError]:
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    return list(validator.iter_errors(json.loads(text)))


def flat(errors: list[ValidationError]) -> set[tuple[str, str]]:
    """(validator keyword, JSON path) of every error, anyOf/oneOf branch errors included."""
    out: set[tuple[str, str]] = set()
    for e in errors:
        out.add((str(e.validator), e.json_path))
        out |= flat(list(e.context or ()))
    return out


def valid(name: str, seed: str) -> Any:
    return json.loads(generate_arguments("valid", SCHEMAS[name], seed))


# --- valid ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", SCHEMAS)
def test_valid_passes_its_schema_with_every_property(name: str, seed: str) -> None:
    text = generate_arguments("valid", SCHEMAS[name], seed)
    assert check(SCHEMAS[name], text) == []
    value = json.loads(text)
    assert list(value) == list(SCHEMAS[name]["properties"])  # optional ones too, in order
    assert text == json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # compact


def test_values_follow_the_schema_and_look_plausible() -> None:
    weather = valid("weather", "0")
    assert weather["city"] in {"Paris", "Tokyo", "Lima", "Nairobi"}
    assert weather["unit"] in {"celsius", "fahrenheit"} and 1 <= weather["days"] <= 7
    order = valid("order", "0")
    assert "@" in order["customer"]["email"] and " " in order["customer"]["name"]
    assert len(order["items"]) == 2 and all(
        re.fullmatch(r"[A-Z]{3}-\d{4}", i["sku"]) for i in order["items"]
    )
    event = valid("event", "0")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", event["day"])
    assert event["starts_at"].startswith(event["day"] + "T")
    assert event["version"] == 2 and event["visibility"] == "private"  # const, default
    route = valid("route", "0")
    assert route["mode"] in {"car", "bike", "walk"}  # anyOf: the first branch, not null
    assert isinstance(route["max_stops"], int)  # a type list: a real value before null


SUBSCHEMAS = [
    {"type": "integer", "minimum": 10, "maximum": 12},
    {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 2},
    {"type": "integer", "multipleOf": 5, "minimum": 7},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5},
    {"type": "number", "multipleOf": 0.25, "minimum": 100.1},
    {"type": "string", "minLength": 12},
    {"type": "string", "maxLength": 3},
    {"type": "string", "pattern": r"^\d{5}$"},
    {"type": "string", "pattern": "^[a-f0-9]{8}$", "minLength": 8},
    {"type": "string", "pattern": "^v[0-9]+[.][0-9]+$"},
    {"type": "array", "items": {"type": "integer"}, "minItems": 3, "maxItems": 3},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}], "minItems": 2},
    {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"required": ["a"]}]},
    {"type": "null"},
    {},
]


@pytest.mark.parametrize("sub", SUBSCHEMAS, ids=lambda s: json.dumps(s))
def test_each_keyword_is_respected(sub: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {"value": sub}, "required": ["value"]}
    for seed in SEEDS:
        assert check(schema, generate_arguments("valid", schema, seed)) == []


def test_a_recursive_schema_terminates() -> None:
    tree = {
        "type": "object",
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
                "required": ["name", "children"],
            }
        },
        "properties": {"root": {"$ref": "#/$defs/node"}},
        "required": ["root"],
    }
    text = generate_arguments("valid", tree, "0")
    assert check(tree, text) == [] and len(text) < 400


# --- the broken kinds ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", SCHEMAS)
@pytest.mark.parametrize("kind", INTENDED)
def test_each_broken_kind_fails_for_its_reason(kind: str, name: str, seed: str) -> None:
    text = generate_arguments(kind, SCHEMAS[name], seed)
    errors = check(SCHEMAS[name], text)
    assert errors, text
    if kind in ("not_an_object", "double_encoded"):
        assert ("type", "$") in flat(errors)
    else:
        assert INTENDED[kind] in {v for v, _ in flat(errors)}


@pytest.mark.parametrize("kind", INTENDED)
def test_on_a_flat_schema_the_intended_error_is_the_best_match(kind: str) -> None:
    for seed in SEEDS:
        error = best_match(check(WEATHER, generate_arguments(kind, WEATHER, seed)))
        assert error is not None and error.validator == INTENDED[kind]


@pytest.mark.parametrize("seed", SEEDS)
def test_each_broken_kind_is_the_valid_value_changed_once(seed: str) -> None:
    good = valid("weather", seed)
    gen = {k: json.loads(generate_arguments(k, WEATHER, seed)) for k in INTENDED}
    missing = gen["missing_required"]
    assert len(good) - len(missing) == 1 and set(good) - set(missing) <= {"city", "unit"}
    changed = [k for k in good if gen["wrong_type"][k] != good[k]]
    assert len(changed) == 1 and type(gen["wrong_type"][changed[0]]) is not type(good[changed[0]])
    assert {k: v for k, v in gen["enum_violation"].items() if k != "unit"} == {
        k: v for k, v in good.items() if k != "unit"
    }
    assert gen["enum_violation"]["unit"] not in ("celsius", "fahrenheit")
    extra = gen["extra_property"]
    assert len(extra) == len(good) + 1 and {k: extra[k] for k in good} == good
    assert gen["not_an_object"] == list(good.values())
    assert json.loads(gen["double_encoded"]) == good


def test_enum_violation_looks_like_a_real_miss() -> None:
    misses = {json.loads(generate_arguments("enum_violation", WEATHER, s))["unit"] for s in SEEDS}
    assert misses <= {
        "Celsius",
        "CELSIUS",
        "celsiuss",
        "Fahrenheit",
        "FAHRENHEIT",
        "fahrenheits",
        "other",
    }


def test_breakage_can_reach_nested_objects_and_array_items() -> None:
    seeds = [str(i) for i in range(40)]
    where = {
        e.json_path
        for s in seeds
        for k in ("missing_required", "wrong_type", "extra_property")
        for e in check(ORDER, generate_arguments(k, ORDER, s))
    }
    assert any(p.startswith("$.items[") for p in where)
    assert any(p.startswith("$.customer") for p in where)


# --- determinism ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_same_inputs_same_text(kind: str) -> None:
    for name, schema in SCHEMAS.items():
        first = generate_arguments(kind, schema, "s", tool=name)
        assert all(generate_arguments(kind, schema, "s", tool=name) == first for _ in range(3))


def test_texts_are_stable_across_releases() -> None:
    # Scenarios will name seeds and assert on what they produce: changing the hash or the
    # order of choices silently changes every such scenario, so it must show up here.
    assert (
        generate_arguments("valid", WEATHER, "golden")
        == '{"city":"Tokyo","unit":"celsius","days":3}'
    )
    assert (
        generate_arguments("wrong_type", WEATHER, "golden")
        == '{"city":"Tokyo","unit":"celsius","days":"3"}'
    )
    assert (
        generate_arguments("enum_violation", WEATHER, "golden")
        == '{"city":"Tokyo","unit":"Celsius","days":3}'
    )
    assert near_miss("get_weather", ["get_time"], "golden") == "get_weathers"


def test_the_seed_changes_choices() -> None:
    for kind in KINDS:
        texts = {generate_arguments(kind, ORDER, str(i)) for i in range(12)}
        assert len(texts) > 1, kind


# --- what a schema cannot produce ------------------------------------------------------------


NOT_OBJECT = 'its schema does not require an object (no "type": "object")'
OPEN = {"type": "object", "properties": {"city": {"type": "string"}}}  # nothing required, open
CANNOT = [
    ("missing_required", OPEN, "its schema requires no property"),
    (
        "enum_violation",
        WEATHER | {"properties": {"city": {"type": "string"}}, "required": ["city"]},
        "no property has an enum",
    ),
    ("wrong_type", {"type": "object", "properties": {"x": {}}}, "no property declares a type"),
    (
        "extra_property",
        OPEN,
        'its schema allows additional properties (no "additionalProperties": false)',
    ),
    ("not_an_object", {"properties": {"city": {"type": "string"}}}, NOT_OBJECT),
    ("not_an_object", {"type": "string"}, NOT_OBJECT),
    ("double_encoded", {"type": ["object", "string"]}, NOT_OBJECT),
    ("double_encoded", {"type": "integer"}, NOT_OBJECT),
    (
        "valid",
        {"type": "strin"},
        "its schema is invalid: 'strin' is not valid under any of the given schemas",
    ),
    ("valid", ["not", "a", "schema"], "its schema is not a JSON object"),
    (
        "valid",
        {"$ref": "https://example.com/tool.json"},
        "unsupported $ref 'https://example.com/tool.json' (only '#/...' within the schema)",
    ),
    ("wrong_type", {"$ref": "#/$defs/nowhere"}, "$ref '#/$defs/nowhere' points nowhere"),
    (
        "valid",
        {"properties": {"n": {"type": "integer", "minimum": 5, "maximum": 4}}, "required": ["n"]},
        "no integer fits at /n",
    ),
    (
        "valid",
        {
            "properties": {"code": {"type": "string", "pattern": "^(foo|bar)[0-9]{2}$"}},
            "required": ["code"],
        },
        "cannot produce a string matching '^(foo|bar)[0-9]{2}$' at /code",
    ),
    (
        "valid",
        {"properties": {"me": {"$ref": "#"}}, "required": ["me"]},
        "its schema requires itself without end",
    ),
    (
        "valid",
        {
            "properties": {
                "ids": {"type": "array", "items": {"const": 1}, "minItems": 2, "uniqueItems": True}
            },
            "required": ["ids"],
        },
        "its schema rejects the generated arguments ([1, 1] has non-unique elements)",
    ),
    ("valid", False, "its schema rejects the generated arguments (False schema does not allow {})"),
]


@pytest.mark.parametrize(
    ("kind", "schema", "why"), CANNOT, ids=[f"{k}-{w[:30]}" for k, _, w in CANNOT]
)
def test_a_kind_the_schema_cannot_produce_says_why(kind: str, schema: Any, why: str) -> None:
    with pytest.raises(GenerateError) as e:
        generate_arguments(kind, schema, "0", tool="get_weather")
    assert str(e.value) == f"cannot generate {kind} for get_weather: {why}"
    assert "\n" not in str(e.value)


def test_generate_error_is_a_mockllm_error_and_names_the_tool_by_default() -> None:
    with pytest.raises(MockLLMError, match=r"^cannot generate missing_required for the tool: "):
        generate_arguments("missing_required", OPEN, "0")
    with pytest.raises(
        GenerateError, match=r"^unknown kind 'bogus': expected one of valid, missing_required, "
    ):
        generate_arguments("bogus", WEATHER, "0")


def test_a_tool_without_arguments() -> None:
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    assert generate_arguments("valid", schema, "0") == "{}"
    assert len(json.loads(generate_arguments("extra_property", schema, "0"))) == 1
    assert generate_arguments("not_an_object", schema, "0") == "[]"
    assert generate_arguments("double_encoded", schema, "0") == '"{}"'


def test_an_unsatisfiable_optional_property_is_left_out() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "integer", "minimum": 3, "maximum": 2},
        },
    }
    assert generate_arguments("valid", schema, "0") == '{"a":"a"}'


# --- near misses ---------------------------------------------------------------------------

NAMES = [
    "get_weather",
    "search_files",
    "getWeather",
    "list_directories",
    "send_email",
    "Read",
    "ls",
    "x",
]


def family(miss: str, name: str) -> str:
    if miss.replace("_", "").lower() == name.replace("_", "").lower():
        return "case"
    if miss.lower() in {
        name.lower() + "s",
        name.lower()[:-1],
        name.lower()[:-3] + "y",
        name.lower() + "es",
    }:
        return "number"
    return "typo"


@pytest.mark.parametrize("name", NAMES)
def test_a_near_miss_is_never_the_name_nor_an_offered_one(name: str) -> None:
    offered = [name, "get_time", name + "s", name.upper()]
    for i in range(40):
        miss = near_miss(name, offered, str(i))
        assert miss != name and miss not in offered
        assert near_miss(name, offered, str(i)) == miss  # deterministic


@pytest.mark.parametrize("name", ["get_weather", "search_files", "getWeather", "list_directories"])
def test_every_family_appears_across_seeds(name: str) -> None:
    misses = {near_miss(name, [], str(i)) for i in range(60)}
    assert {family(m, name) for m in misses} == {"typo", "case", "number"}, misses


def test_each_family_looks_like_what_it_is() -> None:
    misses = {near_miss("get_weather", [], str(i)) for i in range(200)}
    assert {"get_Weather", "getWeather", "GetWeather", "get_weathers"} <= misses
    assert {"gte_weather", "get_wather", "get_weeather"} <= misses  # swapped, dropped, doubled
    assert "search_file" in {near_miss("search_files", [], str(i)) for i in range(60)}
    assert "list_directory" in {near_miss("list_directories", [], str(i)) for i in range(60)}


def test_offered_names_push_the_choice_to_what_is_left() -> None:
    # "ls" has three candidates: "l" (typo and singular), "lss" (typo), "Ls" (case)
    assert {near_miss("ls", ["l", "lss"], str(i)) for i in range(20)} == {"Ls"}
    assert near_miss("ls", ["l", "lss", "Ls"], "0") == "ls_2"
    assert near_miss("ls", ["l", "lss", "Ls", "ls_2"], "0") == "ls_3"
