"""`serving.asgi.read_body`, the one body reader of the model routes, the admin POSTs and the
recorder: the whole body within the limit, a 413 past it, read no further than needed."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm.errors import RequestError
from mockllm.serving.asgi import Message, read_body


class Chunks:
    """An ASGI `receive` handing out the body in these chunks, counting what it handed."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks, self.given = chunks, 0

    async def __call__(self) -> Message:
        chunk = self.chunks[self.given]
        self.given += 1
        return {"type": "http.request", "body": chunk, "more_body": self.given < len(self.chunks)}


def run(coroutine: Coroutine[Any, Any, bytes]) -> bytes:
    """The coroutine to its end: `receive` never suspends, so no event loop is needed."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        result: bytes = done.value
        return result
    raise AssertionError("read_body waited on something")


@given(
    chunks=st.lists(st.binary(max_size=64), min_size=1, max_size=12),
    limit=st.integers(0, 400),
    declared=st.none() | st.integers(0, 800),
)
def test_the_whole_body_within_the_limit_else_413_read_no_further(
    chunks: list[bytes], limit: int, declared: int | None
) -> None:
    receive = Chunks(chunks)
    whole = b"".join(chunks)
    header = None if declared is None else str(declared)
    if declared is not None and declared > limit:
        with pytest.raises(RequestError) as refused:
            run(read_body(receive, limit, header))
        assert (refused.value.status, receive.given) == (413, 0)  # not a byte read
        assert f"request body of {declared} bytes" in str(refused.value)
        return
    if len(whole) <= limit:
        assert run(read_body(receive, limit, header)) == whole
        assert receive.given == len(chunks)
        return
    with pytest.raises(RequestError) as refused:
        run(read_body(receive, limit, header))
    sizes = [sum(map(len, chunks[: i + 1])) for i in range(len(chunks))]
    first_over = next(i for i, size in enumerate(sizes) if size > limit)
    assert (refused.value.status, receive.given) == (413, first_over + 1)
    assert f"exceeds the server's limit of {limit} bytes (--max-body)" in str(refused.value)


def test_one_message_comes_back_as_it_came() -> None:
    body = b'{"model":"m"}'
    assert run(read_body(Chunks([body]), 100)) is body  # no copy on the usual request


def test_a_client_gone_mid_body_ends_the_body() -> None:
    async def receive() -> Message:
        return {"type": "http.disconnect"}

    assert run(read_body(receive, 10)) == b""
