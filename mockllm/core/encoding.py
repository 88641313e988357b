"""The few byte-level encodings every part shares, written once: compact JSON as the
providers send it, one Server-Sent Events frame, and the hash behind every derived value."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from json.encoder import (  # type: ignore[attr-defined]
    c_make_encoder,
    encode_basestring,
    encode_basestring_ascii,
)
from typing import Any

# Built once: json.dumps with any keyword builds a new encoder per call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
_SORTED = json.JSONEncoder(sort_keys=True)


def _one_shot(encoder: json.JSONEncoder) -> Callable[[Any, int], Any]:
    """`encoder.iterencode(obj, _one_shot=True)` without the C encoder it builds on every
    call: the same C function with the same options, built once, so the same text. No
    circular-reference check: what is encoded here is parsed JSON or built from it (a cycle
    would still stop at the recursion limit). `encode` itself, where there is no C encoder."""
    if c_make_encoder is None:
        return lambda obj, _: encoder.encode(obj)
    return c_make_encoder(  # type: ignore[no-any-return]
        None,  # markers: see above
        encoder.default,
        encode_basestring_ascii if encoder.ensure_ascii else encode_basestring,
        None,  # indent
        encoder.key_separator,
        encoder.item_separator,
        encoder.sort_keys,
        encoder.skipkeys,
        encoder.allow_nan,
    )


_COMPACT_CHUNKS = _one_shot(_COMPACT)
_CANONICAL_CHUNKS = _one_shot(_CANONICAL)
_SORTED_CHUNKS = _one_shot(_SORTED)


def compact_json(obj: Any) -> str:
    """Compact JSON with UTF-8 text kept as is, as real models and providers emit it."""
    return "".join(_COMPACT_CHUNKS(obj, 0))


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys (json.dumps(obj, sort_keys=True, ensure_ascii=False)): the
    same text for the same value, whatever order a client wrote its keys in."""
    return "".join(_CANONICAL_CHUNKS(obj, 0))


def sorted_json(obj: Any) -> str:
    """`json.dumps(obj, sort_keys=True)`, its encoder built once (json.dumps with a keyword
    builds one per call): ASCII, as the keys of the schema caches always were."""
    return "".join(_SORTED_CHUNKS(obj, 0))


def dumps(obj: Any) -> bytes:
    """`compact_json` as UTF-8 bytes: a response body or an SSE frame's data."""
    return compact_json(obj).encode()


def sse_frame(data: bytes, event: str | None = None, end: bytes = b"\n\n") -> bytes:
    """One SSE frame: an optional `event:` line, one `data:` line, the blank line (`end`:
    the line end and the blank line, which Gemini writes as CRLF pairs)."""
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"data: " + data + end


def digest(data: bytes, size: int) -> bytes:
    """A keyed-by-content hash (BLAKE2b) of `size` bytes: every id, draw and cache name."""
    return hashlib.blake2b(data, digest_size=size).digest()
