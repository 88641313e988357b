"""A small fleet under load against a real redis-server in trouble (issue 24): several
`mockllm serve --state redis://...` processes on loopback, sessions that each meet a
scripted `times: 1` 429 (scenario slow-down) and retry round-robin across the replicas,
while Redis is made full (maxmemory under `noeviction`, the policy docs/scale.md recommends,
or under `volatile-ttl` for comparison), hung (SIGSTOP) or restarted empty. What it counts,
per run, is what the fault-injection tests assert:

- answers (200s and 429s) against log entries: every answer logged once;
- `seq` given twice;
- sessions whose 429 fired other than once (a spent or double-fired fault);
- 503s not in the provider's shape, or for another reason than the store.

    python -m tests.support.fleet_soak --sessions 300 --trouble full-noeviction

prints the figures as JSON (docs/scale.md quotes them) and exits 1 on a problem; under
`volatile-ttl` faults fired twice are counted but are no problem of mockllm's (that policy
evicts the attempt counters: why docs/scale.md recommends `noeviction`). Loopback only; bounded in count
(`--sessions`) and time (each request 20 s at most, each run `--budget` seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support import ServerProcess, running_server
from tests.support.redis_server import RedisServer, redis_server

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
OUTAGE = 2.5  # seconds Redis stays full, or hung (past the 2 s command timeout)
# maxmemory while "full": this many bytes above what Redis holds as the trouble starts. A
# light load may leave Redis hovering at the limit (its clients' buffers shrink when idle
# and give room back), refusing a write only now and then; a negative headroom keeps it full.
HEADROOM = 20_000
SPREAD = 4.0  # seconds over which the sessions start: the trouble falls amid them
TROUBLES = ("none", "full-noeviction", "full-volatile-ttl", "hung", "restart")


@dataclass
class Figures:
    sessions: int = 0
    answered: int = 0  # 200s and 429s the clients got
    logged: int = 0  # entries of those answers in the fleet log
    store_503s: int = 0  # provider-shaped 503s naming the store
    other_failures: list[str] = field(default_factory=list)  # anything else (5xx, resets)
    sessions_not_logged_once: int = 0  # sessions whose entries are not their answers
    reused_seqs: int = 0
    faults_not_once: int = 0  # sessions whose scripted 429 came other than exactly once
    # sessions whose 429 a 503 consumed (a write that timed out, yet ran), said in its entry
    faults_spent_said: int = 0
    unfinished: int = 0  # sessions that never got their 200 within the tries
    log_lost_said: bool = False  # a replica said its log keys were gone (restart)
    seconds: float = 0.0

    def problems(self, exact_faults: bool = True) -> list[str]:
        """What went wrong; `exact_faults=False` leaves out faults fired other than once
        (what `volatile-ttl` does by design: it evicts attempt counters, docs/scale.md)."""
        found = []
        if self.logged != self.answered or self.sessions_not_logged_once:
            found.append(
                f"{self.answered} answers, {self.logged} log entries of them; "
                f"{self.sessions_not_logged_once} sessions not logged once"
            )
        if self.reused_seqs:
            found.append(f"{self.reused_seqs} seqs given twice")
        if self.faults_not_once and exact_faults:
            found.append(f"{self.faults_not_once} sessions whose 429 came other than once")
        if self.other_failures:
            found.append(f"answers other than 200/429/store 503: {self.other_failures[:3]}")
        return found


def _one_session(replicas: list[ServerProcess], index: int, tries: int, start: float) -> list[Any]:
    """A harness: the request sent round-robin until it is answered 200; every status."""
    time.sleep(max(0.0, start - time.monotonic()))
    session = f"soak{index}"
    got: list[Any] = []
    with httpx.Client(timeout=20) as http:
        for attempt in range(tries):
            target = replicas[(index + attempt) % len(replicas)]
            url = f"{target.url}/s/slow-down/{session}/v1/chat/completions"
            try:
                r = http.post(url, json=BODY)
            except httpx.HTTPError as error:
                got.append(f"transport: {type(error).__name__}")
                continue
            if r.status_code == 503:
                try:
                    error_body = r.json()["error"]
                    got.append(503 if "shared state store" in error_body["message"] else r.text)
                except (ValueError, KeyError, TypeError):
                    got.append(f"503 not provider-shaped: {r.text[:80]}")
                time.sleep(0.25)  # an SDK's back-off, short
                continue
            got.append(r.status_code)
            if r.status_code == 200:
                break
    return got


@contextmanager
def fleet(redis: RedisServer, replicas: int, limit: int) -> Iterator[list[ServerProcess]]:
    with ExitStack() as stack:
        args = ("--state", redis.url(), "--state-ttl", "3600", "--log-limit", str(limit))
        yield [stack.enter_context(running_server(*args, "--quiet")) for _ in range(replicas)]


def _trouble(
    redis: RedisServer,
    kind: str,
    stop: threading.Event,
    stops: int,
    outage: float,
    headroom: int,
) -> None:
    """Make Redis full (for `outage` seconds), hung (`stops` times, OUTAGE seconds each) or
    restarted while the sessions run (then heal it)."""
    if kind.startswith("full"):
        used = int(redis.command("INFO", "memory")["used_memory"])
        redis.command("CONFIG", "SET", "maxmemory-policy", kind.removeprefix("full-"))
        redis.command("CONFIG", "SET", "maxmemory", str(used + headroom))
        stop.wait(outage)
        redis.command("CONFIG", "SET", "maxmemory", "0")  # the operator makes room
        return
    stop.wait(0.3)
    if kind == "hung":
        for _ in range(stops):
            os.kill(redis.process.pid, signal.SIGSTOP)
            time.sleep(OUTAGE)  # past the 2 s command timeout: requests see a hung store
            os.kill(redis.process.pid, signal.SIGCONT)
            time.sleep(0.3)
    elif kind == "restart":
        redis.start()


def run(
    sessions: int,
    trouble: str,
    replicas: int = 3,
    tries: int = 16,
    workers: int = 16,
    spread: float = SPREAD,
    stops: int = 2,
    outage: float = OUTAGE,
    headroom: int = HEADROOM,
) -> Figures:
    """The figures of `sessions` sessions started over `spread` seconds on `replicas`
    processes while Redis is in `trouble` (one of TROUBLES)."""
    figures = Figures(sessions=sessions)
    limit = 10 * sessions + 100
    with (
        tempfile.TemporaryDirectory() as tmp,
        redis_server(Path(tmp)) as redis,
        fleet(redis, replicas, limit) as servers,
    ):
        # Warm: scripts loaded and scenarios known on every replica before the trouble.
        for server in servers:
            warm = f"{server.url}/s/hello/warm/v1/chat/completions"
            assert httpx.post(warm, json=BODY, timeout=20).status_code == 200
        stop = threading.Event()
        started = time.monotonic()
        trouble_thread = threading.Thread(
            target=_trouble, args=(redis, trouble, stop, stops, outage, headroom)
        )
        trouble_thread.start()

        def session(i: int) -> list[Any]:
            return _one_session(servers, i, tries, started + spread * i / sessions)

        with ThreadPoolExecutor(workers) as pool:
            outcomes = list(pool.map(session, range(sessions)))
        stop.set()
        trouble_thread.join(10)
        figures.seconds = round(time.monotonic() - started, 1)
        if trouble == "restart":
            lost = servers[0].http.get("/_mockllm/requests", timeout=20)
            figures.log_lost_said = lost.status_code == 503 and "lost its keys" in lost.text
            servers[0].http.delete(
                "/_mockllm/requests", headers={"content-type": "application/json"}
            )
        for server in servers:  # each writes what waited in it, then answers
            _read_log(server)
        entries = _read_log(servers[0])
    by_session = Counter(e["session"] for e in entries if e["response"]["status"] in (200, 429))
    seqs = Counter(e["seq"] for e in entries)
    figures.reused_seqs = sum(n - 1 for n in seqs.values() if n > 1)
    figures.logged = sum(by_session.values())
    said_spent = {
        e["session"]
        for e in entries
        if e["response"]["status"] == 503
        and "attempt 1 of turn 0" in " ".join(e["response"]["notes"])
    }
    restarted = trouble == "restart"  # the log and the counters were lost: said, not checked
    for index, got in enumerate(outcomes):
        answered = sum(1 for s in got if s in (200, 429))
        figures.answered += answered
        if not restarted and by_session[f"soak{index}"] != answered:
            figures.sessions_not_logged_once += 1
        figures.store_503s += got.count(503)
        figures.other_failures += [str(s) for s in got if s not in (200, 429, 503)]
        twice = got.count(429) > 1 or (200 in got and got.count(429) != 1)
        if not restarted and twice:
            if got.count(429) == 0 and f"soak{index}" in said_spent:
                figures.faults_spent_said += 1  # a timed-out write that ran: said in the log
            else:
                figures.faults_not_once += 1  # fired twice, or skipped without a word
        if 200 not in got:
            figures.unfinished += 1
    if restarted:
        figures.logged = figures.answered = 0  # cleared after the restart, by design
    return figures


def _read_log(server: ServerProcess) -> list[Any]:
    deadline = time.monotonic() + 30
    while True:  # entries that waited in a replica during the trouble go in first
        r = server.http.get("/_mockllm/requests", timeout=20)
        if r.status_code == 200 or time.monotonic() > deadline:
            r.raise_for_status()
            entries: list[Any] = r.json()
            return [e for e in entries if e["session"].startswith("soak")]
        time.sleep(0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--trouble", choices=TROUBLES, action="append")
    args = parser.parse_args()
    results = {}
    for trouble in args.trouble or TROUBLES:
        figures = run(min(args.sessions, 5000), trouble, args.replicas)
        exact = trouble != "full-volatile-ttl"  # shown for comparison: not recommended
        results[trouble] = {**vars(figures), "problems": figures.problems(exact)}
        print(json.dumps({trouble: results[trouble]}), flush=True)
    return 1 if any(r["problems"] for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
