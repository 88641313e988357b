"""`encoding.sorted_json` is `json.dumps(obj, sort_keys=True)` (the schema caches' keys,
on disk too: a different text would miss every schema already checked)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.core.encoding import sorted_json
from tests.support.hypothesis_profiles import examples

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=20,
)


@settings(max_examples=examples(500))
@given(json_values)
def test_sorted_json_is_json_dumps_with_sorted_keys(value: Any) -> None:
    assert sorted_json(value) == json.dumps(value, sort_keys=True)


def test_non_ascii_is_escaped_as_json_dumps_escapes_it() -> None:
    assert sorted_json({"b": "é", "a": "\u2028"}) == '{"a": "\\u2028", "b": "\\u00e9"}'
