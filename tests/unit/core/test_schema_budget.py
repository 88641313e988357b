"""The schema budget (core/schema_budget.py) in process: what it counts, what it bounds, and
that jsonschema still answers as it ships wherever no budget is open."""

from __future__ import annotations

import math
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.core import schema_budget
from mockllm.core.generate import GenerateError, _snaps, generate_arguments
from mockllm.providers.output_formats import _openapi

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([1.0, 2.5, -0.0])
    | st.text("ab", max_size=2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("xy", max_size=1), inner),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(JSON, max_size=6))
def test_unique_items_agrees_with_jsonschema(items: list[Any]) -> None:
    """Hashing keeps jsonschema's equality: 1 == 1.0, true != 1, objects in any key order."""
    shipped = jsonschema.Draft202012Validator({"uniqueItems": True}).is_valid(items)
    with schema_budget.budget():
        assert schema_budget.validator({"uniqueItems": True}).is_valid(items) == shipped


def test_every_keyword_is_charged_and_the_budget_ends_the_walk() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(50)}}
    with schema_budget.budget(10**9) as spent:
        schema_budget.validator(schema).is_valid({"p1": "x"})
    assert 10**9 - spent.left >= 50  # properties charges one step per declared property
    too_costly = pytest.raises(schema_budget.SchemaTooCostly, match="--max-schema-work")
    with too_costly, schema_budget.budget(40):
        schema_budget.check_schema(schema)


def test_a_subschema_naming_another_draft_is_still_counted() -> None:
    """jsonschema's `evolve` switches class on `$schema`: an uncounted walk otherwise."""
    inner = {"$schema": "http://json-schema.org/draft-07/schema#", "allOf": [{}] * 200}
    with pytest.raises(schema_budget.SchemaTooCostly), schema_budget.budget(100):
        schema_budget.validator({"properties": {"a": inner}}).is_valid({"a": 1})


def test_patterns_run_bounded_inside_a_budget_and_as_shipped_outside() -> None:
    hostile = {"patternProperties": {r"(|.|..|...){40}\d": {}}, "additionalProperties": False}
    validator = schema_budget.validator(hostile)
    assert validator.is_valid({})  # no budget open: jsonschema's own `re`, untouched
    for schema, value in ((hostile, {"Paris": 1}), ({"pattern": r"(|.|..|...){40}\d"}, "Paris")):
        timed_out = pytest.raises(schema_budget.SchemaTooCostly, match="100 ms limit")
        with timed_out, schema_budget.budget():
            schema_budget.validator(schema).is_valid(value)


def test_a_url_ref_is_never_fetched() -> None:
    schema = {"anyOf": [{"$ref": "http://127.0.0.1:9/nope"}, {"type": "string"}]}
    with pytest.raises(schema_budget.unresolvable()), schema_budget.budget():
        schema_budget.validator(schema).is_valid(1)


@pytest.mark.parametrize(
    ("anchor", "step", "integer"),
    [(1e300, 1e-300, False), (1e300, 1e-300, True), (math.inf, None, True), (10**400, 0.5, True)],
)
def test_snaps_past_a_double_are_none_not_an_overflow(
    anchor: float, step: float | None, integer: bool
) -> None:
    assert _snaps(anchor, step, integer) == []


def test_generation_refuses_hostile_numbers_and_refs_in_words() -> None:
    huge = {"type": "object", "properties": {"n": {"multipleOf": 1e-300, "minimum": 1e300}}}
    huge["required"] = ["n"]
    with pytest.raises(GenerateError, match="no number fits"):
        generate_arguments("valid", huge, "s")
    nowhere = {"type": "object", "properties": {"n": {"anyOf": [{"$ref": "#/nope"}, {}]}}}
    nowhere["required"] = ["n"]
    with pytest.raises(GenerateError, match="points nowhere"):
        generate_arguments("valid", nowhere, "s")


def test_gemini_conversion_visits_each_node_once() -> None:
    schema: dict[str, Any] = {"type": "STRING"}
    for _ in range(30):  # 2 ** 30 conversions before
        schema = {"type": "OBJECT", "nullable": True, "properties": {"type": schema}}
    with schema_budget.budget() as spent:
        out = _openapi(schema, 0)
    assert schema_budget.MAX_SCHEMA_WORK - spent.left < 200
    assert out["type"] == ["object", "null"] and out["properties"]["type"]["type"][0] == "object"


def test_a_scenario_schema_problem_names_where() -> None:
    assert schema_budget.problem({"type": "object"}) is None
    assert schema_budget.problem({"items": {"$ref": "#/nope"}}) == (
        ("items", "$ref"),
        "$ref '#/nope' points nowhere in this schema",
    )
    assert schema_budget.problem({"type": 3}) is not None
