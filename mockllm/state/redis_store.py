"""The shared store on Redis: what `--state redis://...` gives every server on that URL
and `--state-prefix` (key layout and TTLs in docs/scale.md).

Each method is one round trip, and whatever writes more than one key does it in one
MULTI/EXEC or script, so a Redis lost mid-request leaves nothing half-written. Every Redis
failure surfaces as `StoreUnavailable`, which the server answers with a 503.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from mockllm.state import StoreUnavailable, connect

DAY = 24 * 3600
SESSION_TTL = DAY  # attempts and cuts of a session: sliding, renewed by each request
RESPONSE_TTL = DAY  # a stored Responses response, from when it was served
SCENARIO_TTL = 7 * DAY  # run-time scenarios and their version, renewed by each POST

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


class RedisStore:
    def __init__(self, url: str, prefix: str) -> None:
        self.url = url  # StoreUnavailable redacts it
        self.client: Any = connect(url)
        self.prefix = prefix
        self._begin = self.client.register_script(BEGIN)
        self._version = f"{prefix}:scenarios:version"
        self._scenarios = f"{prefix}:scenarios"

    def _attempts(self, session: str) -> str:
        return f"{self.prefix}:attempts:{session}"

    def _cuts(self, session: str) -> str:
        return f"{self.prefix}:cuts:{session}"

    def _response(self, response_id: str) -> str:
        return f"{self.prefix}:response:{response_id}"

    @asynccontextmanager
    async def _reachable(self) -> AsyncIterator[None]:
        """Any Redis failure (connection, timeout, authentication, a refused command) as
        StoreUnavailable: the store cannot serve, whatever the reason."""
        from redis.exceptions import RedisError

        try:
            yield
        except (RedisError, OSError) as error:
            raise StoreUnavailable(self.url, str(error) or type(error).__name__) from None

    async def begin(
        self, session: str, scenario: str, turn: int, version: str
    ) -> tuple[int, Mapping[int, str], str]:
        """(attempt, cut turns of this scenario, scenarios version); attempt 0 (nothing
        counted) when the version is not `version` ("" accepts any)."""
        keys = [self._attempts(session), self._cuts(session), self._version]
        async with self._reachable():
            found = await self._begin(keys, [_field(scenario, turn), SESSION_TTL, version])
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

    async def cut(self, session: str, scenario: str, turn: int, how: str | None) -> None:
        key = self._cuts(session)
        async with self._reachable(), self.client.pipeline(transaction=True) as pipe:
            if how is None:
                pipe.hdel(key, _field(scenario, turn))
            else:
                pipe.hset(key, _field(scenario, turn), how)
                pipe.expire(key, SESSION_TTL)
            await pipe.execute()

    async def keep_response(self, response_id: str, data: bytes) -> None:
        async with self._reachable():
            await self.client.set(self._response(response_id), data, ex=RESPONSE_TTL)

    async def response(self, response_id: str) -> bytes | None:
        async with self._reachable():
            found: bytes | None = await self.client.get(self._response(response_id))
        return found

    async def add_scenario(self, name: str, text: str) -> bool:
        """Store a run-time scenario and bump the version; True if it replaced one."""
        async with self._reachable(), self.client.pipeline(transaction=True) as pipe:
            pipe.hset(self._scenarios, name, text)
            pipe.expire(self._scenarios, SCENARIO_TTL)
            pipe.incr(self._version)
            pipe.expire(self._version, SCENARIO_TTL)
            added, *_ = await pipe.execute()
        return int(added) == 0

    async def scenarios(self) -> tuple[str, dict[str, str]]:
        """(version, name → YAML text) of the run-time scenarios, read together."""
        async with self._reachable(), self.client.pipeline(transaction=True) as pipe:
            pipe.get(self._version)
            pipe.hgetall(self._scenarios)
            version, texts = await pipe.execute()
        named = {k.decode(): v.decode() for k, v in texts.items()}
        return (version or b"0").decode(), named

    async def reset(self, session: str | None) -> None:
        """Forget attempts and cuts of one session, or of all and every stored response
        (run-time scenarios stay, as they do in memory)."""
        async with self._reachable():
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
        await self.client.aclose()


def _field(scenario: str, turn: int) -> str:
    """The hash field of a turn: the turn first, so any scenario name splits back."""
    return f"{turn}\x1f{scenario}"


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)
