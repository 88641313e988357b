"""A shared log formats each entry as it closes (log/shared.py), on the request's path: it
writes the request's JSON as the request's parse read it (`LiveEntry.decoded`), not read
from the bytes again, and a served call already checked against its tool's schema is not
checked again. The line is the same either way; these tests hold both sides."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.core import call_problem as problems
from mockllm.core import schema_budget, wirejson
from mockllm.core.call_problem import call_problem
from mockllm.log.journal import Journal, LiveEntry, entry_line

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)  # past 64 bits too: the standard library reads those
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _entry(body: bytes, decoded: Any) -> LiveEntry:
    entry = LiveEntry(1, "/v1/chat/completions", [(b"content-type", b"application/json")])
    entry.time, entry.body, entry.decoded = 0.0, body, decoded
    return entry


@settings(max_examples=200)
@given(st.dictionaries(st.text(), JSON, max_size=6), st.sampled_from([None, 2]))
def test_the_line_from_the_requests_json_is_the_line_read_from_its_bytes(
    value: dict[str, Any], indent: int | None
) -> None:
    body = json.dumps(value, indent=indent).encode()
    parsed = wirejson.loads(body)  # what the exchange's parse reads (--max-number-digits)
    assert entry_line(_entry(body, parsed)) == entry_line(_entry(body, None))


def test_a_body_nested_too_deep_for_the_log_is_its_text_either_way() -> None:
    body = ("[" * (wirejson.MAX_DEPTH + 5) + "]" * (wirejson.MAX_DEPTH + 5)).encode()
    parsed = wirejson.loads(body)
    shown = json.loads(entry_line(_entry(body, parsed)))["request"]
    assert shown == body.decode()
    assert entry_line(_entry(body, parsed)) == entry_line(_entry(body, None))


def test_a_cut_body_is_read_from_the_bytes_kept_not_from_the_whole_requests_json() -> None:
    entry = _entry(b'{"a": "' + b"x" * 50 + b'"}', {"a": "x" * 50})
    entry.cut_request(10)  # as a --log-request-cap does
    assert json.loads(entry_line(entry))["request"] == entry.body.decode()


def test_a_closed_entry_drops_the_requests_json() -> None:
    log = Journal(10, None, 1000)
    entry = log.open("/v1/chat/completions", [])
    entry.body, entry.decoded = b"{}", {}
    log.close(entry)
    assert entry.decoded is None  # the ring keeps the bytes only


@contextmanager
def _no_walk(*_: Any, **__: Any) -> Iterator[None]:
    raise AssertionError("a walk opened for a call checked before")
    yield


def test_a_call_checked_before_is_not_walked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = {"get": {"type": "object", "properties": {"city": {"type": "integer"}}}}
    said = call_problem("get", '{"city": "Paris"}', tools)
    fine = call_problem("get", '{"city": 3}', tools)
    assert said is not None and said.startswith("arguments break the schema")
    assert fine is None
    monkeypatch.setattr(schema_budget, "walk", _no_walk)
    assert call_problem("get", '{"city": "Paris"}', dict(tools)) == said
    assert call_problem("get", '{"city": 3}', tools) is None
    with pytest.raises(AssertionError, match="walk opened"):  # a new call is checked
        call_problem("get", '{"city": "Lyon"}', tools)
    # the cheap refusals come first, remembered or not
    assert call_problem("put", '{"city": 3}', tools) == "not offered"
    assert call_problem("get", "[3]", tools) == "arguments are not a JSON object"


def test_the_schema_key_is_json_dumps_sorted() -> None:
    schema = {"type": "object", "properties": {"b": {}, "a": {"é": 1.5}}}
    assert problems._SORTED(schema) == json.dumps(schema, sort_keys=True)


def test_a_call_checked_before_is_answered_before_its_arguments_are_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only arguments that read as a JSON object are remembered, so a remembered call needs
    no parse; every refusal of arguments that do not read as one is still said."""
    tools = {"get": {"type": "object", "properties": {"n": {"type": "integer"}}}, "raw": True}
    said = call_problem("get", '{"n": "x"}', tools)
    assert said is not None and said.startswith("arguments break the schema")

    def no_parse(text: str) -> Any:
        raise AssertionError(f"parsed {text}")

    monkeypatch.setattr(json, "loads", no_parse)
    assert call_problem("get", '{"n": "x"}', tools) == said
    monkeypatch.undo()
    assert call_problem("get", '{"n": ', tools) == "arguments are not valid JSON"
    assert call_problem("get", '"{}"', tools) == "arguments are not a JSON object"
    assert call_problem("raw", "{", tools) == "arguments are not valid JSON"  # (schema not a dict)
    assert call_problem("raw", "{}", tools) is None
