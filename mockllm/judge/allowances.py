"""Allowances a test gives its session, checked: `{check: reason}` over the verdict's
checks, each reason a short sentence. The log keeps them as a record of their own
(log/allowances.py); this is what refuses a bad one at the route, the marker and the CLI."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockllm.errors import did_you_mean
from mockllm.judge.verdict import CHECK_NAMES

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
