"""How a process hands its closed entries to the fleet's log (`mockllm.log.shared`), on an
event loop, against a store that stands for Redis: one write at a time, entries closed
meanwhile batched into the next, each request back only once its entry is stored, and
entries waiting in order while the store is lost (tests/test_shared_log.py: real Redis)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from mockllm.log.shared import SharedJournal
from mockllm.state import StoreUnavailable
from mockllm.state.redis_log import with_seq

from .unit.log.test_journal import opened


class Store:
    """Stands for RedisLog: numbers what it takes after a pause, or is lost."""

    url, limit = "redis://127.0.0.1:1/0", 100

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.writes = 0
        self.lost = False

    async def append(self, entries: Sequence[tuple[str, str | None, str | None]]) -> list[int]:
        await asyncio.sleep(0.001)  # a round trip
        if self.lost:
            raise StoreUnavailable(self.url, "Connection refused")
        self.writes += 1
        first = len(self.lines) + 1
        self.lines += [with_seq(line, first + i) for i, (line, _, _) in enumerate(entries)]
        return list(range(first, len(self.lines) + 1))


async def closed(log: SharedJournal, session: str) -> int:
    """Close one entry as a request does; the seq it has once the close returns."""
    entry = opened(log, session)
    written = log.close(entry)
    assert written is not None
    await written
    return entry.seq


def test_concurrent_requests_share_writes_and_each_returns_once_stored() -> None:
    store = Store()
    log = SharedJournal(store, None, 1000)

    async def many() -> list[int]:
        return await asyncio.gather(*(closed(log, f"s{i}") for i in range(50)))

    seqs = asyncio.run(many())
    assert sorted(seqs) == list(range(1, 51))  # each saw its own fleet seq: stored
    assert [json.loads(line)["seq"] for line in store.lines] == list(range(1, 51))
    assert store.writes < 10  # not one round trip each


def test_entries_wait_in_order_while_the_store_is_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store()
    log = SharedJournal(store, str(tmp_path / "log.jsonl"), 1000)

    async def story() -> None:
        await closed(log, "a")
        store.lost = True
        await asyncio.gather(closed(log, "b"), closed(log, "c"))
        assert "unreachable (Connection refused); log entries wait" in capsys.readouterr().err
        store.lost = False
        await closed(log, "d")

    asyncio.run(story())
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
    asyncio.run(closed(log, "a"))
    log.shutdown()
    assert "1 log entries never reached the store redis://127.0.0.1:1/0" in capsys.readouterr().err
