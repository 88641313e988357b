"""Deterministic ids: a hash of what identifies the thing, in the provider's usual alphabet."""

from __future__ import annotations

import hashlib
import string
from functools import lru_cache

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


@lru_cache(maxsize=65536)
def derive(prefix: str, length: int, *parts: object, alphabet: str = ALNUM) -> str:
    """`prefix` + `length` characters drawn from a hash of `parts`: same parts, same id."""
    seed = "\x1f".join(
        map(str, (prefix, *parts))
    )  # the prefix too: toolu_ ids never echo call_ ids
    digest = hashlib.blake2b(seed.encode(), digest_size=64).digest()
    n = int.from_bytes(digest, "big")
    out = []
    for _ in range(length):
        n, r = divmod(n, len(alphabet))
        out.append(alphabet[r])
    return prefix + "".join(out)
