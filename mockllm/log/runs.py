"""Which run a session belongs to, by its name.

A session name may end in `~RUN`: the pytest plugin and the Node client name a test's
session `TEST-HASH~RUN`, RUN drawn once per test run, so two runs against one server never
share a session (docs/ci.md). The log shows RUN as an entry's `run`.

A name can still come back; judge/uses.py tells its uses apart by the entries' `epoch`.
"""

from __future__ import annotations

import re

RUN_MARK = "~"
RUN_ID = re.compile(r"[A-Za-z0-9._-]{1,40}")


def run_of(session: str | None) -> str | None:
    """The run id a session name carries (`TEST-HASH~RUN` -> RUN), or None."""
    if not session or RUN_MARK not in session:
        return None
    run = session.rpartition(RUN_MARK)[2]
    return run if RUN_ID.fullmatch(run) else None


def test_of(session: str) -> str:
    """The name without its run id: the same test in two runs has the same one."""
    return session.rpartition(RUN_MARK)[0] if run_of(session) else session


def with_run(name: str, run: str) -> str:
    return f"{name}{RUN_MARK}{run}"
