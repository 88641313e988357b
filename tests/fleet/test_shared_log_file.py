"""The --log file and the fleet log agree after a kill (issue 24): the fleet log is the
record of truth, and a replica killed after its entry reached Redis and before the line
reached its file leaves a note (`FILE.pending-PID`) that the next process on that file
reads, appending the lines the file lacks — through real processes, a real redis-server and
a proxy that holds the store's reply back while the replica is killed."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
import time
from pathlib import Path

import httpx

from tests.support import running_server
from tests.support.redis_proxy import redis_proxy
from tests.support.redis_server import RedisServer

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def seqs(path: Path) -> list[int]:
    return [json.loads(line)["seq"] for line in path.read_text().splitlines()]


def post_killed(url: str) -> None:
    """A request whose server is killed before it answers."""
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(url, json=BODY, timeout=20)


def test_a_replica_killed_between_the_store_and_its_file_is_caught_up(
    redis: RedisServer, tmp_path: Path, session: str
) -> None:
    log = tmp_path / "fleet.jsonl"
    with redis_proxy(redis.port) as proxy:
        with running_server("--state", proxy.url(), "--log", str(log)) as doomed:
            url = f"{doomed.url}/s/hello/{session}/v1/chat/completions"
            assert httpx.post(url, json=BODY, timeout=20).status_code == 200
            proxy.hold_log = True  # the next entry is stored, its reply held back
            sent = threading.Thread(target=post_killed, args=(url,), daemon=True)
            sent.start()
            deadline = time.monotonic() + 10
            while redis.command("HLEN", "mockllm:log:lines") < 2:
                assert time.monotonic() < deadline, "the entry never reached Redis"
                time.sleep(0.02)
            doomed.process.send_signal(signal.SIGKILL)  # before its file has the line
            doomed.process.wait(10)
            proxy.hold_log = False
        assert seqs(log) == [1]  # the fleet log has 2, the file 1: the kill's gap
        assert list(tmp_path.glob("fleet.jsonl.pending-*"))
    with running_server("--state", redis.url(), "--log", str(log)) as next_one:
        url = f"{next_one.url}/s/hello/{session}-next/v1/chat/completions"
        assert httpx.post(url, json=BODY, timeout=20).status_code == 200
        fleet = [e["seq"] for e in next_one.requests()]
        assert fleet == [1, 2, 3]
        assert sorted(seqs(log)) == fleet  # the file caught up with the record of truth
        assert not list(tmp_path.glob("fleet.jsonl.pending-*"))
        assert "1 appended now" in next_one.printed()
