"""`Bounded`: the dict with a bound the exchange's per-request caches use (core/cache.py)."""

from __future__ import annotations

from mockllm.core.cache import Bounded


def test_it_keeps_its_bound_putting_the_first_put_out_first() -> None:
    cache: Bounded[int, str] = Bounded(3)
    for i in range(5):
        assert cache.put(i, str(i)) == str(i)
    assert list(cache.items()) == [(2, "2"), (3, "3"), (4, "4")]
    assert cache.get(0) is None and cache.get(4) == "4"


def test_putting_a_key_again_replaces_it_without_growing() -> None:
    cache: Bounded[str, int] = Bounded(2)
    cache.put("a", 1)
    cache.put("a", 2)
    cache.put("b", 3)
    assert dict(cache) == {"a": 2, "b": 3}


def test_its_get_is_the_dicts_own() -> None:
    assert Bounded.get is dict.get  # no Python call per look-up: the reason it exists
