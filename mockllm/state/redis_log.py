"""The request log of a fleet on Redis: JSON lines numbered by one gap-free `seq`.

Each entry is stored by one Lua script that takes the next `seq` and writes the line with
its indexes, so every reader sees seqs 1..N with no hole and none out of order, and a
process dying mid-request leaves nothing half-written. Keys, under PREFIX:log (docs/scale.md):

    seq                 the last seq given (INCR)
    ring                sorted set of the seqs kept, oldest trimmed past the limit
    lines               hash seq -> the entry's JSON line
    sessions, scenarios hash seq -> the entry's session / scenario
    session:NAME        sorted set of that session's seqs (likewise scenario:NAME)

No key has a TTL (an evictable log loses entries silently); a log whose keys went anyway is
found out and said so (`lost`). Scripts name the index keys themselves: one Redis, not a
Cluster.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Sequence
from typing import Any

from mockllm.state import LogLost, StoreUnavailable, connect, redacted
from mockllm.state.redis_line import Line

BATCHES = 1000  # batches whose seqs are remembered, for one being sent again
PAGE = 500  # entries read per round trip: a big read never holds Redis up for long

# Removes one entry from every key that names it.
_FORGET = """
local function forget(base, seq)
  local s = redis.call('HGET', base .. ':sessions', seq)
  if s then redis.call('ZREM', base .. ':session:' .. s, seq) end
  local c = redis.call('HGET', base .. ':scenarios', seq)
  if c then redis.call('ZREM', base .. ':scenario:' .. c, seq) end
  redis.call('HDEL', base .. ':lines', seq)
  redis.call('HDEL', base .. ':sessions', seq)
  redis.call('HDEL', base .. ':scenarios', seq)
  redis.call('ZREM', base .. ':ring', seq)
end
"""

# ARGV: base, limit, token, epoch, floor, fresh, then (line, session, scenario) per entry;
# "" = none. A line starts with its process's own seq ({"seq": 17, ...}): the script puts the
# fleet's there. The token names the batch: a batch sent again (its reply was lost) gets the
# seqs it was given the first time, and is stored once.
# No log key has a TTL: the ring is bounded by the limit, and no `volatile-*` policy evicts
# them (docs/scale.md recommends `noeviction`, which evicts nothing). Should they go all the
# same (an `allkeys-*` policy, a FLUSHALL, a Redis restarted empty), the epoch tells: it is
# a token set when the log starts, and a process that wrote under one (ARGV[4]) and finds
# another, or none, or the counter gone, marks the log lost (`lost`: what readers are told
# until the log is cleared), and the counter goes on above the highest seq that process was
# given (ARGV[5]), so a seq it ever saw is not given again. ARGV[6] is the epoch to start
# with when there is none.
# Reply: {epoch, lost (0/1), seq, seq, ...}.
_APPEND = (
    _FORGET
    + """
local base, limit, token, known = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local floor = tonumber(ARGV[5])
local epoch = redis.call('GET', base .. ':epoch')
local lost = 0
if not epoch then
  epoch = ARGV[6]
  redis.call('SET', base .. ':epoch', epoch)
  if known ~= '' then lost = 1 end
elseif known ~= '' and (epoch ~= known or redis.call('EXISTS', base .. ':seq') == 0) then
  lost = 1
end
local last = tonumber(redis.call('GET', base .. ':seq') or '0')
if last < floor then redis.call('SET', base .. ':seq', floor) end
if lost == 1 then
  redis.call('SET', base .. ':lost', 'the fleet log lost its keys (evicted, flushed, or Redis '
    .. 'restarted empty) before seq ' .. (math.max(last, floor) + 1) .. '; entries before it '
    .. 'are missing. DELETE /_mockllm/requests (or POST /_mockllm/reset) starts it afresh')
end
local done = redis.call('HGET', base .. ':batches', token)
if done then
  local first, count = string.match(done, '(%d+),(%d+)')
  local given = {epoch, lost}
  for i = 0, tonumber(count) - 1 do given[#given + 1] = tonumber(first) + i end
  return given
end
local given = {epoch, lost}
for i = 7, #ARGV, 3 do
  local line, session, scenario = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local seq = redis.call('INCR', base .. ':seq')
  local comma = string.find(line, ',', 1, true)
  redis.call('HSET', base .. ':lines', seq, '{"seq": ' .. seq .. string.sub(line, comma))
  redis.call('ZADD', base .. ':ring', seq, seq)
  for _, index in ipairs({{'session', session}, {'scenario', scenario}}) do
    if index[2] ~= '' then
      redis.call('HSET', base .. ':' .. index[1] .. 's', seq, index[2])
      redis.call('ZADD', base .. ':' .. index[1] .. ':' .. index[2], seq, seq)
    end
  end
  given[#given + 1] = seq
end
if #given > 2 then
  redis.call('HSET', base .. ':batches', token, given[3] .. ',' .. (#given - 2))
  redis.call('RPUSH', base .. ':batch-order', token)
  if redis.call('LLEN', base .. ':batch-order') > BATCHES then
    redis.call('HDEL', base .. ':batches', redis.call('LPOP', base .. ':batch-order'))
  end
end
local over = redis.call('ZCARD', base .. ':ring') - limit
if over > 0 then
  for _, seq in ipairs(redis.call('ZRANGE', base .. ':ring', 0, over - 1)) do
    forget(base, seq)
  end
end
return given
""".replace("BATCHES", str(BATCHES))
)

# ARGV: base, since. The sessions with an entry after `since`.
_TOUCHED = """
local base, since = ARGV[1], ARGV[2]
local seen, out = {}, {}
for _, seq in ipairs(redis.call('ZRANGEBYSCORE', base .. ':ring', '(' .. since, '+inf')) do
  local s = redis.call('HGET', base .. ':sessions', seq)
  if s and not seen[s] then seen[s] = true; out[#out + 1] = s end
end
return out
"""

# ARGV: base, session ("" = every entry). How many entries it removed; the seq goes on.
_CLEAR = (
    _FORGET
    + """
local base, session = ARGV[1], ARGV[2]
local index = base .. ':ring'
if session ~= '' then index = base .. ':session:' .. session end
local seqs = redis.call('ZRANGE', index, 0, -1)
for _, seq in ipairs(seqs) do forget(base, seq) end
if session == '' then redis.call('DEL', base .. ':lost') end
return #seqs
"""
)


def with_seq(line: str, seq: int) -> str:
    """`line` (an entry starting with its seq) numbered `seq`, as the append script does."""
    return f'{{"seq": {seq}' + line[line.index(",") :]


class RedisLog:
    """The fleet's log on one Redis: servers given the same URL and prefix share it."""

    def __init__(self, client: Any, url: str, prefix: str, limit: int) -> None:
        self.url, self.base, self.limit = redacted(url), f"{prefix}:log", limit
        self.client, self._url, self._prefix = client, url, prefix
        self._append = client.register_script(_APPEND)
        self.line = Line(client)  # the appends: one per batch, pipelined with the others
        self._touched = client.register_script(_TOUCHED)
        self._clear = client.register_script(_CLEAR)
        self.epoch = ""  # the log's epoch this process wrote under ("" before its first write)
        self.floor = 0  # the highest seq this process was given: never given again
        self.lost = False  # the last write found the log's keys gone (and marked it so)

    def on_own_client(self) -> RedisLog:
        """The same log on a client of its own: for a last write from another event loop."""
        log = RedisLog(connect(self._url), self._url, self._prefix, self.limit)
        log.epoch, log.floor = self.epoch, self.floor
        return log

    async def aclose(self) -> None:
        await self.line.aclose()
        await self.client.aclose()

    async def append(
        self, entries: Sequence[tuple[str, str | None, str | None]], token: str
    ) -> list[int]:
        """Store (line, session, scenario) entries in order; the fleet seq each was given.
        The same `token` again returns the first call's seqs and stores nothing."""
        args = self._append_args(entries, token)
        return self._given(await self._run(self.line.script(self._append, [], args)))

    def send(
        self, entries: Sequence[tuple[str, str | None, str | None]], token: str
    ) -> Awaitable[list[int]] | None:
        """`append`, its command written now (before the caller goes on), its reply awaited
        later; None when no connection is open to write it on (then `append` it)."""
        from redis.exceptions import ConnectionError

        args = self._append_args(entries, token)
        try:
            reply = self.line.send_script(self._append, [], args)
        except ConnectionError:
            return None
        return self._landed(reply, args)

    async def _landed(self, reply: Awaitable[Any], args: list[Any]) -> list[int]:
        from redis.exceptions import NoScriptError, RedisError

        try:
            found = await reply
        except NoScriptError:  # Redis restarted empty: by its text (the token stores it once)
            found = await self._run(self.line.script(self._append, [], args))
        except (RedisError, OSError) as error:
            raise self._unavailable(error) from None
        return self._given(found)

    def _append_args(
        self, entries: Sequence[tuple[str, str | None, str | None]], token: str
    ) -> list[Any]:
        fresh = secrets.token_hex(16)  # the epoch, if the log has none yet
        args: list[Any] = [self.base, self.limit, token, self.epoch, self.floor, fresh]
        for line, session, scenario in entries:
            args += [line, session or "", scenario or ""]
        return args

    def _given(self, reply: list[Any]) -> list[int]:
        epoch, lost, *given = reply
        self.epoch, self.lost = epoch.decode(), bool(int(lost))
        seqs = [int(seq) for seq in given]
        self.floor = max(self.floor, *seqs) if seqs else self.floor
        return seqs

    async def batch_lines(self, token: str) -> tuple[list[str], int]:
        """The lines the batch `token` was given, as stored, and how many of them the ring
        no longer holds; nothing when the batch never reached the store."""
        done = await self._run(self.client.hget(f"{self.base}:batches", token))
        if done is None:
            return [], 0
        first, count = map(int, done.decode().split(","))
        seqs = list(range(first, first + count))
        found = await self._run(self.client.hmget(f"{self.base}:lines", seqs))
        lines = [line.decode() for line in found if line is not None]
        return lines, count - len(lines)

    async def check(self) -> None:
        """LogLost when the log was found to have lost its keys (until it is cleared)."""
        lost = await self._run(self.client.get(f"{self.base}:lost"))
        if lost is not None:
            raise LogLost(self._url, lost.decode())

    async def lines(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> list[str]:
        """The lines after `since`, in seq order, a page per round trip: one big reply
        would hold Redis (and every replica waiting on it) up for seconds."""
        await self.check()
        index = f"{self.base}:ring"
        if session:
            index = f"{self.base}:session:{session}"
        elif scenario:
            index = f"{self.base}:scenario:{scenario}"
        out: list[str] = []
        while True:
            page = await self._run(
                self.client.zrangebyscore(index, f"({since}", "+inf", start=0, num=PAGE)
            )
            if not page:
                return out
            since, seqs = int(page[-1]), page
            if session and scenario:
                kinds = await self._run(self.client.hmget(f"{self.base}:scenarios", page))
                seqs = [s for s, kind in zip(page, kinds, strict=True) if kind == scenario.encode()]
            out += await self._lines_of(seqs)
            if len(page) < PAGE:
                return out

    async def touched_lines(self, since: int) -> list[str]:
        """Every line of the sessions with an entry after `since`, in seq order: the
        sessions' seqs in one round trip, then their lines a page at a time."""
        await self.check()
        sessions = await self._run(self._touched(args=[self.base, since]))
        if not sessions:
            return []
        pipe = self.client.pipeline(transaction=False)
        for name in sessions:
            pipe.zrange(f"{self.base}:session:{name.decode()}", 0, -1)
        seqs = sorted({int(seq) for found in await self._run(pipe.execute()) for seq in found})
        out: list[str] = []
        for start in range(0, len(seqs), PAGE):
            out += await self._lines_of(seqs[start : start + PAGE])
        return out

    async def _lines_of(self, seqs: Sequence[Any]) -> list[str]:
        if not seqs:
            return []
        found = await self._run(self.client.hmget(f"{self.base}:lines", seqs))
        return [line.decode() for line in found if line is not None]  # None: trimmed meanwhile

    async def clear(self, session: str | None = None) -> int:
        return int(await self._run(self._clear(args=[self.base, session or ""])))

    async def _run(self, call: Awaitable[Any]) -> Any:
        """Await one Redis call; any Redis failure is the store lost (the client has already
        tried once more on a fresh connection: see `mockllm.state.connect`)."""
        from redis.exceptions import RedisError

        try:
            return await call
        except (RedisError, OSError) as error:
            raise self._unavailable(error) from None

    def _unavailable(self, error: BaseException) -> StoreUnavailable:
        return StoreUnavailable(self.url, str(error) or type(error).__name__)
