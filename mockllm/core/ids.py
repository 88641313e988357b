"""Deterministic ids: a hash of what identifies the thing, in the provider's usual alphabet."""

from __future__ import annotations

import string
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from hashlib import blake2b

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
LOWER_ALNUM = string.ascii_lowercase + string.digits  # Ollama's call ids
# Each digest byte picks one character (a slight bias toward the first 8 letters: ids need
# to look right and never repeat, not to be uniform).
_TABLES = {
    alphabet: bytes((alphabet * 256)[:256], "ascii") for alphabet in (ALNUM, HEX, LOWER_ALNUM)
}


def fresh(prefix: str, length: int, *parts: object, alphabet: str = ALNUM) -> str:
    """`prefix` + `length` characters drawn from a hash (`encoding.digest`) of
    `parts`: same parts, same id. Uncached, for ids that never repeat (a request's, which
    counts the attempt): caching them would only push out the ids that do."""
    seed = "\x1f".join(map(str, (prefix, *parts))).encode()  # the prefix too: toolu_ ≠ call_
    if alphabet == HEX:  # (`from_seed`, written out: every request makes its request id)
        return prefix + blake2b(seed, digest_size=(length + 1) // 2).hexdigest()[:length]
    return prefix + blake2b(seed, digest_size=length).digest().translate(_TABLES[alphabet]).decode()


def from_seed(prefix: str, length: int, seed: bytes, alphabet: str = ALNUM) -> str:
    """`fresh`'s id from its seed (its parts joined), for whoever built the seed already.
    `encoding.digest`'s hash, called directly: a request makes several ids afresh."""
    if alphabet == HEX:
        return prefix + blake2b(seed, digest_size=(length + 1) // 2).hexdigest()[:length]
    return prefix + blake2b(seed, digest_size=length).digest().translate(_TABLES[alphabet]).decode()


def hashing(length: int, alphabet: str = ALNUM) -> tuple[int, bytes | None]:
    """How `from_seed` draws an id of `length` characters: the digest's size in bytes, and
    the table its bytes are translated by (None: written as hex, cut to `length`).
    serving/rendered.py hashes an attempt's ids in place with these, made once a template."""
    if alphabet == HEX:
        return (length + 1) // 2, None
    return length, _TABLES[alphabet]


# An agent loop re-derives every earlier turn's ids per request.
_derived = lru_cache(maxsize=4096)(fresh)
_LONGEST_KEPT = 256  # characters of a part a remembered id may be keyed by

# (prefix, length, parts, alphabet, id) of each id `derive` made while `recording`.
Derivation = tuple[str, int, tuple[object, ...], str, str]
_recording: list[Derivation] | None = None


def derive(prefix: str, length: int, *parts: object, alphabet: str = ALNUM) -> str:
    """`fresh`, remembered: the ids that repeat (a turn's, on its first attempt). A part
    from the request (a model name) longer than _LONGEST_KEPT is not kept as a key: 4,096
    of them could hold 4,096 × --max-body bytes."""
    for part in parts:  # a loop, not any(): this runs several times a request
        if type(part) is str and len(part) > _LONGEST_KEPT:
            made = fresh(prefix, length, *parts, alphabet=alphabet)
            break
    else:
        made = _derived(prefix, length, *parts, alphabet=alphabet)
    if _recording is not None:
        _recording.append((prefix, length, parts, alphabet, made))
    return made


@contextmanager
def recording() -> Iterator[list[Derivation]]:
    """Every id `derive` makes inside, with what it was made from: a render's ids, so that
    its bytes can be reused for another attempt with that attempt's ids (serving/rendered.py)."""
    global _recording
    outer, _recording = _recording, []
    try:
        yield _recording
    finally:
        _recording = outer
