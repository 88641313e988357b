"""The few byte-level encodings every part shares, written once: compact JSON as the
providers send it, one Server-Sent Events frame, and the hash behind every derived value."""

from __future__ import annotations

import hashlib
import json
from typing import Any

# Built once: json.dumps with any keyword builds a new encoder per call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True)


def compact_json(obj: Any) -> str:
    """Compact JSON with UTF-8 text kept as is, as real models and providers emit it."""
    return _COMPACT.encode(obj)


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys (json.dumps(obj, sort_keys=True, ensure_ascii=False)): the
    same text for the same value, whatever order a client wrote its keys in."""
    return _CANONICAL.encode(obj)


def dumps(obj: Any) -> bytes:
    """`compact_json` as UTF-8 bytes: a response body or an SSE frame's data."""
    return compact_json(obj).encode()


def sse_frame(data: bytes, event: str | None = None) -> bytes:
    """One SSE frame: an optional `event:` line, one `data:` line, the blank line."""
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"data: " + data + b"\n\n"


def digest(data: bytes, size: int) -> bytes:
    """A keyed-by-content hash (BLAKE2b) of `size` bytes: every id, draw and cache name."""
    return hashlib.blake2b(data, digest_size=size).digest()
