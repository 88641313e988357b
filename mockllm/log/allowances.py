"""Allowances a test gives its session: verdict checks it waives, each with its reason.

A scenario and its turns carry theirs in the log entries (`allow`); a test's are held
by the server that judges (`PUT /_mockllm/allow?session=NAME`), so every view of that
server (the verdict route, the live viewer, the transcript) shows them alike.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from mockllm.errors import did_you_mean
from mockllm.log.verdict import CHECK_NAMES

MAX_ALLOW_BODY = 16_384  # bytes of one PUT: a dozen checks with a sentence each
MAX_REASON = 500
MAX_SESSIONS = 10_000  # sessions whose allowances are kept; the oldest go first


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


class Allowances:
    """Per session, most recent last; bounded like the log."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self._by_session: OrderedDict[str, dict[str, str]] = OrderedDict()

    def set(self, session: str, allow: Mapping[str, str]) -> None:
        self._by_session.pop(session, None)
        if allow:
            self._by_session[session] = dict(allow)
        while len(self._by_session) > self.limit:
            self._by_session.popitem(last=False)

    def get(self, session: str) -> dict[str, str]:
        return self._by_session.get(session, {})

    def clear(self, session: str | None) -> None:
        if session is None:
            self._by_session.clear()
        else:
            self._by_session.pop(session, None)
