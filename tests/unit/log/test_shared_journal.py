"""`mockllm.log.shared` and `mockllm.state.redis_log` without a Redis: how an entry is
numbered by the fleet, what waits in the process while the store is lost, and that a URL's
password never reaches a message (tests/test_shared_log.py runs the real thing)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm.log.journal import entry_line
from mockllm.log.shared import SharedJournal
from mockllm.state import StoreUnavailable, redacted
from mockllm.state.redis_log import with_seq

from .test_journal import HEADERS, opened


class Store:
    """Stands for RedisLog: numbers what it takes, or is lost."""

    url, limit = "redis://127.0.0.1:1/0", 100

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.lost = False

    async def append(self, entries: Sequence[tuple[str, str | None, str | None]]) -> list[int]:
        if self.lost:
            raise StoreUnavailable(self.url, "Connection refused")
        self.lines += [
            with_seq(line, len(self.lines) + 1 + i) for i, (line, _, _) in enumerate(entries)
        ]
        return list(range(len(self.lines) - len(entries) + 1, len(self.lines) + 1))


def closed(log: SharedJournal, session: str) -> None:
    written = log.close(opened(log, session))
    assert written is not None
    # No event loop (it would open a socket pair): this store never suspends.
    with pytest.raises(StopIteration):
        written.send(None)


@given(st.integers(0, 10**12), st.integers(1, 10**12))
def test_with_seq_renumbers_an_entry_line_and_keeps_the_rest(local: int, fleet: int) -> None:
    log = SharedJournal(Store(), None, 1000)
    entry = log.open("/v1/chat/completions", HEADERS)
    entry.seq = local
    renumbered = json.loads(with_seq(entry_line(entry), fleet))
    assert renumbered == {**entry.to_json(), "seq": fleet}


def test_entries_wait_in_order_while_the_store_is_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store()
    log = SharedJournal(store, str(tmp_path / "log.jsonl"), 1000)
    closed(log, "a")
    store.lost = True
    closed(log, "b")
    closed(log, "c")
    assert "unreachable (Connection refused); log entries wait" in capsys.readouterr().err
    store.lost = False
    closed(log, "d")
    assert [json.loads(line)["session"] for line in store.lines] == ["a", "b", "c", "d"]
    assert [json.loads(line)["seq"] for line in store.lines] == [1, 2, 3, 4]
    assert (tmp_path / "log.jsonl").read_text().splitlines() == store.lines
    assert "is back; log written" in capsys.readouterr().err
    log.shutdown()


def test_a_process_stopping_with_entries_waiting_says_how_many(
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = Store()
    store.lost = True
    log = SharedJournal(store, None, 1000)
    closed(log, "a")
    log.shutdown()
    assert "1 log entries never reached the store redis://127.0.0.1:1/0" in capsys.readouterr().err


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
