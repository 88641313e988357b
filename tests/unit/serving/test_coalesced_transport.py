"""CoalescedWrites (serving/coalesce.py) passes on what uvicorn's HTTP and WebSocket
protocols ask of their transport, by name rather than through `__getattr__`: a call that
went through `__getattr__` first failed the usual lookup and made an AttributeError, which
cost more than the call (about 6,000 instructions; once per HTTP request, nine times per
WebSocket connection)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mockllm.serving.coalesce import CoalescedWrites

# (method, its arguments): every transport method uvicorn 0.55's httptools and sans-I/O
# WebSocket protocols call besides write and close
ASKED: list[tuple[str, tuple[Any, ...]]] = [
    ("is_closing", ()),
    ("get_extra_info", ("sockname",)),
    ("get_extra_info", ("peername", ("?", 0))),
    ("pause_reading", ()),
    ("resume_reading", ()),
    ("set_protocol", (asyncio.Protocol(),)),
]


class _Recording:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> str:
            self.calls.append((name, args))
            return f"{name} answered"

        return call


@pytest.mark.parametrize(("name", "args"), ASKED)
def test_what_uvicorn_asks_reaches_the_transport_by_name(name: str, args: tuple[Any, ...]) -> None:
    real = _Recording()
    loop = asyncio.new_event_loop()
    try:
        wrapped = CoalescedWrites(real, loop)
        answer = getattr(wrapped, name)(*args)
    finally:
        loop.close()
    assert name in vars(CoalescedWrites)  # not through __getattr__
    expected = args if name != "get_extra_info" or len(args) == 2 else (*args, None)
    assert real.calls == [(name, expected)]
    if name in ("is_closing", "get_extra_info"):
        assert answer == f"{name} answered"


def test_anything_else_still_reaches_the_transport() -> None:
    real = _Recording()
    loop = asyncio.new_event_loop()
    try:
        assert CoalescedWrites(real, loop).get_write_buffer_size() == (
            "get_write_buffer_size answered"
        )
    finally:
        loop.close()
