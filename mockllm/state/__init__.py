"""State shared between requests, behind one small interface: attempt counters, how each
turn's latest delivery was cut, stored Responses, run-time scenarios and the request log.

Two implementations: this process's memory (the default) and Redis, shared by every server
given the same URL and prefix (docs/scale.md). The Redis client is imported only when a
Redis URL is given, so the default needs no extra dependency.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

MEMORY = "memory"
# A dead Redis must not stall requests: a refused connection fails at once, a silent host
# within these seconds; one immediate retry covers a pooled connection Redis dropped. Only
# a connection error is retried, never a timeout: the command may have run (counting an
# attempt is not idempotent), so a slow Redis is an honest 503, not a second count.
CONNECT_TIMEOUT = 1.0
COMMAND_TIMEOUT = 2.0


def is_shared(url: str) -> bool:
    """Whether `url` names a store other processes can share (anything but "memory")."""
    return url != MEMORY


def connect(url: str) -> Any:
    """A `redis.asyncio.Redis` client for `url`; a clear ValueError when the URL is not a
    Redis URL or the `redis` package is missing (pip install 'mockllm-server[redis]')."""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"--state {url!r}: give 'memory' or a Redis URL, redis://HOST:PORT/DB")
    try:  # hiredis reads the replies of the pipelined connection (state/redis_line.py)
        import hiredis  # noqa: F401
        import redis.asyncio
    except ImportError:
        raise ValueError(
            "--state redis://... needs the redis client: pip install 'mockllm-server[redis]'"
        ) from None
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff
    from redis.exceptions import ConnectionError

    return redis.asyncio.Redis.from_url(
        url,
        socket_connect_timeout=CONNECT_TIMEOUT,
        socket_timeout=COMMAND_TIMEOUT,
        retry=Retry(NoBackoff(), 1, supported_errors=(ConnectionError,)),
    )


# A credential in the query string (redis-py reads ?password= and ?username=, and a unix://
# URL can give them no other way), up to the next parameter or fragment.
_QUERY_SECRET = re.compile(r"(?i)((?:^|&)(?:password|username)=)[^&#]*")


def redacted(url: str) -> str:
    """`url` with its password masked, and a user name or password given in its query:
    what messages and log lines show."""
    head, mark, query = url.partition("?")
    parts = urlsplit(head)
    if parts.password is not None:
        user = parts.username or ""
        host = parts.netloc.rpartition("@")[2]
        head = urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
    return head + mark + _QUERY_SECRET.sub(r"\1***", query)


class StoreUnavailable(Exception):
    """The shared store cannot be reached (or was lost mid-request). The serving path answers
    503 in the provider's shape naming the store, and nothing is half-written."""

    def __init__(
        self, url: str, reason: str, timed_out: bool = False, refused: bool = False
    ) -> None:
        url = redacted(url)
        super().__init__(f"mockllm: the shared state store {url} is unreachable ({reason})")
        self.url, self.reason = url, reason
        self.timed_out = timed_out  # the command may still have run (a slow Redis)
        # Redis answered with an error (a full Redis: OOM command not allowed): it did not run
        self.refused = refused
        # (turn, attempt) when the store was lost while or after counting that attempt: the
        # 503's log entry says so (the one case where a 503 may spend an attempt)
        self.consumed: tuple[int, int] | None = None
        self.counted = False  # True: the attempt was counted for certain before the loss

    def consumed_note(self) -> str:
        assert self.consumed is not None
        turn, attempt = self.consumed
        if self.counted:
            return (
                f"mockllm: attempt {attempt} of turn {turn} was counted before the store was "
                f"lost: this 503 consumed it (the turn's next request is attempt {attempt + 1})"
            )
        how = "timed out" if self.timed_out else "failed"
        return (
            f"mockllm: the store {how} while counting attempt {attempt} of turn {turn} (and how "
            "it was cut, in one write): if that write reached Redis, this 503 consumed the "
            "attempt; if not, nothing was counted"
        )


class StoreBusy(StoreUnavailable):
    """The store answered, but kept changing under a request (scenarios posted on another
    server faster than it could load them): a 503 that says so, not "unreachable"."""

    def __init__(self, url: str, what: str) -> None:
        super().__init__(url, what)
        self.args = (f"mockllm: the shared state store {self.url}: {what}",)

    def __str__(self) -> str:
        return str(self.args[0])


class LogLost(StoreUnavailable):
    """The fleet log's keys were found gone (evicted, flushed, a Redis restarted empty):
    its readers get a 503 saying so until the log is cleared, never a log with a silent hole."""

    def __init__(self, url: str, what: str) -> None:
        super().__init__(url, what)
        self.args = (f"mockllm: the shared state store {self.url}: {what}",)

    def __str__(self) -> str:
        return str(self.args[0])
