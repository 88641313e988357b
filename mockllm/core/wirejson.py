"""JSON as the real APIs read it, and JSON any string can be written as.

Reading: strict UTF-8, no `NaN`/`Infinity` literals, no lone surrogate escapes (`"\\ud800"`):
the providers refuse all three as invalid JSON (Anthropic answers a lone surrogate with "The
request body is not valid JSON: no low surrogate in string: line 1 column N (char N-1)"), and
each would otherwise reach the log, where a strict parser refuses the line. Nesting deeper
than the parser's recursion limit is invalid JSON too, not a crash; `too_deep` tells the log
which bodies to show as text, so its readers never have to recurse further than MAX_DEPTH.

Writing: `dumps_text` never fails on what a client could have sent: a string that cannot be
UTF-8 (a surrogate) is escaped as a `\\ud800`-style escape, which every JSON parser reads back.

Speed: orjson parses a body a few times faster than the standard library; whatever it
refuses goes to the standard library's parser, so every refusal keeps its words. Where
orjson accepts a body but reads it differently (an integer beyond 64 bits becomes a float;
nesting the standard library refuses as deeper than Python recurses), a cheap check on the
bytes sends the body to the standard library too. The surrogate search runs only on that
path (orjson refuses lone surrogates itself) and only when a body holds a `\\u` escape.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import orjson

# A \u escape of a surrogate: a high one (and the low one after it, if any), or a low one.
# It starts with the literal `\u`, so the search skips ahead between backslashes; whether
# that backslash is itself escaped is decided per match (`_escaped`).
_SURROGATE_ESCAPE = re.compile(
    r"\\u(?:([dD][89abAB][0-9a-fA-F]{2})(?:\\u([dD][c-fC-F][0-9a-fA-F]{2}))?"
    r"|([dD][c-fC-F][0-9a-fA-F]{2}))"
)


MAX_DEPTH = 200  # arrays and objects inside each other shown as JSON in the log
# Digits one number may have (integer, fraction and exponent together; --max-number-digits).
# Python converts at most 4,300 digits to an int (sys.get_int_max_str_digits), and a number
# it cannot convert must be a 400, not a ValueError: so that is the highest limit allowed.
MAX_NUMBER_DIGITS = 1000
HIGHEST_NUMBER_DIGITS = 4300


class InvalidJson(ValueError):
    """The body is not JSON a provider accepts; `detail` says why and where."""

    def __init__(self, detail: str, limit: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.limit = limit  # refused for mockllm's own limit, not as the grammar has it


def _constant(name: str) -> Any:
    raise InvalidJson(f"{name} is not valid JSON")


def _too_long(token: str, limit: int) -> None:
    if len(token) > limit and sum(map(str.isdigit, token)) > limit:
        shown = token if len(token) <= 24 else f"{token[:10]}…{token[-10:]}"
        raise InvalidJson(
            f"a number of more than {limit} digits ({shown}, {sum(map(str.isdigit, token))} "
            f"digits; the limit is --max-number-digits)",
            limit=True,
        )


@lru_cache(maxsize=8)
def _decoder(limit: int) -> json.JSONDecoder:
    """The standard library's parser with every number checked: built once per limit
    (json.loads(…, kw) builds one a call)."""

    def integer(token: str) -> int:
        _too_long(token, limit)
        return int(token)

    def real(token: str) -> float:
        _too_long(token, limit)
        value = float(token)
        if math.isinf(value):  # Infinity in disguise: refused as the literal is
            shown = token if len(token) <= 24 else f"{token[:10]}…{token[-10:]}"
            raise InvalidJson(f"the number {shown} is out of range (beyond a double)")
        return value

    return json.JSONDecoder(parse_constant=_constant, parse_int=integer, parse_float=real)


def loads(raw: bytes, max_digits: int = MAX_NUMBER_DIGITS) -> Any:
    """The parsed body, or InvalidJson: the standard library's value and words, faster.
    A number of more than `max_digits` digits, or beyond a double, is InvalidJson too."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _loads_stdlib(raw, max_digits)  # refused: the standard library says why
    if _read_differently(raw, value, max_digits):
        return _loads_stdlib(raw, max_digits)
    return value


# Every digit becomes 0, `[` and `{` become `(`, every other byte a space: one pass over the
# body gives both checks below (a run of 19 digits is then a substring; `(` the openings).
_SHAPE = bytes(0x30 if 0x30 <= b <= 0x39 else 0x28 if b in b"[{" else 0x20 for b in range(256))
_INT64_DIGITS = 19  # the shortest integer that may not fit 64 bits (-9223372036854775809)
_DUMPS_DEPTH = 254  # orjson.dumps refuses deeper nesting


def _read_differently(raw: bytes, value: Any, max_digits: int) -> bool:
    """Whether the standard library may read `raw` otherwise than orjson did (as `value`),
    or would refuse a number in it as longer than `max_digits`."""
    # A number past the limit has a run of at least a third of it (integer, fraction and
    # exponent are the runs), so the same search finds both.
    run = min(_INT64_DIGITS, -(-(max_digits + 1) // 3))
    shape = raw.translate(_SHAPE)
    if b"0" * run in shape:
        # perhaps an integer beyond 64 bits, which orjson turns into a float, or a number
        # past the digit limit (orjson takes any): the standard library checks each number
        return True
    if shape.count(b"(") <= _DUMPS_DEPTH:
        return False  # the usual case: too few brackets to nest deeper
    # orjson.loads nests up to 1024 deep, the standard library as deep as Python recurses
    # (about 1000 less the caller's frames on Python 3.10 and 3.11): a body orjson.dumps
    # can write again nests at most 254 deep, which both read alike.
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        return True
    return False


def _loads_stdlib(raw: bytes, max_digits: int = MAX_NUMBER_DIGITS) -> Any:
    try:
        text = raw.decode("utf-8")
        value = _decoder(max_digits).decode(text)
    except InvalidJson:
        raise
    except UnicodeDecodeError as e:
        raise InvalidJson(f"invalid UTF-8 at byte {e.start}") from None
    except ValueError as e:  # json.JSONDecodeError, or a number Python cannot convert
        raise InvalidJson(str(e)) from None
    except RecursionError:
        raise InvalidJson("nested too deeply") from None
    if "\\u" in text:
        lone = _lone_surrogate(text)
        if lone is not None:
            raise InvalidJson(lone)
    return value


def too_deep(value: Any, text: str) -> bool:
    """Whether `value` (parsed from `text`) nests arrays and objects more than MAX_DEPTH deep."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False  # the usual case, decided by two counts
    level: list[Any] = [value]
    for _ in range(MAX_DEPTH):
        level = [
            inner
            for v in level
            for inner in (v.values() if isinstance(v, dict) else v if isinstance(v, list) else ())
            if isinstance(inner, dict | list)
        ]
        if not level:
            return False
    return True


def _lone_surrogate(text: str) -> str | None:
    at = 0
    while (match := _SURROGATE_ESCAPE.search(text, at)) is not None:
        at = match.start()
        if _escaped(text, at):  # `\\u…`: a backslash, then the letter u; not an escape
            at += 1
            continue
        high, low, alone = match[1], match[2], match[3]
        if (high and not low) or alone:
            line = text.count("\n", 0, at) + 1
            column = at - (text.rfind("\n", 0, at) + 1) + 1
            what = "no low surrogate" if high else "unexpected low surrogate"
            return f"{what} in string: line {line} column {column} (char {at})"
        at = match.end()
    return None


def _escaped(text: str, at: int) -> bool:
    """Whether the backslash at `at` follows an odd run of backslashes (is itself escaped)."""
    start = at
    while start and text[start - 1] == "\\":
        start -= 1
    return (at - start) % 2 == 1


# Characters that some line readers (str.splitlines, editors) take for a line end: inside a
# JSON string they are escaped, so one entry stays one line for every reader.
_LINE_BREAKS = re.compile("[\x1c-\x1e\x85\u2028\u2029]")


def encoder(
    *, ensure_ascii: bool = True, allow_nan: bool = True, sort_keys: bool = False
) -> Callable[[Any], str]:
    """`json.JSONEncoder(...).encode` with these options, its C encoder made once: `encode`
    makes one per call (about 170 bytecodes), and `json.dumps` with options a whole
    encoder. The same text. No circular check (`markers` None): a dict kept for it would be
    shared by threads (admin reads encode off the loop) and keep the marks an error left; a
    value with a cycle raises RecursionError, as a too-deep one does."""
    base = json.JSONEncoder(ensure_ascii=ensure_ascii, allow_nan=allow_nan, sort_keys=sort_keys)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # (no C module: the stdlib's own)
        return base.encode
    quote = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    chunks = make(None, base.default, quote, None, ": ", ", ", sort_keys, False, allow_nan)

    def encode(value: Any) -> str:
        return "".join(chunks(value, 0))

    return encode


_LINE = encoder(ensure_ascii=False, allow_nan=False)  # every log line


def dumps_line(value: Any) -> str:
    """JSON on one line that any reader splits right; a surrogate comes out escaped."""
    text = _LINE(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, allow_nan=False)
    # Looked for one by one with `in` (a memchr-speed scan): the regex's character class
    # costs ~35x more on a log line of 2 kB, and almost no line holds any of them
    if (
        "\x1c" in text
        or "\x1d" in text
        or "\x1e" in text
        or "\x85" in text
        or "\u2028" in text
        or "\u2029" in text
    ):
        return _LINE_BREAKS.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
    return text


def utf8(text: str) -> bytes:
    """`text` as UTF-8; a surrogate (which UTF-8 cannot hold) becomes U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")
