"""Driving the memory store's coroutines without an event loop (tests/unit opens no
sockets, and an asyncio loop opens a socket pair): they never suspend (state/store.py)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

from mockllm.core.engine import Engine
from mockllm.core.scenario import Scenario

T = TypeVar("T")
# What a server started with no flags gives its engine; a test names only what it changes.
ENGINE_DEFAULTS: dict[str, Any] = {
    "default": None,
    "validation": "strict",
    "real_time": False,
    "flavor": "openai",
    "chaos": None,
    "seed": 0,
}


def engine_of(*scenarios: Scenario, **options: Any) -> Engine:
    return Engine(list(scenarios), **{**ENGINE_DEFAULTS, **options})


def at_once(coroutine: Coroutine[Any, Any, T]) -> T:
    """The coroutine's result, run to its end in one step; an AssertionError if it
    suspended (what the memory store must never do)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise AssertionError(f"{coroutine!r} suspended")
