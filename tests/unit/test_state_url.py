from __future__ import annotations

import pytest

from mockllm.state import connect, is_shared


def test_memory_is_not_shared_and_redis_urls_are() -> None:
    assert not is_shared("memory")
    assert is_shared("redis://127.0.0.1:6379/0")


def test_a_state_that_is_neither_memory_nor_redis_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"'postgres://x'.*memory.*redis://HOST:PORT/DB"):
        connect("postgres://x")
