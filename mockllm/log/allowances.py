"""Allowances a test gives its session: verdict checks it waives, each with its reason.

A scenario and its turns carry theirs in the log entries (`allow`); a test's
(`PUT /_mockllm/allow?session=NAME`: a pytest marker, `Session.allow()`) are a record in
the log itself, with where they came from, so every judge of that log (the verdict route,
the live viewer, the transcript, `mockllm report` on the `--log` file) waives the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockllm.errors import did_you_mean
from mockllm.log.journal import Journal, LiveEntry
from mockllm.log.verdict import ALLOWANCE, CHECK_NAMES

MAX_ALLOW_BODY = 16_384  # bytes of one PUT: a dozen checks with a sentence each
MAX_REASON = 500


def allowance_problem(given: Any) -> str | None:
    """Why `given` is not `{check: reason}` over known checks, if it is not."""
    if not isinstance(given, Mapping):
        return "allowances must be a JSON object {check: reason}"
    for name, reason in given.items():
        if name not in CHECK_NAMES:
            return (
                f"no verdict check named {name!r}{did_you_mean(str(name), CHECK_NAMES)}; "
                f"checks: {', '.join(CHECK_NAMES)}"
            )
        if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON:
            return (
                f"the reason for waiving {name} must be a non-empty string of at most "
                f"{MAX_REASON} characters"
            )
    return None


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
