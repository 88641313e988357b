"""The shared store on Redis: what `--state redis://...` gives every server on that URL
and `--state-prefix` (key layout and TTLs in docs/scale.md).

Each method is one round trip, and whatever writes more than one key does it in one
MULTI/EXEC or script, so a Redis lost mid-request leaves nothing half-written. Every Redis
failure surfaces as `StoreUnavailable`, which the server answers with a 503.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from mockllm.state import StoreUnavailable, connect
from mockllm.state.redis_line import Line

# Attempts and cuts of a session expire `ttl` seconds (--state-ttl) after its last request,
# a stored Responses response `ttl` seconds after it was served. Run-time scenarios and
# their version never expire: a replica must never see them vanish while others serve them.
# docs/scale.md recommends `maxmemory-policy noeviction`: a full Redis refuses the write (an
# honest 503) rather than evict a counter, which would fire a `times` fault again.

# Count one attempt and read what the answer needs, in one atomic step: the attempt, the
# session's cut turns, and the run-time scenarios' version. A replica whose scenarios are
# out of date (ARGV[3] differs; "" skips the check) gets {0, version} and counts nothing.
BEGIN = """
local version = redis.call('GET', KEYS[3]) or '0'
if ARGV[3] ~= '' and version ~= ARGV[3] then return {0, version} end
local attempt = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('EXPIRE', KEYS[1], ARGV[2])
local cuts = redis.call('HGETALL', KEYS[2])
if #cuts > 0 then redis.call('EXPIRE', KEYS[2], ARGV[2]) end
return {attempt, version, cuts}
"""

# The version, and the scenarios only when it is not ARGV[1] (the one this replica knows):
# a replica that is up to date reads a few bytes, not every posted text.
SCENARIOS = """
local version = redis.call('GET', KEYS[1]) or '0'
if version == ARGV[1] then return {version} end
return {version, redis.call('HGETALL', KEYS[2])}
"""

# Record how a turn's delivery was cut (ARGV[3]; "" for a whole one) only if no later
# attempt was counted meanwhile (the attempt is still ARGV[2]): two replicas answering
# attempts of one turn at once must not leave the older attempt's cut behind.
CUT = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then redis.call('HDEL', KEYS[2], ARGV[1]) return 1 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return 1
"""

# Count an attempt, and record how it was cut, in one atomic step: the answer was computed
# for attempt ARGV[4] + 1 with the session's cuts as ARGV[6..] list them (field, value, ...).
# If the turn still had ARGV[4] attempts and the session those cuts, the attempt is counted
# with its cut (ARGV[5]; "" for a whole one). If another request counted meanwhile, the
# attempt is counted all the same (one HINCRBY: exact under any concurrency, never a retry)
# without a cut, and the attempt and the cuts as they now are come back: the caller answers
# that attempt and records its cut with CUT, if it has one. Nothing is written when the
# scenarios' version is not ARGV[3] ("" accepts any): the caller loads them and answers again.
# So a request that fails after this step has written the attempt (and, unless another
# counted meanwhile, its cut), and one that fails before it nothing.
# Reply: {1, attempt} counted with the cut; {0, attempt, cuts} counted without; {-1} not
# counted (the caller reads the version with the scenarios).
COMMIT = """
local version = redis.call('GET', KEYS[3]) or '0'
if ARGV[3] ~= '' and version ~= ARGV[3] then return {-1} end
local before = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local same = before == tonumber(ARGV[4]) and redis.call('HLEN', KEYS[2]) == (#ARGV - 5) / 2
if same then
  for i = 6, #ARGV, 2 do
    if redis.call('HGET', KEYS[2], ARGV[i]) ~= ARGV[i + 1] then same = false; break end
  end
end
local attempt = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('EXPIRE', KEYS[1], ARGV[2])
if not same then return {0, attempt, redis.call('HGETALL', KEYS[2])} end
if ARGV[5] == '' then redis.call('HDEL', KEYS[2], ARGV[1])
else redis.call('HSET', KEYS[2], ARGV[1], ARGV[5]) end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('EXPIRE', KEYS[2], ARGV[2]) end
return {1, attempt}
"""


class Reachable:
    """Any Redis failure (connection, timeout, authentication, a refused command) as
    StoreUnavailable: the store cannot serve, whatever the reason. A class, not a
    generator context manager: it wraps every request's round trip."""

    def __init__(self, url: str) -> None:
        from redis.exceptions import RedisError

        self.url = url
        self.failures = (RedisError, OSError)  # what `lost` takes (`except` it where it is hot)

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: TracebackType | None
    ) -> None:
        if isinstance(error, self.failures):
            raise self.lost(error) from None

    def lost(self, error: BaseException) -> StoreUnavailable:
        """A Redis failure (one of `failures`) as the store unavailable."""
        from redis.exceptions import ResponseError
        from redis.exceptions import TimeoutError as RedisTimeout

        timed_out = isinstance(error, RedisTimeout | TimeoutError)
        refused = isinstance(error, ResponseError)  # Redis's own error reply
        reason = str(error) or type(error).__name__
        return StoreUnavailable(self.url, reason, timed_out, refused)


Cuts = dict[bytes, bytes]  # a session's cuts hash as stored: field -> how it was cut


def cuts_of(cuts: Cuts, scenario: str) -> dict[int, str]:
    """The cut turns of one scenario, from the session's cuts hash."""
    found: dict[int, str] = {}
    for field, how in cuts.items():
        turn_text, _, name = field.decode().partition("\x1f")
        if name == scenario:
            found[int(turn_text)] = how.decode()
    return found


class RedisState:
    """Attempts, cuts, stored responses and run-time scenarios on Redis, one round trip
    each: what `MemoryState` is in one process (serving/redis_store.py makes it a `Store`)."""

    def __init__(self, url: str, prefix: str, ttl: int) -> None:
        self.url = url  # StoreUnavailable redacts it
        self.client: Any = connect(url)
        self.line = Line(self.client)  # what requests send: the count, the cut, responses
        self._reachable = Reachable(url)
        self.prefix, self.ttl = prefix, ttl
        self._begin = self.client.register_script(BEGIN)
        self._read_scenarios = self.client.register_script(SCENARIOS)
        self._cut = self.client.register_script(CUT)
        self._commit = self.client.register_script(COMMIT)
        self._version = f"{prefix}:scenarios:version"
        self._scenarios = f"{prefix}:scenarios"

    def _attempts(self, session: str) -> str:
        return f"{self.prefix}:attempts:{session}"

    def _cuts(self, session: str) -> str:
        return f"{self.prefix}:cuts:{session}"

    def _response(self, response_id: str) -> str:
        return f"{self.prefix}:response:{response_id}"

    async def begin(
        self, session: str, scenario: str, turn: int, version: str
    ) -> tuple[int, Mapping[int, str], str]:
        """(attempt, cut turns of this scenario, scenarios version); attempt 0 (nothing
        counted) when the version is not `version` ("" accepts any)."""
        keys = [self._attempts(session), self._cuts(session), self._version]
        async with self._reachable:
            found = await self._begin(keys, [field_of(scenario, turn), self.ttl, version])
        attempt, current = int(found[0]), found[1].decode()
        if attempt == 0:
            return 0, {}, current
        cuts: dict[int, str] = {}
        pairs = found[2]
        for i in range(0, len(pairs), 2):
            turn_text, _, name = pairs[i].decode().partition("\x1f")
            if name == scenario:
                cuts[int(turn_text)] = pairs[i + 1].decode()
        return attempt, cuts, current

    async def cut(
        self, session: str, scenario: str, turn: int, attempt: int, how: str | None
    ) -> None:
        """Record how `attempt` of a turn was cut (None: it was whole), unless a later
        attempt of that turn was counted meanwhile (then its answer records its own)."""
        keys = [self._attempts(session), self._cuts(session)]
        async with self._reachable:
            await self.line.script(
                self._cut, keys, [field_of(scenario, turn), attempt, how or "", self.ttl]
            )

    async def commit(
        self,
        session: str,
        field: str,
        version: str,
        before: int,
        cuts: Cuts,
        how: str | None,
    ) -> tuple[int, int, Cuts | None]:
        """Count an attempt of a turn (its hash field, `field_of`), and record how it was
        cut (None: whole) in the same write if the turn still had `before` attempts and the
        session the `cuts`: (1, attempt, None). Else the attempt is counted without a cut:
        (0, the attempt counted, the session's cuts now); or nothing is written, (-1, 0,
        None), when `version` is behind."""
        keys = [self._attempts(session), self._cuts(session), self._version]
        args = [field, self.ttl, version, before, how or ""]
        if cuts:  # (field, value, ...)
            args += [x for pair in cuts.items() for x in pair]
        try:  # (`async with self._reachable`, without its two coroutines: every request)
            found = await self.line.script(self._commit, keys, args)
        except self._reachable.failures as error:
            raise self._reachable.lost(error) from None
        done = found[0]  # (Lua's numbers come as integers)
        if done != 0:
            return done, found[1] if done == 1 else 0, None
        pairs = found[2]
        return 0, found[1], {pairs[i]: pairs[i + 1] for i in range(0, len(pairs), 2)}

    async def keep_response(self, response_id: str, data: bytes) -> None:
        async with self._reachable:
            await self.line.call("SET", self._response(response_id), data, "EX", self.ttl)

    async def response(self, response_id: str) -> bytes | None:
        async with self._reachable:
            found: bytes | None = await self.line.call("GET", self._response(response_id))
        return found

    async def add_scenario(self, name: str, text: str) -> bool:
        """Store a run-time scenario under a new version; True if it replaced one. The
        version is unique to this POST, never a counter: a Redis restarted empty would
        count again from 1 and a replica that knew the old 1 would never load the new."""
        async with self._reachable, self.client.pipeline(transaction=True) as pipe:
            pipe.hset(self._scenarios, name, text)
            pipe.set(self._version, uuid.uuid4().hex)
            added, _ = await pipe.execute()
        return int(added) == 0

    async def scenarios(self, known: str) -> tuple[str, dict[str, str] | None]:
        """(version, name → YAML text) of the run-time scenarios, read together; None for
        the texts when the version is still `known`."""
        async with self._reachable:
            found = await self._read_scenarios([self._version, self._scenarios], [known])
        version = found[0].decode()
        if len(found) == 1:
            return version, None
        pairs = found[1]
        named = {pairs[i].decode(): pairs[i + 1].decode() for i in range(0, len(pairs), 2)}
        return version, named

    async def reset(self, session: str | None) -> None:
        """Forget attempts and cuts of one session, or of all and every stored response
        (run-time scenarios stay, as they do in memory)."""
        async with self._reachable:
            if session is not None:
                await self.client.delete(self._attempts(session), self._cuts(session))
                return
            glob = _glob_escape(self.prefix)
            for kind in ("attempts", "cuts", "response"):
                batch = []
                async for key in self.client.scan_iter(match=f"{glob}:{kind}:*", count=1000):
                    batch.append(key)
                    if len(batch) >= 1000:
                        await self.client.unlink(*batch)
                        batch = []
                if batch:
                    await self.client.unlink(*batch)

    async def close(self) -> None:
        await self.line.aclose()
        await self.client.aclose()


def field_of(scenario: str, turn: int) -> str:
    """The hash field of a turn: the turn first, so any scenario name splits back."""
    return f"{turn}\x1f{scenario}"


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)
