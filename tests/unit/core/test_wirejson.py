"""wirejson.loads parses with orjson, and must read every body exactly as the standard
library's parser did before it (`_loads_stdlib`, kept as the fallback): the same value with
the same types, or the same InvalidJson words."""

from __future__ import annotations

import contextlib
import json
import sys
from functools import partial
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mockllm.core import wirejson
from tests.support.hypothesis_profiles import examples


def shape(value: Any) -> Any:
    """`value` with every type spelled out: 1 and 1.0, -0.0 and 0.0, NaN and NaN compare as
    their types and reprs do, and dict keys keep their order."""
    if isinstance(value, dict):
        return ("dict", [(shape(k), shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [shape(v) for v in value])
    return (type(value).__name__, repr(value))


def depth_of(value: Any) -> int:
    """How deep the first elements of lists in lists go."""
    depth = 0
    while isinstance(value, list):
        value, depth = (value[0] if value else None), depth + 1
    return depth


def outcome(parse: Any, raw: bytes) -> tuple[Any, ...]:
    try:
        value = parse(raw)
    except Exception as e:  # the error's type and words are the outcome
        return ("error", type(e).__name__, str(e))
    if depth_of(value) > 500:  # deeper than `shape` can recurse
        return ("nested lists", depth_of(value))
    return ("value", shape(value))


def reads_alike(raw: bytes) -> None:
    assert outcome(wirejson.loads, raw) == outcome(wirejson._loads_stdlib, raw)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()  # unbounded: beyond 64 bits too
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()  # NaN and the infinities come out as literals the parser must refuse
    | st.text(),  # lone surrogates included
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=examples(400))
@given(value=json_values, ascii_only=st.booleans(), indent=st.none() | st.integers(0, 2))
def test_any_json_value_reads_as_the_standard_library_reads_it(
    value: Any, ascii_only: bool, indent: int | None
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    # A lone surrogate written raw is not UTF-8: the bytes a client sending one would send.
    reads_alike(text.encode("utf-8", "surrogatepass"))


# Bytes a JSON tokenizer has to think about; mutating valid documents with them finds the
# places where two parsers could disagree.
json_bytes = st.sampled_from(
    [b"[", b"]", b"{", b"}", b'"', b":", b",", b"\\", b"\\u", b"d800", b"dc00", b"0", b"9",
     b"-", b".", b"e", b"E+", b"1e400", b"9" * 20, b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x00",
     b"\x1f", b"\x7f", b"\xc3\xa9", b"\xff", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"true",
     b"null", b"NaN", b"Infinity", b"-Infinity"]
)  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    raw = json.dumps(draw(json_values)).encode()
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(raw)))
        cut = draw(st.integers(0, 2))
        raw = raw[:at] + draw(json_bytes | st.binary(max_size=3)) + raw[at + cut :]
    return raw


@settings(max_examples=examples(600))
@given(raw=st.binary(max_size=40) | mutated() | st.lists(json_bytes, max_size=12).map(b"".join))
@example(raw=b"")
@example(raw=b"\xef\xbb\xbf{}")
def test_any_bytes_read_as_the_standard_library_reads_them(raw: bytes) -> None:
    reads_alike(raw)


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# Where orjson alone reads a body otherwise than the standard library: each of these would
# fail `reads_alike` if wirejson.loads called orjson without its checks.
DIVERGENT = [
    pytest.param(b"18446744073709551616", id="2**64: orjson makes a float"),
    pytest.param(b"-9223372036854775809", id="below -2**63: orjson makes a float"),
    pytest.param(b'{"n": [123456789012345678901234567890]}', id="big int inside"),
    pytest.param(b"1e400", id="1e400: stdlib inf, orjson refuses"),
    pytest.param(b"-1e400", id="-1e400"),
    pytest.param(b"1" + b"0" * 400, id="400-digit int: orjson refuses"),
    pytest.param(b'"\\ud800"', id="lone high surrogate: other words"),
    pytest.param(b'"\\udc00"', id="lone low surrogate: other words"),
    pytest.param(b'{"\\ud800x": 1}', id="lone surrogate in a key"),
    pytest.param(b"NaN", id="NaN: other words"),
    pytest.param(b"-Infinity", id="-Infinity"),
    pytest.param(b"\xef\xbb\xbf{}", id="BOM: other words"),
    pytest.param(b"\xff", id="invalid UTF-8: other words"),
    pytest.param(b"[1,]", id="trailing comma: other words"),
    pytest.param(b"", id="empty: other words"),
]
# Python 3.10 and 3.11 recurse less deep than orjson reads (1024); 3.12 and later deeper,
# where orjson alone reads this body alike (the depth test below reads it on every version).
if sys.version_info < (3, 12):
    DIVERGENT.append(pytest.param(nested(1024), id="1024 deep: orjson reads, stdlib refuses"))


@pytest.mark.parametrize("raw", DIVERGENT)
def test_where_orjson_alone_differs_loads_reads_as_the_standard_library(raw: bytes) -> None:
    reads_alike(raw)


@pytest.mark.parametrize("raw", DIVERGENT)
def test_each_divergent_body_does_tell_orjson_from_the_standard_library(raw: bytes) -> None:
    """The other side: a loads that was orjson alone fails on every body above."""
    assert outcome(orjson.loads, raw) != outcome(wirejson._loads_stdlib, raw)


def test_integers_keep_their_type_and_value() -> None:
    assert wirejson.loads(b"[18446744073709551616, -0, -0.0, 1.0, 1e-400]") == [
        2**64, 0, -0.0, 1.0, 0.0
    ]  # fmt: skip
    value = wirejson.loads(b"[123456789012345678901234567890, -0.0]")
    assert type(value[0]) is int and str(value[1]) == "-0.0"


def test_duplicate_keys_last_wins_in_first_place() -> None:
    assert list(wirejson.loads(b'{"a": 1, "b": 2, "a": 3}').items()) == [("a", 3), ("b", 2)]


def test_refusals_keep_the_standard_librarys_words() -> None:
    for raw, detail in [
        (b'{"x": "\\ud800"}', "no low surrogate in string: line 1 column 8 (char 7)"),
        (b"[NaN]", "NaN is not valid JSON"),
        (b'"\xff"', "invalid UTF-8 at byte 1"),
        (b"\xef\xbb\xbf{}", "Expecting value: line 1 column 1 (char 0)"),
        (nested(100_000), "nested too deeply"),
    ]:
        with pytest.raises(wirejson.InvalidJson) as e:
            wirejson.loads(raw)
        assert e.value.detail == detail


@pytest.mark.parametrize("depth", [254, 255, 600, 995, 1000, 1024, 1025])
def test_deep_nesting_reads_as_the_standard_library_reads_it(depth: int) -> None:
    reads_alike(nested(depth))


# Numbers at and past every limit (issue 24): digits (mockllm's --max-number-digits and
# Python's 4,300-digit int conversion), exponents past a double, nesting past each parser's.
@st.composite
def long_number(draw: st.DrawFn, limit: int) -> tuple[bytes, int]:
    """A JSON number whose digits total about `limit` (a few under, at, or past it)."""
    total = max(1, limit + draw(st.integers(-3, 3)))
    kind = draw(st.sampled_from(["int", "fraction", "exponent", "all"]))
    sign = draw(st.sampled_from(["", "-"]))
    digit = draw(st.sampled_from("123456789"))
    if kind == "int" or total < 3:
        text = sign + digit * total
    elif kind == "fraction":
        text = f"{sign}0.{'0' * (total - 2)}{digit}"
    elif kind == "exponent":
        text = f"{sign}1e-{'0' * (total - 2)}{digit}"
    else:
        third = total // 3
        text = f"{sign}{digit * third}.{digit * third}e-{digit * (total - 2 * third)}"
    return text.encode(), total


@settings(max_examples=examples(300))
@given(data=st.data(), limit=st.sampled_from([1, 2, 5, 18, 19, 20, 56, 57, 1000, 4300]))
def test_a_number_is_read_within_the_digit_limit_and_refused_past_it(
    data: st.DataObject, limit: int
) -> None:
    number, digits = data.draw(long_number(limit))
    where = data.draw(st.sampled_from([b"%s", b'{"x": [%s]}', b'{"a": "1", "b": {"c": %s}}']))
    raw = where % number
    try:
        value = wirejson.loads(raw, limit)
    except wirejson.InvalidJson as e:
        assert digits > limit or "out of range" in e.detail, (raw[:60], e.detail)
        assert e.limit == (digits > limit)
        return
    assert digits <= limit
    assert wirejson.dumps_line(value)  # what was read, the log writes
    assert outcome(lambda r: wirejson.loads(r, limit), raw) == outcome(
        lambda r: wirejson._loads_stdlib(r, limit), raw
    )


@settings(max_examples=examples(100))
@given(
    exponent=st.integers(300, 5000),
    negative=st.booleans(),
    mantissa=st.sampled_from(["1", "9.99", "0.5", "17976931348623157"]),
)
def test_an_exponent_past_a_double_is_refused_not_infinity(
    exponent: int, negative: bool, mantissa: str
) -> None:
    raw = f'{{"t": {"-" if negative else ""}{mantissa}e{exponent}}}'.encode()
    try:
        value = wirejson.loads(raw)
    except wirejson.InvalidJson as e:
        assert "out of range" in e.detail
        return
    assert abs(value["t"]) != float("inf")
    assert wirejson.dumps_line(value)


@settings(max_examples=examples(60))
@given(depth=st.integers(240, 1100), inner=st.sampled_from([b"", b"1", b"1" * 30, b'"x"']))
def test_nesting_at_and_past_each_parsers_limit_reads_alike_and_never_raises_else(
    depth: int, inner: bytes
) -> None:
    raw = b"[" * depth + inner + b"]" * depth
    reads_alike(raw)
    with contextlib.suppress(wirejson.InvalidJson):
        wirejson.loads(raw)


@settings(max_examples=examples(200))
@given(
    text=st.text(
        st.sampled_from(["a", " ", "é", "\n", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
        | st.characters()
    )
)
@example(text="a\u2028b\x85c\x1e")
def test_a_line_break_in_a_string_is_escaped_and_the_line_is_one_line(text: str) -> None:
    """dumps_line escapes every character a line reader splits on, whatever else the
    string holds (found with `in`, replaced by the regex: both must agree)."""
    line = wirejson.dumps_line({"t": text})
    assert len(line.splitlines()) == 1
    assert not any(ch in line for ch in "\x1c\x1d\x1e\x85\u2028\u2029")
    assert json.loads(line) == {"t": text}


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",))),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=examples(200))
@given(value=_JSON)
def test_the_line_encoder_made_once_writes_what_json_dumps_writes(value: Any) -> None:
    """`dumps_line`'s C encoder, made once, gives `json.dumps`'s text (with its options) for
    any JSON value, line breaks apart; NaN is refused as `json.dumps` refuses it."""
    expected = json.dumps(value, ensure_ascii=False, allow_nan=False)
    line = wirejson.dumps_line(value)
    assert line == wirejson._LINE_BREAKS.sub(lambda m: f"\\u{ord(m[0]):04x}", expected)
    with pytest.raises(ValueError, match="not JSON compliant"):
        wirejson.dumps_line({"v": [value, float("nan")]})
    with pytest.raises(TypeError, match="not JSON serializable"):
        wirejson.dumps_line([value, object()])
    assert wirejson.dumps_line(value) == line  # nothing an error left behind changes the next
    for options in ({}, {"sort_keys": True}, {"ensure_ascii": False, "sort_keys": True}):
        made = _written(wirejson.encoder(**options), value)  # (mixed keys: both refuse to sort)
        assert made == _written(partial(json.dumps, **options), value)


def _written(encode: Any, value: Any) -> str | tuple[str, str]:
    try:
        return str(encode(value))
    except TypeError as e:
        return ("TypeError", str(e))
