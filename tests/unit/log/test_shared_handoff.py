"""How a process hands its closed entries to the fleet's log (`mockllm.log.shared`), on an
event loop, against a store that stands for Redis: one writer, entries closed meanwhile
batched into its next write, each request back only once its entry is stored, and, while
the store is lost, requests not held up, entries waiting in order, the oldest dropped past
the limit, and the backlog written by the writer alone once the store is back
(tests/fleet/test_shared_log.py and tests/fleet/test_redis_log.py: real Redis)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from mockllm.log import shared
from mockllm.log.journal import LiveEntry, entry_line
from mockllm.log.shared import SharedJournal
from mockllm.state import StoreUnavailable
from mockllm.state.redis_log import with_seq
from tests.support.journals import opened

FIRST = 1001  # the fleet's seqs, never the process's own (which start at 1)


class Store:
    """Stands for RedisLog: numbers what it takes after a pause, or is lost; keeps each
    batch's seqs by token, as the append script does."""

    url, limit = "redis://127.0.0.1:1/0", 100

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.sizes: list[int] = []  # entries per write that stored something
        self.tokens: dict[str, list[int]] = {}
        self.lost = False
        self.lose_reply = False  # store, then fail as a dropped connection does
        self.pause = 0.001  # a round trip
        self.calls = 0  # writes begun
        self.answered = 0  # writes told they succeeded
        self.sent = 0  # appends written at close, their reply awaited later (`send`)

    def send(
        self, entries: Sequence[tuple[str, str | None, str | None]], token: str
    ) -> Awaitable[list[int]]:
        self.sent += 1
        return self.append(entries, token)

    def on_own_client(self) -> Store:
        return self

    async def aclose(self) -> None:
        pass

    async def append(
        self, entries: Sequence[tuple[str, str | None, str | None]], token: str
    ) -> list[int]:
        self.calls += 1
        await asyncio.sleep(self.pause)
        if self.lost:
            raise StoreUnavailable(self.url, "Connection refused")
        if token not in self.tokens:
            first = FIRST + len(self.lines)
            self.lines += [with_seq(line, first + i) for i, (line, _, _) in enumerate(entries)]
            self.tokens[token] = list(range(first, first + len(entries)))
            self.sizes.append(len(entries))
        if self.lose_reply:
            self.lose_reply = False
            raise StoreUnavailable(self.url, "Timeout reading from socket")
        self.answered += 1
        return self.tokens[token]

    def sessions(self) -> list[str]:
        return [json.loads(line)["session"] for line in self.lines]


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared, "RETRY_FIRST", 0.01)
    monkeypatch.setattr(shared, "RETRY_MOST", 0.02)


_FILED: list[SharedJournal] = []


def filed(store: Store, tmp_path: Path, console: Callable[[LiveEntry], None] | None = None) -> Any:
    """A shared journal with a --log file: its requests wait until their entry is stored."""
    log = SharedJournal(store, str(tmp_path / "log.jsonl"), 1000, console)
    _FILED.append(log)
    return log


@pytest.fixture(autouse=True)
def _files_closed() -> Iterator[None]:
    yield
    while _FILED:
        log = _FILED.pop()
        if log._file is not None:  # the --log file the test's journal opened
            log._file.close()
            log._file = None


async def closed(log: SharedJournal, session: str) -> int:
    """Close one entry as a request does; the seq it has once the close returns."""
    entry = opened(log, session)
    written = log.close(entry)
    if written is not None:
        await written
    return entry.seq


async def until(done: Callable[[], bool], seconds: float = 10.0) -> None:
    """Yield to the loop until `done()` holds: a poll with a deadline, not a fixed sleep, so
    a loaded machine waits longer and a quick one not at all."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "the writer did not get there in time"
        await asyncio.sleep(0.001)


def test_concurrent_requests_share_writes_and_each_returns_once_stored(tmp_path: Path) -> None:
    store = Store()
    log = filed(store, tmp_path)

    async def many() -> list[int]:
        return await asyncio.gather(*(closed(log, f"s{i}") for i in range(50)))

    seqs = asyncio.run(many())
    assert sorted(seqs) == list(range(FIRST, FIRST + 50))  # each saw its fleet seq: stored
    assert [json.loads(line)["seq"] for line in store.lines] == sorted(seqs)
    assert len(store.sizes) < 10  # not one round trip each
    assert 0 not in store.sizes  # and never one that writes nothing


def test_one_write_takes_at_most_a_batch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(shared, "BATCH_ENTRIES", 7)
    store = Store()
    log = filed(store, tmp_path)

    async def many() -> list[int]:
        return await asyncio.gather(*(closed(log, f"s{i}") for i in range(30)))

    assert sorted(asyncio.run(many())) == list(range(FIRST, FIRST + 30))
    assert max(store.sizes) == 7


def test_entries_wait_in_order_while_the_store_is_lost_and_requests_do_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store()
    log_file = tmp_path / "log.jsonl"
    log = SharedJournal(store, str(log_file), 1000)

    async def story() -> None:
        await closed(log, "a")
        store.lost = True
        await closed(log, "b")  # found lost: waits for nothing more
        assert "unreachable (Connection refused); log entries wait" in capsys.readouterr().err
        assert log.close(opened(log, "c")) is None  # back at once, no write tried inline
        store.lost = False
        # no request comes: the writer writes the backlog itself (the store, then the file)
        await until(lambda: len(store.lines) == 3 and len(log_file.read_text().splitlines()) == 3)

    asyncio.run(story())
    assert store.sessions() == ["a", "b", "c"]
    assert [json.loads(line)["seq"] for line in store.lines] == [FIRST, FIRST + 1, FIRST + 2]
    assert (tmp_path / "log.jsonl").read_text().splitlines() == store.lines
    assert "is back; log written" in capsys.readouterr().err
    log.shutdown()


def test_a_batch_whose_reply_was_lost_is_sent_again_with_its_token_and_stored_once(
    tmp_path: Path,
) -> None:
    store = Store()
    log = filed(store, tmp_path)

    async def story() -> None:
        store.lose_reply = True
        await closed(log, "a")  # stored, but the writer was not told: it tries again
        await until(lambda: store.answered == 1)  # the second try, told
        await closed(log, "b")

    asyncio.run(story())
    assert store.sessions() == ["a", "b"]


def test_a_cancelled_request_or_writer_loses_no_entry(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = Store()
    store.pause = 0.05
    log = filed(store, tmp_path)

    async def cancelled_request() -> None:
        waiting = asyncio.ensure_future(closed(log, "a"))
        await until(lambda: store.calls == 1)  # a's write is under way
        waiting.cancel()  # e.g. uvicorn's graceful-shutdown timeout
        await closed(log, "b")

    asyncio.run(cancelled_request())
    assert store.sessions() == ["a", "b"]

    async def loop_ends_mid_write() -> None:
        begun = store.calls
        log.close(opened(log, "c"))
        await until(lambda: store.calls > begun)  # then asyncio.run cancels the writer mid-write

    asyncio.run(loop_ends_mid_write())
    log.shutdown()  # the last write, with the batch's own token
    assert store.sessions() == ["a", "b", "c"]
    assert "never reached" not in capsys.readouterr().err


def test_what_writing_the_file_or_console_raised_reaches_its_request(tmp_path: Path) -> None:
    def console(entry: LiveEntry) -> None:
        if entry.session == "b":
            raise BrokenPipeError("the console's reader is gone")

    store = Store()
    log = filed(store, tmp_path, console)

    async def story() -> list[object]:
        # a is written first; b and c close meanwhile and go in the next write together
        return await asyncio.gather(*(closed(log, n) for n in "abc"), return_exceptions=True)

    a, b, c = asyncio.run(story())
    assert isinstance(b, BrokenPipeError)
    assert (a, c) == (FIRST, FIRST + 2)
    assert store.sessions() == ["a", "b", "c"]


def test_past_the_limit_the_oldest_waiting_are_dropped_and_counted(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    store = Store()
    store.limit = 3
    log = filed(store, tmp_path)

    async def story() -> None:
        store.lost = True
        for name in "abcdef":
            await closed(log, name)
        store.lost = False
        await until(lambda: len(store.lines) == 4)

    asyncio.run(story())
    # "a" was in the write being retried; b and c were dropped for d, e, f
    assert store.sessions() == ["a", "d", "e", "f"]
    log.shutdown()
    assert "2 log entries never reached" in capsys.readouterr().err
    assert log.dropped == 2


def test_a_reset_waits_for_the_write_under_way(tmp_path: Path) -> None:
    store = Store()
    store.pause = 0.05
    log = filed(store, tmp_path)
    cleared: list[int] = []

    async def clear(session: str | None = None) -> int:
        cleared.append(len(store.lines))
        return len(store.lines)

    store.clear = clear  # type: ignore[attr-defined]

    async def story() -> None:
        first = asyncio.ensure_future(closed(log, "a"))
        await until(lambda: store.calls == 1)  # a's write is under way, nothing else waits
        assert await log.delete() == 1
        await first

    asyncio.run(story())
    assert cleared == [1]


def test_a_process_stopping_with_entries_waiting_says_how_many(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    store = Store()
    store.lost = True
    log = filed(store, tmp_path)
    asyncio.run(closed(log, "a"))
    log.shutdown()
    assert "1 log entries never reached the store redis://127.0.0.1:1/0" in capsys.readouterr().err


def test_the_shared_log_is_neither_read_nor_cleared_in_place() -> None:
    log = SharedJournal(Store(), None, 1000)
    with pytest.raises(TypeError):
        log.entries()
    with pytest.raises(TypeError):
        log.clear()


def test_without_a_file_the_append_is_sent_at_close_and_nobody_waits() -> None:
    """No --log file: the request's close returns nothing to await, its append is written
    at once (before the response's last byte), and a reader still finds the entry."""
    store = Store()
    log = SharedJournal(store, None, 1000)

    async def story() -> None:
        log.close(opened(log, "first"))  # starts the writer (it sends this one)
        await until(lambda: store.answered == 1)
        assert log.close(opened(log, "a")) is None
        assert store.sent == 1  # written now, on this loop turn
        await log.flush()  # what a reader does first: it waits for the reply
        assert store.sessions() == ["first", "a"]

    asyncio.run(story())


def test_without_a_file_a_failed_append_is_told_to_the_logs_readers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = Store()
    log = SharedJournal(store, None, 1000)

    async def story() -> None:
        log.close(opened(log, "first"))
        await until(lambda: store.answered == 1)
        store.lost = True
        assert log.close(opened(log, "a")) is None  # the request is not held
        with pytest.raises(StoreUnavailable, match="Connection refused"):
            await log.flush()  # a reader: the log is not whole, and says why
        store.lost = False
        await log.flush()  # the store is back: the entry waited, and is stored
        assert store.sessions() == ["first", "a"]

    asyncio.run(story())
    assert "log entries wait here until it is back" in capsys.readouterr().err


def test_with_neither_a_file_nor_a_console_no_numbered_line_is_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The fleet's seq reaches each entry; its numbered line (`with_seq`) is made only for
    a --log file or a console to be told (`--quiet` and no --log: nobody)."""
    made: list[int] = []

    def numbered(line: str, seq: int) -> str:
        made.append(seq)
        return with_seq(line, seq)

    monkeypatch.setattr(shared, "with_seq", numbered)
    told: list[int] = []
    quiet, filed_ = SharedJournal(Store(), None, 1000), filed(Store(), tmp_path)
    loud = SharedJournal(Store(), None, 1000, lambda entry: told.append(entry.seq))

    async def story(log: SharedJournal) -> list[int]:
        entries = [opened(log, "s") for _ in range(2)]
        for entry in entries:
            written = log.close(entry)
            if written is not None:  # (the file's: the request waits)
                await written
        await log.flush()
        return [entry.seq for entry in entries]

    assert [asyncio.run(story(log)) for log in (quiet, loud, filed_)] == [[FIRST, FIRST + 1]] * 3
    assert told == [FIRST, FIRST + 1]  # the console, told with the fleet's seq
    assert made == [FIRST, FIRST + 1] * 2  # the console's journal and the file's: not quiet's


def test_one_write_takes_at_most_a_batchs_bytes_and_the_count_of_what_waits_stays_true(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """All that waits goes in one write while it fits (no entry counted one by one); past
    BATCH_BYTES it is split, and the bytes still waiting are what the lines left hold."""
    store = Store()
    log = filed(store, tmp_path)
    monkeypatch.setattr(shared, "BATCH_BYTES", 3 * len(entry_line(opened(log, "s0"))))

    async def many() -> list[int]:
        return await asyncio.gather(*(closed(log, f"s{i}") for i in range(20)))

    assert sorted(asyncio.run(many())) == list(range(FIRST, FIRST + 20))
    assert 1 < max(store.sizes) <= 3
    assert not log._waiting and log._waiting_bytes == 0
    monkeypatch.setattr(shared, "BATCH_BYTES", 1 << 30)
    assert asyncio.run(many())  # (fits: taken whole)
    assert not log._waiting and log._waiting_bytes == 0
