"""The fault-injection group (issue 24): a small fleet (`mockllm serve --state redis://...`
processes, loopback only) under a small load against a real redis-server made full
(`maxmemory` with `noeviction`, and with the `volatile-ttl` docs/scale.md recommends), hung
(SIGSTOP past the command timeout) and restarted empty. Per session: every answer logged
once, no `seq` given twice, the scripted `times: 1` 429 delivered exactly once, and only
provider-shaped 503s naming the store while Redis is in trouble. `make fault-soak` runs
the same with more sessions (tests/fleet_soak.py)."""

from __future__ import annotations

import os
import shutil

import pytest

from .fleet_soak import run

SESSIONS = int(os.environ.get("MOCKLLM_SOAK_SESSIONS", "20"))

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="NO redis-server: apt-get install redis-server"
)


@pytest.mark.parametrize("trouble", ["full-noeviction", "full-volatile-ttl", "hung"])
def test_every_answer_logged_once_and_every_fault_as_scripted(trouble: str) -> None:
    figures = run(SESSIONS, trouble, replicas=2)
    assert figures.problems() == [], figures
    assert figures.unfinished == 0, figures  # each got its 429, then its 200
    # a write that timed out on a hung Redis and ran when it woke may consume the 429: the
    # 503's log entry says so (docs/scale.md); it is the one case not answered twice
    assert figures.answered == 2 * SESSIONS - figures.faults_spent_said, figures
    if trouble != "hung":
        assert figures.faults_spent_said == 0, figures


def test_a_restart_is_said_and_no_seq_is_given_twice() -> None:
    figures = run(SESSIONS, "restart", replicas=2)
    assert figures.log_lost_said, figures
    assert figures.problems() == [], figures
