"""The log's record of the allowances a test gives its session: the verdict checks it
waives, each with its reason (judge/allowances.py says whether they name real checks).

A scenario and its turns carry theirs in the log entries (`allow`); a test's
(`PUT /_mockllm/allow?session=NAME`: a pytest marker, `Session.allow()`) are a record in
the log itself, with where they came from, so every judge of that log (the verdict route,
the live viewer, the transcript, `mockllm report` on the `--log` file) waives the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockllm.log.journal import Journal, LiveEntry

# The `api` of a log record that is no request: the checks a test waived for its session,
# kept in the log so that every judge of it (`mockllm report` too) waives what the test waived.
ALLOWANCE = "allowance"
ORIGIN_CHARS = 300  # where an allowance came from: a test's node id, a client's name


class AllowanceEntry(LiveEntry):
    """The log's record of an allowance: which checks a test waived for its session, why,
    and where it came from (a pytest marker, `Session.allow()`, a bare PUT). Kept in the
    log with the requests, numbered like them, so the ring, `--log` and a fleet's shared
    log all carry it; every reader of requests leaves it out (`api: "allowance"`)."""

    __slots__ = ("allowance",)

    def __init__(
        self, seq: int, path: str, headers: list[tuple[bytes, bytes]], method: str = "PUT"
    ) -> None:
        super().__init__(seq, path, headers, method)
        self.api = ALLOWANCE
        self.allowance: dict[str, Any] = {}

    def to_json(self) -> dict[str, Any]:
        shown = super().to_json()
        shown["allowance"] = self.allowance
        return shown


def recorded(
    journal: Journal,
    session: str,
    allow: Mapping[str, str],
    origin: str,
    route: tuple[str, str] = ("PUT", "/_mockllm/allow"),
) -> LiveEntry:
    """An allowance, opened in `journal` as its newest entry; the caller closes it. An
    empty `allow` records that the session's allowances were cleared (`route`: a reset)."""
    entry = journal.open_as(AllowanceEntry, route[1], [], route[0])
    entry.session = session
    entry.allowance = {"allow": dict(allow), "origin": origin[:ORIGIN_CHARS]}
    entry.status = 200
    return entry
