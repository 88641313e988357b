"""state/redis_state.py's count-and-pick (`RedisState.commit`), in-process on a stand-in for
its pipelined line: the arguments it sends the COMMIT script, the three shapes of the
script's reply read back, and every Redis failure raised as `StoreUnavailable` (timed out,
refused, or lost), as the `async with` it replaces did. tests/fleet runs it on redis-server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.exceptions import ConnectionError, OutOfMemoryError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeout

from mockllm.state import StoreUnavailable
from mockllm.state.redis_state import RedisState, field_of


class Sent:
    """The line: records each script's keys and arguments, answers with `reply` (or raises it)."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.sent: list[tuple[list[Any], list[Any]]] = []

    async def script(self, script: Any, keys: list[Any], args: list[Any]) -> Any:
        self.sent.append((keys, args))
        if isinstance(self.reply, BaseException):
            raise self.reply
        return self.reply


def _commit(reply: Any, cuts: dict[bytes, bytes], how: str | None = None) -> tuple[Any, Sent]:
    state = RedisState("redis://:secret@127.0.0.1:1/0", "p", 60)  # never connects
    state.line = line = Sent(reply)  # type: ignore[assignment]
    found = asyncio.run(state.commit("s", field_of("x", 2), "v7", 1, cuts, how))
    return found, line


def test_the_script_gets_the_keys_the_field_and_the_cuts_as_pairs() -> None:
    _, line = _commit([1, 2], {b"0\x1fx": b"cut"}, "truncate")
    assert line.sent == [
        (
            ["p:attempts:s", "p:cuts:s", "p:scenarios:version"],
            ["2\x1fx", 60, "v7", 1, "truncate", b"0\x1fx", b"cut"],
        )
    ]
    _, line = _commit([1, 2], {})  # no cuts, a whole delivery: nothing after `how`
    assert line.sent[0][1] == ["2\x1fx", 60, "v7", 1, ""]


@pytest.mark.parametrize(
    ("reply", "read"),
    [
        ([1, 2], (1, 2, None)),  # counted with the cut
        (
            [0, 3, [b"0\x1fx", b"cut", b"2\x1fx", b"http"]],
            (0, 3, {b"0\x1fx": b"cut", b"2\x1fx": b"http"}),
        ),
        ([0, 3, []], (0, 3, {})),  # counted without; no cuts now
        ([-1], (-1, 0, None)),  # the version moved on: nothing counted
    ],
)
def test_each_reply_of_the_script_is_read(reply: Any, read: Any) -> None:
    assert _commit(reply, {})[0] == read


@pytest.mark.parametrize(
    ("error", "timed_out", "refused"),
    [
        (ConnectionError("Connection reset by peer"), False, False),
        (OSError("broken pipe"), False, False),
        (RedisTimeout("no reply"), True, False),
        (OutOfMemoryError("OOM command not allowed"), False, True),
        (ResponseError("NOPERM this user has no permissions"), False, True),
    ],
)
def test_a_redis_failure_is_the_store_unavailable(
    error: BaseException, timed_out: bool, refused: bool
) -> None:
    with pytest.raises(StoreUnavailable) as raised:
        _commit(error, {})
    assert (raised.value.timed_out, raised.value.refused) == (timed_out, refused)
    assert str(error) in raised.value.reason
    assert "secret" not in str(raised.value)  # the URL's password is not shown
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_anything_else_is_not_the_store_and_goes_up_as_it_is() -> None:
    with pytest.raises(KeyError):
        _commit(KeyError("a bug"), {})
