"""What one session, one request and one log entry cost in Redis: the figures behind
docs/scale.md's sizing rule. One `mockllm serve --state redis://...` on a real redis-server
(loopback, no persistence) answers `--sessions` sessions of tests/scenarios/slow-down.yaml
(a `times: 1` 429, then the answer: two requests, two log entries, one attempts hash each)
and as many Responses calls of `hello` (one stored response each), and reads `INFO memory`
and `MEMORY USAGE` (exact: `SAMPLES 0`) of every key:

    python -m tests.support.redis_sizing --sessions 1000

prints the figures as JSON: bytes per session of state (its attempts hash), per stored
Responses response, per log entry (its line and its indexes) and the mean line, each from
`MEMORY USAGE` and, to check them, from `used_memory` before and after.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from tests.support import running_server
from tests.support.redis_server import RedisServer, redis_server

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
RESPONSES = {"model": "m", "input": "hi"}


def _used(redis: RedisServer) -> int:
    return int(redis.command("INFO", "memory")["used_memory"])


def _usage(redis: RedisServer, pattern: str) -> tuple[int, int]:
    """(keys, bytes) of the keys matching `pattern`, by `MEMORY USAGE ... SAMPLES 0`."""
    keys = redis.command("KEYS", pattern)
    return len(keys), sum(int(redis.command("MEMORY", "USAGE", k, "SAMPLES", "0")) for k in keys)


def _batches(redis: RedisServer) -> int:
    """Bytes of the last 1,000 batches' tokens (a batch sent again is stored once): a
    bounded cost of the log, not one per entry."""
    return sum(_usage(redis, f"mockllm:log:{k}")[1] for k in ("batches", "batch-order"))


def _clear(http: httpx.Client, url: str) -> None:
    json_type = {"content-type": "application/json"}  # what the admin routes take (guard.py)
    http.delete(f"{url}/_mockllm/requests", headers=json_type).raise_for_status()


def measure(sessions: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, redis_server(Path(tmp)) as redis:
        args = ("--state", redis.url(), "--state-ttl", "3600", "--log-limit", "100000")
        with running_server(*args, "--quiet") as server, httpx.Client(timeout=20) as http:
            for path in (
                "/s/hello/warm/v1/chat/completions",
                "/s/slow-down/warm/v1/chat/completions",
            ):
                http.post(server.url + path, json=CHAT)  # scripts loaded, scenarios read
            http.post(f"{server.url}/s/hello/warm/v1/responses", json=RESPONSES)
            _clear(http, server.url)
            redis.command("DEL", "mockllm:attempts:warm")
            for key in redis.command("KEYS", "mockllm:response:*"):
                redis.command("DEL", key)
            before = _used(redis)

            def session(i: int) -> list[int]:
                url = f"{server.url}/s/slow-down/size{i}/v1/chat/completions"
                return [http.post(url, json=CHAT).status_code for _ in range(2)]

            with ThreadPoolExecutor(4) as pool:
                statuses = list(pool.map(session, range(sessions)))
            assert all(s == [429, 200] for s in statuses), statuses[:3]
            after_chat = _used(redis)
            state_keys, state_bytes = _usage(redis, "mockllm:attempts:size*")
            batch_bytes = _batches(redis)
            log_keys, log_bytes = _usage(redis, "mockllm:log:*")
            log_bytes -= batch_bytes
            lines = redis.command("HVALS", "mockllm:log:lines")
            entries = len(lines)
            line_bytes = sum(len(line.encode()) for line in lines)
            # used_memory as each kind is deleted (DEL and the log's clearing free at once):
            # what the keys cost with Redis's own overhead (the keyspace, the expiry table)
            settled = _used(redis)
            redis.command("DEL", *redis.command("KEYS", "mockllm:attempts:size*"))
            without_state = _used(redis)
            _clear(http, server.url)
            without_log = _used(redis)

            def responses(i: int) -> int:
                url = f"{server.url}/s/hello/resp{i}/v1/responses"
                return http.post(url, json=RESPONSES).status_code

            with ThreadPoolExecutor(4) as pool:
                assert set(pool.map(responses, range(sessions))) == {200}
            stored_keys = redis.command("KEYS", "mockllm:response:*")
            stored, stored_bytes = _usage(redis, "mockllm:response:*")
            body_bytes = sum(int(redis.command("STRLEN", k)) for k in stored_keys)
            with_responses = _used(redis)
            redis.command("DEL", *stored_keys)
            without_responses = _used(redis)
    return {
        "sessions": sessions,
        "log_entries": entries,
        "state_bytes_per_session": round(state_bytes / state_keys),
        "log_bytes_per_entry": round(log_bytes / entries),
        "log_line_bytes_mean": round(line_bytes / entries),
        "log_index_bytes_per_entry": round((log_bytes - line_bytes) / entries),
        "log_keys": log_keys,
        "log_batch_tokens_bytes": batch_bytes,
        "stored_response_bytes": round(stored_bytes / stored),
        "stored_response_json_bytes": round(body_bytes / stored),
        "used_memory_per_session_state_and_log": round((after_chat - before) / sessions),
        "used_memory_freed_per_session_state": round((settled - without_state) / sessions),
        "used_memory_freed_per_log_entry": round((without_state - without_log) / entries),
        "used_memory_freed_per_stored_response": round(
            (with_responses - without_responses) / stored
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    args = parser.parse_args()
    print(json.dumps(measure(min(args.sessions, 20_000))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
