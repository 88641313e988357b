"""The request log of a fleet: servers sharing one Redis (`--state redis://...`) keep one
log, numbered by one gap-free `seq` however many replicas answered (docs/scale.md).

An entry reaches the store when it closes, in one atomic write that gives it the fleet's
next seq: readers see seqs in order and without holes, so `since=` never skips an entry
still being answered elsewhere. The price: a request still being answered is not listed
(in memory it shows as pending). When the store cannot be reached, closed entries wait in
this process (up to the log limit) and go in with the next write that succeeds.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from mockllm.log.journal import Journal, LiveEntry, entry_line
from mockllm.options import ServerOptions
from mockllm.state import StoreUnavailable, connect, is_shared
from mockllm.state.redis_log import RedisLog, with_seq


def open_journal(options: ServerOptions) -> Journal:
    """The log `options` ask for: this process's own, or the fleet's on a shared store."""
    if not is_shared(options.state):
        return Journal(options.log_limit, options.log, options.log_body_cap)
    client = connect(options.state)
    store = RedisLog(client, options.state, options.state_prefix, options.log_limit)
    return SharedJournal(store, options.log, options.log_body_cap)


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
        # Closed entries the store has not taken yet, with their lines.
        self._waiting: deque[tuple[LiveEntry, str]] = deque(maxlen=store.limit)
        self._lost_store = False
        self._busy = False  # a write is under way
        self._next: asyncio.Future[None] | None = None  # done when the next write is
        self._follower: asyncio.Task[None] | None = None  # kept: a task must be referenced

    def open(
        self, path: str, headers: list[tuple[bytes, bytes]], method: str = "POST"
    ) -> LiveEntry:
        """The entry's seq is this process's own count until the store numbers it."""
        entry = LiveEntry(self._next_seq, path, headers, method)
        self._next_seq += 1
        return entry

    def close(self, entry: LiveEntry) -> Any:
        if entry.closed:
            return None
        entry.closed = True
        entry.duration_ms = round((time.perf_counter() - entry.started) * 1000, 3)
        self._waiting.append((entry, entry_line(entry)))
        if entry.reparse is not None:
            entry.conversation = None
        return self.flush()

    async def flush(self) -> None:
        """Hand the waiting entries to the store; back once this process's entries closed
        so far are stored (or the store was found lost: then they wait for the next write,
        as a lost store must not fail the request being answered). One write at a time:
        entries that close while one is under way go in together with the next, one round
        trip for many under load."""
        if not self._waiting:
            return
        if self._busy:
            if self._next is None:
                self._next = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._next)
            return
        await self._write_and_hand_on(None)

    async def _write_and_hand_on(self, batch: asyncio.Future[None] | None) -> None:
        """Write what waits (`batch`'s entries, when a task does it for them); entries that
        closed meanwhile are written next by a task of their own."""
        self._busy, stored = True, False
        try:
            stored = await self._write()
        finally:
            if batch is not None:
                batch.set_result(None)
            following, self._next = self._next, None
            if following is not None and stored:
                next_write = self._write_and_hand_on(following)
                self._follower = asyncio.get_running_loop().create_task(next_write)
            else:
                self._busy = False
                if following is not None:
                    following.set_result(None)  # the store is lost: they wait too

    async def _write(self) -> bool:
        taken = list(self._waiting)
        self._waiting.clear()
        try:
            given = await self.store.append([(line, e.session, e.scenario) for e, line in taken])
        except StoreUnavailable as error:
            self._waiting.extendleft(reversed(taken))  # older than what came meanwhile
            if not self._lost_store:
                print(f"{error}; log entries wait here until it is back", file=sys.stderr)
            self._lost_store = True
            return False
        if self._lost_store:
            print(f"mockllm: the store {self.store.url} is back; log written", file=sys.stderr)
        self._lost_store = False
        for (entry, line), seq in zip(taken, given, strict=True):
            entry.seq = seq
            self.written(entry, with_seq(line, seq))
        return True

    def entries(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> Any:
        raise TypeError("the shared log is read with the async read_* methods")

    async def read_text(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> str:
        await self.flush()
        return "[" + ",".join(await self.store.lines(session, scenario, since)) + "]"

    async def read_json(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> list[dict[str, Any]]:
        await self.flush()
        return [json.loads(line) for line in await self.store.lines(session, scenario, since)]

    async def read_touched(self, since: int) -> list[dict[str, Any]]:
        await self.flush()
        found = []
        for session in await self.store.touched(since):
            found += await self.read_json(session)
        return found

    async def delete(self, session: str | None = None) -> int:
        await self.flush()  # what this process answered before the reset goes too
        return await self.store.clear(session)

    def shutdown(self) -> None:
        if self._waiting:
            print(
                f"mockllm: {len(self._waiting)} log entries never reached the store "
                f"{self.store.url}",
                file=sys.stderr,
            )
        super().shutdown()
