"""A small bounded cache for work that depends only on what it is keyed by.

A harness sends the same bodies again and again — every retry, every test against the
same scenario, every run of the suite — so parsing, checking and rendering them once is
most of what keeps mockllm cheap (bench/README.md has the figures).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

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
