from __future__ import annotations

import pytest

from mockllm.state import connect, is_shared, redacted


def test_memory_is_not_shared_and_redis_urls_are() -> None:
    assert not is_shared("memory")
    assert is_shared("redis://127.0.0.1:6379/0")


def test_a_state_that_is_neither_memory_nor_redis_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"'postgres://x'.*memory.*redis://HOST:PORT/DB"):
        connect("postgres://x")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://h:1/0?password=s3cret", "redis://h:1/0?password=***"),
        (
            "unix:///run/redis.sock?db=0&password=s3cret&username=ops",
            "unix:///run/redis.sock?db=0&password=***&username=***",
        ),
        ("redis://u:s3cret@h:1/0?PASSWORD=s3cret#x", "redis://u:***@h:1/0?PASSWORD=***#x"),
        ("redis://h:1/0?db=2&socket_timeout=1", "redis://h:1/0?db=2&socket_timeout=1"),
    ],
)
def test_a_password_in_the_query_is_masked_too(url: str, shown: str) -> None:
    assert redacted(url) == shown
