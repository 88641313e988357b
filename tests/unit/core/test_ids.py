"""core/ids.py: `derive` remembers the ids that repeat and gives the same id `fresh` does,
whatever the alphabet, and keeps no part longer than _LONGEST_KEPT as a key."""

from __future__ import annotations

from mockllm.core import ids


def test_derive_gives_freshs_id_and_remembers_only_short_parts() -> None:
    ids._derived.cache_clear()
    for alphabet in (ids.ALNUM, ids.HEX, ids.LOWER_ALNUM):
        for parts in (("s", 1, 2), ("model", "x" * 256), (3,), ()):
            made = ids.derive("id_", 21, *parts, alphabet=alphabet)
            assert made == ids.fresh("id_", 21, *parts, alphabet=alphabet)
            assert ids.derive("id_", 21, *parts, alphabet=alphabet) == made  # remembered
    assert ids._derived.cache_info().currsize == 12
    long = "x" * 257  # a model name of the request's, say: 4,096 of them would be kept
    assert ids.derive("id_", 21, "model", long) == ids.fresh("id_", 21, "model", long)
    assert ids.derive("id_", 21, 7, long, alphabet=ids.HEX) == ids.fresh(
        "id_", 21, 7, long, alphabet=ids.HEX
    )
    assert ids._derived.cache_info().currsize == 12
    assert ids.derive("call_", 24) != ids.derive("call_", 24, alphabet=ids.HEX)
