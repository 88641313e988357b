"""`mockllm.log.shared` and `mockllm.state.redis_log` without a Redis: how an entry is
numbered by the fleet, and that a URL's password never reaches a message
(tests/unit/log/test_shared_handoff.py: writes and a lost store; tests/fleet/test_shared_log.py: the real
thing)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm.log.journal import entry_line
from mockllm.log.shared import SharedJournal
from mockllm.state import StoreUnavailable, redacted
from mockllm.state.redis_log import with_seq
from tests.support.journals import HEADERS


class Store:
    """Stands for RedisLog where nothing is written."""

    url, limit = "redis://127.0.0.1:1/0", 100


@given(st.integers(0, 10**12), st.integers(1, 10**12))
def test_with_seq_renumbers_an_entry_line_and_keeps_the_rest(local: int, fleet: int) -> None:
    log = SharedJournal(Store(), None, 1000)
    entry = log.open("/v1/chat/completions", HEADERS)
    entry.seq = local
    renumbered = json.loads(with_seq(entry_line(entry), fleet))
    assert renumbered == {**entry.to_json(), "seq": fleet}


@pytest.mark.parametrize(
    ("url", "seen"),
    [
        ("redis://:s3cret@db:6379/0", "redis://:***@db:6379/0"),
        ("redis://app:s3cret@db:6379/2", "redis://app:***@db:6379/2"),
        ("redis://db:6379/0", "redis://db:6379/0"),
    ],
)
def test_a_store_url_is_shown_without_its_password(url: str, seen: str) -> None:
    assert redacted(url) == seen
    assert f"store {seen} is unreachable (lost)" in str(StoreUnavailable(url, "lost"))
