"""`mockllm record` reads whatever an upstream sends: no answer, whole or streamed, may
break a reader with anything but the errors the recorder catches (and keeps as a cut)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm import providers
from mockllm.providers import Answers
from mockllm.recording.proxy import UNREADABLE
from tests.support.hypothesis_profiles import examples

READERS = list(providers.READERS.values())  # every wire registers its reader

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
# Objects shaped like the wires' own, with any value in any place.
KEYS = ["candidates", "content", "parts", "text", "functionCall", "finishReason", "usageMetadata",
        "choices", "delta", "message", "tool_calls", "type", "content_block", "index", "error",
        "output", "item", "response", "usage", "args", "name", "thought", "stop_reason"]  # fmt: skip
shaped = st.recursive(
    json_values,
    lambda inner: (
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=5) | st.lists(inner, max_size=3)
    ),
    max_leaves=25,
)


@pytest.mark.parametrize("reader", READERS, ids=[r.__name__ for r in READERS])
@settings(max_examples=examples(150))
@given(values=st.lists(shaped, min_size=1, max_size=4))
def test_any_json_answer_raises_only_what_the_recorder_catches(
    reader: type[Answers], values: list[Any]
) -> None:
    feeds: list[Callable[[Answers, Any], None]] = [
        lambda a, v: a.body(v),
        lambda a, v: a.event(None, json.dumps(v)),
    ]
    for feed in feeds:
        answers = reader()
        try:
            for value in values:
                feed(answers, value)
            answers.heard.reply()
        except UNREADABLE:
            pass
        answers.error(values[0])  # error bodies of any shape are read, never raise
