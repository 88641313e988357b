"""A small bounded cache for work that depends only on what it is keyed by.

A harness sends the same bodies again and again — every retry, every test against the
same scenario, every run of the suite — so parsing, checking and rendering them once is
most of what keeps mockllm cheap (bench/README.md has the figures).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar, cast

V = TypeVar("V")

MAX_CACHED_BYTES = 64 * 1024  # larger bodies are rare and would make the bound meaningless


class Lru(Generic[V]):
    def __init__(self, size: int) -> None:
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._size = size

    def get(self, key: Hashable) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: Hashable, value: V) -> V:
        self._items[key] = value
        if len(self._items) > self._size:
            self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        self._items.clear()


K = TypeVar("K", bound=Hashable)


class Bounded(dict[K, V]):
    """A dict that keeps at most `size` items, the first put first out: its `get` is the
    dict's own (in C), where `Lru.get` is a Python call and a move to the end. For the
    caches every request asks (serving/exchange.py), where an item that is used is rarely
    put out: they are put to only on a miss, and most requests hit or are seen once."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: K, value: V) -> V:
        self[key] = value
        if len(self) > self.size:
            del self[next(iter(self))]
        return value


# --- caches keyed by what a client sends: bounded in bytes as well as entries -------------

CACHE_BYTES = 16 * 1024 * 1024
"""Bytes of keys and values one cache keyed by request content keeps (--cache-bytes): a
count alone let 300 distinct 1 MB schemas take a server from 45 to 725 MB."""

_budget = [CACHE_BYTES]  # one for every such cache, set once per server (set_cache_bytes)
_MISSING = object()


def set_cache_bytes(limit: int) -> None:
    """The byte bound of every SizedLru from now on (`mockllm serve --cache-bytes`)."""
    _budget[0] = max(0, limit)


def weight(value: object) -> int:
    """Roughly the bytes `value` holds: its text and bytes, which is what can be big."""
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, tuple | list):
        return sum(map(weight, value)) + 8 * len(value)
    return 8


class SizedLru:
    """An LRU bounded by entries and by the total `weight` of its keys and values; an item
    heavier than a quarter of the bound is not kept (recomputing it is bounded work, keeping
    it is not). Locked: log reads format entries, and so use these caches, on a worker."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._size = size
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return default
            self._items.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: Any, cost: int) -> Any:
        budget = _budget[0]
        if cost * 4 > budget:
            return value
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._items[key] = (value, cost)
            self._bytes += cost
            while self._items and (len(self._items) > self._size or self._bytes > budget):
                self._bytes -= self._items.popitem(last=False)[1][1]
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


F = TypeVar("F", bound=Callable[..., Any])


def sized_cache(size: int) -> Callable[[F], F]:
    """`functools.lru_cache(size)` for a function of request content, bounded in bytes too
    (SizedLru). Positional arguments only; `cache_clear` and `__wrapped__` as lru_cache's."""

    def wrap(fn: F) -> F:
        cache = SizedLru(size)

        @functools.wraps(fn)
        def cached(*args: Any) -> Any:
            found = cache.get(args, _MISSING)
            if found is not _MISSING:
                return found
            value = fn(*args)
            return cache.put(args, value, weight(args) + weight(value))

        cached.cache = cache  # type: ignore[attr-defined]
        cached.cache_clear = cache.clear  # type: ignore[attr-defined]
        return cast(F, cached)

    return wrap
