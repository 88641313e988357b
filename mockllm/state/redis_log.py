"""The request log of a fleet on Redis: JSON lines numbered by one gap-free `seq`.

Each entry is stored by one Lua script that takes the next `seq` and writes the line with
its indexes, so every reader sees seqs 1..N with no hole and none out of order, and a
process dying mid-request leaves nothing half-written. Keys, under PREFIX:log (docs/scale.md):

    seq                 the last seq given (INCR)
    ring                sorted set of the seqs kept, oldest trimmed past the limit
    lines               hash seq -> the entry's JSON line
    sessions, scenarios hash seq -> the entry's session / scenario
    session:NAME        sorted set of that session's seqs (likewise scenario:NAME)

Every write renews a TTL (`LOG_TTL`) on the keys it touches, so a prefix nobody serves any
more leaves Redis. Scripts name the index keys themselves: one Redis, not a Cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mockllm.state import StoreUnavailable, redacted

LOG_TTL = 24 * 3600  # seconds a log lives after its last write

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

# ARGV: base, limit, ttl, then (line, session, scenario) per entry; "" = none. A line starts
# with its process's own seq ({"seq": 17, ...}): the script puts the fleet's there.
_APPEND = (
    _FORGET
    + """
local base, limit, ttl = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local given = {}
for i = 4, #ARGV, 3 do
  local line, session, scenario = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local seq = redis.call('INCR', base .. ':seq')
  local comma = string.find(line, ',', 1, true)
  redis.call('HSET', base .. ':lines', seq, '{"seq": ' .. seq .. string.sub(line, comma))
  redis.call('ZADD', base .. ':ring', seq, seq)
  for _, index in ipairs({{'session', session}, {'scenario', scenario}}) do
    if index[2] ~= '' then
      redis.call('HSET', base .. ':' .. index[1] .. 's', seq, index[2])
      local key = base .. ':' .. index[1] .. ':' .. index[2]
      redis.call('ZADD', key, seq, seq)
      redis.call('EXPIRE', key, ttl)
    end
  end
  given[#given + 1] = seq
end
local over = redis.call('ZCARD', base .. ':ring') - limit
if over > 0 then
  for _, seq in ipairs(redis.call('ZRANGE', base .. ':ring', 0, over - 1)) do
    forget(base, seq)
  end
end
for _, key in ipairs({'seq', 'ring', 'lines', 'sessions', 'scenarios'}) do
  redis.call('EXPIRE', base .. ':' .. key, ttl)
end
return given
"""
)

# ARGV: base, since, session, scenario ("" = any). The lines after `since`, in seq order.
_READ = """
local base, since, session, scenario = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local index = base .. ':ring'
if session ~= '' then index = base .. ':session:' .. session
elseif scenario ~= '' then index = base .. ':scenario:' .. scenario end
local seqs = redis.call('ZRANGEBYSCORE', index, '(' .. since, '+inf')
local out = {}
for i = 1, #seqs, 1000 do  -- unpack takes a few thousand values at most
  local chunk = {unpack(seqs, i, math.min(i + 999, #seqs))}
  local lines = redis.call('HMGET', base .. ':lines', unpack(chunk))
  local kinds = chunk
  if session ~= '' and scenario ~= '' then
    kinds = redis.call('HMGET', base .. ':scenarios', unpack(chunk))
  end
  for j, line in ipairs(lines) do
    if line and (kinds == chunk or kinds[j] == scenario) then out[#out + 1] = line end
  end
end
return out
"""

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
        self._append = client.register_script(_APPEND)
        self._read = client.register_script(_READ)
        self._touched = client.register_script(_TOUCHED)
        self._clear = client.register_script(_CLEAR)

    async def append(self, entries: Sequence[tuple[str, str | None, str | None]]) -> list[int]:
        """Store (line, session, scenario) entries in order; the fleet seq each was given."""
        args: list[Any] = [self.base, self.limit, LOG_TTL]
        for line, session, scenario in entries:
            args += [line, session or "", scenario or ""]
        return [int(seq) for seq in await self._run(self._append, args)]

    async def lines(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> list[str]:
        found = await self._run(self._read, [self.base, since, session or "", scenario or ""])
        return [line.decode() for line in found]

    async def touched(self, since: int) -> list[str]:
        return [s.decode() for s in await self._run(self._touched, [self.base, since])]

    async def clear(self, session: str | None = None) -> int:
        return int(await self._run(self._clear, [self.base, session or ""]))

    async def _run(self, script: Any, args: list[Any]) -> Any:
        """Run `script`; any Redis failure is the store lost (the client has already tried
        once more on a fresh connection: see `mockllm.state.connect`)."""
        from redis.exceptions import RedisError

        try:
            return await script(args=args)
        except (RedisError, OSError) as error:
            raise StoreUnavailable(self.url, str(error) or type(error).__name__) from None
