"""The request log of a fleet: servers sharing one Redis (`--state redis://...`) keep one
log, numbered by one gap-free `seq` however many replicas answered (docs/scale.md).

An entry reaches the store when it closes, in one atomic write that gives it the fleet's
next seq: readers see seqs in order and without holes, so `since=` never skips an entry
still being answered elsewhere. The price: a request still being answered is not listed
(in memory it shows as pending). One writer task per process writes what closed, many
entries a round trip. With a --log file, a request is answered once its entry is stored
(and in the file); without, its append is written to Redis before the response's last
byte and its reply read later, so the client still finds it in the log. When the store
is lost, requests stop waiting, entries wait here (up to the log limit, the oldest
dropped first) and the writer tries again, less and less often.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import inspect
import json
import os
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from mockllm.log.journal import E, Journal, LiveEntry, entry_line, off_loop
from mockllm.options import ServerOptions
from mockllm.state import StoreUnavailable, connect, is_shared
from mockllm.state.redis_log import RedisLog, with_seq


def open_journal(options: ServerOptions) -> Journal:
    """The log `options` ask for: this process's own, or the fleet's on a shared store."""
    if not is_shared(options.state):
        return Journal(
            options.log_limit,
            options.log,
            options.log_body_cap,
            request_cap=options.log_request_cap,
            ring_bytes=options.log_bytes,
        )
    client = connect(options.state)
    store = RedisLog(client, options.state, options.state_prefix, options.log_limit)
    return SharedJournal(store, options.log, options.log_body_cap)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _seq_of(line: str) -> int | None:
    head = line[: line.find(",")]
    digits = head.rpartition(" ")[2]
    return int(digits) if digits.isdigit() else None


def _tail_seqs(path: str, tail: int = 8 << 20) -> set[int | None]:
    """The seqs of the file's last lines (a batch is at most BATCH_BYTES): those a killed
    process did write before it died are not appended twice."""
    with open(path, "rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - tail))
        text = f.read().decode("utf-8", "replace")
    return {_seq_of(line) for line in text.splitlines() if line.startswith('{"seq": ')}


BATCH_ENTRIES = 500  # the most entries one write stores
BATCH_BYTES = 4 << 20  # and their most bytes (one entry more when it alone is bigger)
RETRY_FIRST, RETRY_MOST = 0.5, 5.0  # seconds between tries while the store is lost
LAST_WRITE = 2.0  # seconds a stopping process gives the entries still waiting

Waiting = tuple[int, LiveEntry, str]  # (ordinal in this process, entry, its line)


class SharedJournal(Journal):
    def __init__(
        self,
        store: RedisLog,
        path: str | None,
        body_cap: int,
        console: Callable[[LiveEntry], None] | None = None,
    ) -> None:
        super().__init__(0, path, body_cap, console)  # no ring here: the store keeps it
        self.store = store
        self._path = path
        self._pending: str | None = None  # PATH.pending-PID: the batch being written, if any
        self._waiting: deque[Waiting] = deque()  # closed, not in a write yet
        self._waiting_bytes = 0  # their lines' length, together
        self._batch: tuple[str, list[Waiting]] | None = None  # (token, entries) being written
        self._sent: Awaitable[list[int]] | None = None  # the batch's append, written at close
        self._closed = 0  # entries closed so far: each close's ordinal
        self._settled = 0  # every entry up to this ordinal is stored (or dropped)
        self._callers: deque[tuple[int, asyncio.Future[None]]] = deque()  # (ordinal, its wait)
        # Readers wait for their entries, or for a try begun after they asked: (ordinal, try)
        self._readers: list[tuple[int, int, asyncio.Future[None]]] = []
        self._tries = 0
        self._lost_store = False
        self._lost: StoreUnavailable | None = None  # why the last try failed, while it is lost
        self.dropped = 0  # entries dropped while the store was lost, the log limit reached
        self._token, self._batches = "", 0  # batch tokens: made by the process that writes
        self._wake = self._retry = asyncio.Event()  # made anew with each writer task
        self._writer: asyncio.Task[None] | None = None

    def open(
        self, path: str, headers: list[tuple[bytes, bytes]], method: str = "POST"
    ) -> LiveEntry:
        """`open_as(LiveEntry, ...)`, written out (every request opens one); not the
        journal's, which writes the ring."""
        entry = LiveEntry(self._next_seq, path, headers, method)
        self._next_seq += 1
        return entry

    def open_as(
        self, kind: type[E], path: str, headers: list[tuple[bytes, bytes]], method: str = "POST"
    ) -> E:
        """The entry's seq is this process's own count until the store numbers it."""
        entry = kind(self._next_seq, path, headers, method)
        self._next_seq += 1
        return entry

    def record_sent(self, entry: LiveEntry, data: bytes) -> None:
        """Keep the bytes sent even where the memory log would make them again when read
        (`sent_again`, to hold less in its ring): this log formats the entry at close,
        right after they went, and keeps nothing after."""
        entry.sent_again = None
        super().record_sent(entry, data)

    def close(self, entry: LiveEntry) -> asyncio.Future[None] | None:
        """Queue the entry for the writer. With a --log file, while the store is healthy, a
        future done once it is stored and written there (raising what writing it raised).
        Without, nothing to wait for: the entry's append is written to Redis now, and its
        reply read by the writer; a failure is told to the log's readers (`flush`)."""
        if entry.closed:
            return None
        entry.closed = True
        entry.duration_ms = round((time.perf_counter() - entry.started) * 1000, 3)
        line = entry_line(entry)  # never raises; built before counting, which readers wait on
        entry.decoded = None
        self._closed += 1
        self._waiting.append((self._closed, entry, line))
        self._waiting_bytes += len(line)
        if entry.reparse is not None:
            entry.conversation = None
        if len(self._waiting) > self.store.limit:
            self._waiting_bytes -= len(self._waiting.popleft()[2])
            self.dropped += 1
        if self._path is not None:  # the --log file has the line, numbered by the fleet,
            self._start_writer()  # before the response ends (a client may read it at once)
            return None if self._lost_store else self._wait_for(self._closed)
        writer = self._writer
        if self._batch is None and not self._lost_store and writer and not writer.done():
            # On its way to Redis before the response's last byte: a reader here waits for
            # its reply (`flush`), and Redis has it before another replica's reader asks.
            token, batch = self._next_batch()
            self._sent = self.store.send([(ln, e.session, e.scenario) for _, e, ln in batch], token)
        self._start_writer()
        return None

    async def flush(self) -> None:
        """Back once every entry closed so far is stored; while the store is lost, once the
        writer has tried again (at once, not after its pause): a reader waits, a request not."""
        if self._settled < self._closed:
            asked = self._closed
            done = asyncio.get_running_loop().create_future()
            self._readers.append((asked, self._tries + 1, done))
            self._start_writer(retry=True)
            await asyncio.shield(done)
            if self._lost is not None and self._settled < asked:  # entries wait for the store
                raise self._lost  # (down, or refusing the appends): the log is not whole

    def _wait_for(self, ordinal: int) -> asyncio.Future[None]:
        done = asyncio.get_running_loop().create_future()
        self._callers.append((ordinal, done))
        return done

    def _start_writer(self, retry: bool = False) -> None:
        if self._writer is None or self._writer.done():
            # Anew in each process and loop: workers forked from one parent never share it.
            first = self._writer is None
            self._token, self._batches = uuid.uuid4().hex, 0
            self._wake, self._retry = asyncio.Event(), asyncio.Event()
            if self._path is not None:
                self._pending = f"{self._path}.pending-{os.getpid()}"
            self._writer = asyncio.get_running_loop().create_task(self._write_forever(first))
        (self._retry if retry else self._wake).set()

    async def _write_forever(self, first: bool = False) -> None:
        """Write what waits, a batch at a time; while the store is lost, try again after a
        pause that doubles up to RETRY_MOST (a reader cuts it short). A cancelled write
        keeps its batch, and its token: sent again, it is stored once."""
        if first and self._path is not None:
            await self._catch_up(self._path)
        pause = RETRY_FIRST
        while True:
            if self._batch is None and not self._waiting:
                self._wake.clear()
                await self._wake.wait()
                continue
            self._retry.clear()  # a reader asking during this try gets another at once
            if await self._write_batch():
                pause = RETRY_FIRST
                continue
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._retry.wait(), pause)
            pause = min(pause * 2, RETRY_MOST)

    def _next_batch(self) -> tuple[str, list[Waiting]]:
        if self._batch is None:
            waiting = self._waiting
            if len(waiting) <= BATCH_ENTRIES and self._waiting_bytes <= BATCH_BYTES:
                taken = list(waiting)  # all of them (what a batch mostly is): no count each
                waiting.clear()
                self._waiting_bytes = 0
            else:
                taken, size = [], 0
                while waiting and len(taken) < BATCH_ENTRIES:
                    size += len(waiting[0][2])
                    if taken and size > BATCH_BYTES:
                        break
                    taken.append(waiting.popleft())
                    self._waiting_bytes -= len(taken[-1][2])
            self._batches += 1
            self._batch = (f"{self._token}:{self._batches}", taken)
        return self._batch

    async def _write_batch(self, store: RedisLog | None = None) -> bool:
        """One try at the batch; whether it was stored."""
        token, batch = self._next_batch()
        self._tries += 1
        sent, self._sent = self._sent, None  # sent at close, on this loop's connection
        if self._pending is not None:  # what a process killed before the file has it left
            with open(self._pending, "w", encoding="utf-8") as intent:
                intent.write(token)
        try:
            if store is not None and inspect.iscoroutine(sent):
                sent.close()  # the last write, on a loop of its own: sent again there
            if sent is None or store is not None:
                sent = (store or self.store).append(
                    [(line, e.session, e.scenario) for _, e, line in batch], token
                )
            given = await sent
        except StoreUnavailable as error:
            if not self._lost_store:
                print(f"{error}; log entries wait here until it is back", file=sys.stderr)
            self._lost_store, self._lost = True, error
            self._release(self._closed, {})  # requests do not wait for a lost store
            self._tell_readers(lambda ordinal, tried: tried <= self._tries)
            return False
        except Exception as error:  # a bug must not stop the writer
            self._batch = None
            self.dropped += len(batch)
            print(f"mockllm: {len(batch)} log entries not stored: {error!r}", file=sys.stderr)
            self._answer(batch[-1][0], {n: error for n, _, _ in batch})
            return True
        self._batch = None
        if (store or self.store).lost:
            print(
                f"mockllm: ERROR: the fleet log on {self.store.url} lost its keys (evicted, "
                "flushed, or Redis restarted empty): entries are missing; its readers get a 503 "
                "until DELETE /_mockllm/requests or POST /_mockllm/reset",
                file=sys.stderr,
                flush=True,
            )
        if self._lost_store:
            print(f"mockllm: the store {self.store.url} is back; log written", file=sys.stderr)
        self._lost_store, self._lost = False, None
        failed: dict[int, BaseException] = {}
        told = self._file is not None or self.console is not None  # (else, no line numbered)
        for (ordinal, entry, line), seq in zip(batch, given, strict=True):
            entry.seq = seq
            if not told:  # no --log file, --quiet
                continue
            try:
                self.written(entry, with_seq(line, seq))
            except Exception as error:  # told to the request that waits
                failed[ordinal] = error
        if self._pending is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._pending)
        self._answer(batch[-1][0], failed)
        return True

    async def _catch_up(self, path: str) -> None:
        """The fleet log is the record of truth; the --log file catches up with it. A
        process killed after its batch reached the store and before the lines reached its
        file left `PATH.pending-PID` naming the batch: the lines the store gave that batch,
        and the file lacks, are appended now (byte for byte the fleet's lines); entries
        trimmed from the store meanwhile are said on stderr, a gap the file cannot fill."""
        for intent in glob.glob(glob.escape(path) + ".pending-*"):
            pid = intent.rpartition("-")[2]
            if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
                continue  # a live process's (a sibling worker's) write in progress
            try:
                with open(intent, encoding="utf-8") as f:
                    token = f.read().strip()
                lines, missing = await self.store.batch_lines(token)
            except StoreUnavailable:
                return  # tried again when this process next starts
            except OSError:
                continue
            present = _tail_seqs(path)
            added = [line for line in lines if _seq_of(line) not in present]
            if self._file is not None and added:
                self._file.write("".join(line + "\n" for line in added))
                self._file.flush()
            if added or missing:
                print(
                    f"mockllm: {path}: a killed process left {len(added) + missing} entries in "
                    f"the fleet log and not in the file: {len(added)} appended now"
                    + (f", {missing} no longer in the store (a gap)" if missing else ""),
                    file=sys.stderr,
                )
            with contextlib.suppress(OSError):
                os.unlink(intent)

    def _answer(self, settled: int, failed: dict[int, BaseException]) -> None:
        """Entries up to `settled` are stored (or given up): their requests and readers go on."""
        self._settled = max(self._settled, settled)
        self._release(settled, failed)
        self._tell_readers(lambda ordinal, tried: ordinal <= self._settled)

    def _release(self, upto: int, failed: dict[int, BaseException]) -> None:
        """Let the requests waiting for entries up to `upto` go on (raising `failed`)."""
        while self._callers and self._callers[0][0] <= upto:
            ordinal, done = self._callers.popleft()
            if done.done():  # its request was cancelled
                continue
            if ordinal in failed:
                done.set_exception(failed[ordinal])
            else:
                done.set_result(None)

    def _tell_readers(self, ready: Callable[[int, int], bool]) -> None:
        waiting = []
        for ordinal, tried, done in self._readers:
            if not ready(ordinal, tried):
                waiting.append((ordinal, tried, done))
            elif not done.done():
                done.set_result(None)
        self._readers = waiting

    def entries(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> Any:
        raise TypeError("the shared log is read with the async read_* methods")

    def clear(self, session: str | None = None) -> int:
        raise TypeError("the shared log is cleared with the async delete method")

    async def read_text(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> str:
        await self.flush()
        lines = await self.store.lines(session, scenario, since)
        return await off_loop(lambda: "[" + ",".join(lines) + "]", lines)

    async def stream_text(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> AsyncIterator[str]:
        yield await self.read_text(session, scenario, since)  # the store's lines, joined

    async def read_json(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> list[dict[str, Any]]:
        await self.flush()
        return await self._decoded(await self.store.lines(session, scenario, since))

    async def read_touched(self, since: int) -> list[dict[str, Any]]:
        await self.flush()
        return await self._decoded(await self.store.touched_lines(since))

    async def _decoded(self, lines: list[str]) -> list[dict[str, Any]]:
        return await off_loop(lambda: [json.loads(line) for line in lines], lines)

    async def delete(self, session: str | None = None) -> int:
        await self.flush()  # what this process answered before the reset goes too
        return await self.store.clear(session)

    def shutdown(self) -> None:
        """Try a last write of what waits (on a client and event loop of its own: the
        server's are gone), for LAST_WRITE seconds at most; say what never got there."""
        if self._batch is not None or self._waiting:
            last = threading.Thread(target=asyncio.run, args=(self._last_write(),), daemon=True)
            last.start()
            last.join(LAST_WRITE + 1)
        left = len(self._waiting) + (len(self._batch[1]) if self._batch else 0)
        if left or self.dropped:
            print(
                f"mockllm: {left + self.dropped} log entries never reached the store "
                f"{self.store.url} ({self.dropped} dropped, the oldest, past the log limit)",
                file=sys.stderr,
            )
        super().shutdown()

    async def _last_write(self) -> None:
        store = self.store.on_own_client()
        try:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._write_all(store), LAST_WRITE)
        finally:
            await store.aclose()

    async def _write_all(self, store: RedisLog) -> None:
        while (self._batch is not None or self._waiting) and await self._write_batch(store):
            pass
