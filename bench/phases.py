"""Where a request's time goes, by phase of the exchange: `python -m bench.profile` prints
one line per workload with the µs each phase took, so a regression names its phase.

The phases are functions of the serving path (`PHASES`), wrapped for the measured run
only: each wrapper charges the time since the last switch to the phase that was running
and pushes its own, so a phase's figure is its *own* time, without the phases it calls
(`answer` without the `validate` and `locate` it runs, `deliver` without `render`).
`other` is the rest of the request: the app's routing, reading the body, the exchange's
own glue. The clock is `perf_counter_ns` (cheap enough to call twice per phase; CPU
time would cost a system call each); the figure per phase is its best of five slices.
A function a tree does not have (an older one, through `--against`-style use) is left
out and its time shows in its caller's phase.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# (phase, module, attribute path): what each phase of the exchange is, in this tree.
PHASES: tuple[tuple[str, str, str], ...] = (
    ("parse", "mockllm.serving.exchange", "Exchanges._prepare"),
    ("validate", "mockllm.serving.exchange", "Exchanges._violations"),
    ("locate", "mockllm.core.engine", "Engine.joined"),
    # a plain scenario's request (Scenario.plain) locates without Engine.joined
    ("locate", "mockllm.state.memory", "unmerged"),
    ("locate", "mockllm.state.memory", "rejoined"),
    ("answer", "mockllm.serving.exchange", "answer_turn"),  # counting and the engine's answer
    ("answer", "mockllm.serving.exchange", "Exchanges._side"),
    ("answer", "mockllm.serving.exchange", "answer_in_memory"),  # before the store seam
    ("answer", "mockllm.state.memory", "MemoryStore.answer"),  # the memory store's one call
    (
        "answer",
        "mockllm.serving.redis_store",
        "RedisStore.answer_turn",
    ),  # the shared store's one coroutine
    ("render", "mockllm.serving.exchange", "Exchanges._render"),
    ("deliver", "mockllm.serving.exchange", "Exchanges._deliver"),
    ("log", "mockllm.log.journal", "Journal.open"),
    ("log", "mockllm.log.journal", "Journal.close"),
    ("log", "mockllm.log.journal", "LiveEntry.served"),
    ("log", "mockllm.log.journal", "LiveEntry.planned"),
    ("log", "mockllm.log.journal", "LiveEntry.streamed"),  # a stream without a fault's plan
)
ORDER = ("parse", "validate", "locate", "answer", "render", "deliver", "log", "other")


class Clock:
    """Own time per phase: a stack of running phases, charged at every switch."""

    def __init__(self) -> None:
        self.spent: dict[str, int] = dict.fromkeys(ORDER, 0)
        self.stack = ["other"]
        self.last = time.perf_counter_ns()

    def enter(self, phase: str) -> None:
        now = time.perf_counter_ns()
        self.spent[self.stack[-1]] += now - self.last
        self.stack.append(phase)
        self.last = now

    def leave(self) -> None:
        now = time.perf_counter_ns()
        self.spent[self.stack.pop()] += now - self.last
        self.last = now

    def reset(self) -> None:
        self.spent = dict.fromkeys(ORDER, 0)
        self.stack = ["other"]
        self.last = time.perf_counter_ns()


def _wrapped(fn: Callable[..., Any], phase: str, clock: Clock) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            clock.enter(phase)
            try:
                return await fn(*args, **kwargs)
            finally:
                clock.leave()

        return timed_async

    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        clock.enter(phase)
        try:
            return fn(*args, **kwargs)
        finally:
            clock.leave()

    return timed


@contextmanager
def instrumented(clock: Clock) -> Iterator[list[str]]:
    """Every function of `PHASES` this tree has, timed into `clock` while inside; yields
    the phases it has none of (their time shows in their callers')."""
    undo: list[tuple[Any, str, Any]] = []
    found: set[str] = set()
    for phase, module_name, path in PHASES:
        try:
            owner: Any = importlib.import_module(module_name)
        except ModuleNotFoundError:  # another tree's module (`--against`): as a missing name
            continue
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent, None)
        fn = getattr(owner, name, None) if owner is not None else None
        if fn is None:  # another tree's name (`--against`): the other entry of its phase
            continue
        found.add(phase)
        undo.append((owner, name, owner.__dict__[name] if name in vars(owner) else fn))
        setattr(owner, name, _wrapped(fn, phase, clock))
    try:
        yield [phase for phase, _, _ in PHASES if phase not in found]
    finally:
        for owner, name, original in reversed(undo):
            setattr(owner, name, original)


def line(key: str, per_request_ns: dict[str, float]) -> str:
    """`cold_ns  parse 8.1  validate 12.0 ... = 61.2 µs` (µs per request)."""
    cells = "  ".join(f"{phase} {per_request_ns[phase] / 1e3:5.1f}" for phase in ORDER)
    total = sum(per_request_ns.values()) / 1e3
    return f"{key:16} {cells}  = {total:6.1f} µs"
