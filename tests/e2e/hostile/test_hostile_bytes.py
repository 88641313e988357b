"""Issue 35's bounds in bytes and admin numbers, through a real `mockllm serve`: a request
body over --log-request-cap kept cut with its size and SHA-256, the ring bounded by
--log-bytes, the log read streamed, the caches keyed by schemas bounded by --cache-bytes,
and admin query numbers of any length a clean 400 with no traceback."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllm.core import cache
from tests.e2e.hostile.test_hostile_requests import strict
from tests.support import ServerProcess, running_server
from tests.support.hypothesis_profiles import examples

CHAT = "v1/chat/completions"
KB = 1024


@pytest.fixture(scope="module")
def small_log() -> Iterator[ServerProcess]:
    with running_server(
        "--log-request-cap", "64KB", "--log-bytes", "1MB", "--cache-bytes", "1MB"
    ) as s:
        yield s


def chat(server: ServerProcess, session: str, text: str, **more: Any) -> httpx.Response:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **more}
    return httpx.post(f"{server.url}/s/hello/{session}/{CHAT}", json=body, timeout=30)


def rss_mb(server: ServerProcess) -> int:
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    (line,) = [line for line in status.splitlines() if line.startswith("VmRSS")]
    return int(line.split()[1]) // 1024


def test_a_body_over_the_request_cap_is_kept_cut_with_its_size_and_hash(
    small_log: ServerProcess, session: str
) -> None:
    body = json.dumps(
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "x" * 200_000}]}
    ).encode()
    r = httpx.post(
        f"{small_log.url}/s/hello/{session}/{CHAT}",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 200
    (entry,) = small_log.requests(session=session)
    cut = entry["request_truncated"]
    assert cut == {"bytes": len(body), "kept": 64 * KB, "sha256": hashlib.sha256(body).hexdigest()}
    assert entry["request"] == body[: 64 * KB].decode()
    assert entry["conversation"] is None and entry["response"]["status"] == 200
    # the --log file, written as the entry closed, keeps the body whole
    lines = [json.loads(line) for line in small_log.log_file.read_text().splitlines()]
    (whole,) = [e for e in lines if e["session"] == session]
    assert "request_truncated" not in whole and whole["request"]["messages"][0]["content"]
    # the transcript says so too
    text = small_log.http.get("/_mockllm/transcript", params={"session": session}).text
    assert f"request cut to 65536 of {len(body)} bytes in the log" in text


def test_a_small_body_is_kept_whole(small_log: ServerProcess, session: str) -> None:
    assert chat(small_log, session, "hi").status_code == 200
    (entry,) = small_log.requests(session=session)
    assert "request_truncated" not in entry
    assert entry["request"]["messages"][0]["content"] == "hi"


def test_the_ring_keeps_at_most_log_bytes(small_log: ServerProcess, session: str) -> None:
    """Ten entries of 60 KB each (under the request cap) in a 1 MB ring, after what the
    other tests logged: the oldest go, the newest stay."""
    for i in range(25):
        assert chat(small_log, session, f"{i} " + "y" * 60_000).status_code == 200
    kept = small_log.requests(session=session)
    assert 5 <= len(kept) < 25
    assert kept[-1]["request"]["messages"][0]["content"].startswith("24 ")
    total = sum(len(json.dumps(e["request"])) for e in small_log.requests())
    assert total <= 1100 * KB


def test_the_log_read_is_streamed(small_log: ServerProcess, session: str) -> None:
    for i in range(3):
        chat(small_log, session, str(i))
    with httpx.stream("GET", f"{small_log.url}/_mockllm/requests") as r:
        assert r.headers.get("transfer-encoding") == "chunked"
        assert "content-length" not in r.headers
        entries = strict(r.read().decode())
    assert [e["seq"] for e in entries] == sorted(e["seq"] for e in entries)


def test_distinct_big_schemas_stay_within_cache_bytes(
    small_log: ServerProcess, session: str
) -> None:
    """30 distinct schemas of 400 KB: each held whole in several caches before (about
    40 MB more, and more with every one); with --cache-bytes 1MB none is kept."""
    before = rss_mb(small_log)
    for i in range(30):
        schema = {
            "type": "object",
            "properties": {"a": {"type": "string", "description": f"{i} " + "d" * 400_000}},
        }
        tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
        assert chat(small_log, session, "hi", tools=tools).status_code == 200
    assert rss_mb(small_log) - before < 25


def test_a_sized_cache_is_bounded_by_bytes_and_entries() -> None:
    @cache.sized_cache(100)
    def doubled(text: str) -> str:
        return text * 2

    try:
        cache.set_cache_bytes(30_000)
        for i in range(50):
            assert doubled(str(i) * 1000) == str(i) * 2000
        assert doubled.cache.bytes <= 30_000 and len(doubled.cache) <= 10  # type: ignore[attr-defined]
        doubled("z" * 10_000)  # over a quarter of the bound: computed, not kept
        assert doubled.cache.get(("z" * 10_000,)) is None  # type: ignore[attr-defined]
        for i in range(200):
            doubled(str(i))
        assert len(doubled.cache) == 100  # type: ignore[attr-defined]
    finally:
        cache.set_cache_bytes(cache.CACHE_BYTES)


LONG = "9" * 5000


@pytest.mark.parametrize(
    "query",
    [
        f"/_mockllm/requests?since={LONG}",
        f"/_mockllm/verdicts?since={LONG}",
        f"/_mockllm/verdicts?max_calls={LONG}",
        f"/_mockllm/verdict?max_calls={LONG}",
        "/_mockllm/requests?since=%C2%B2",  # a digit to str.isdigit, not to int()
        "/_mockllm/requests?session=" + "s" * 9000,
    ],
)
def test_admin_numbers_of_any_length_are_a_clean_400(server: ServerProcess, query: str) -> None:
    r = server.http.get(query)
    assert r.status_code == 400, r.text
    assert set(r.json()) == {"error"} and r.json()["error"]["message"]
    assert "Traceback" not in server.console.read_text()


ADMIN_NUMBERS = st.one_of(
    st.integers(min_value=0, max_value=10**30).map(str),
    st.text(max_size=30),
    st.text(alphabet="0123456789", min_size=4290, max_size=4400),
    st.text(alphabet=st.characters(categories=["Nd", "No"]), max_size=20),
)


def test_admin_query_parameters_never_break_the_admin(server: ServerProcess) -> None:
    @settings(
        max_examples=examples(60),
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        route=st.sampled_from(["requests", "verdicts", "verdict", "transcript", "calls"]),
        name=st.sampled_from(["since", "max_calls", "session", "scenario", "full", "name"]),
        value=ADMIN_NUMBERS,
    )
    def check(route: str, name: str, value: str) -> None:
        r = server.http.get(f"/_mockllm/{route}", params={name: value})
        assert r.status_code < 500, (route, name, value[:40], r.text[:200])
        if r.status_code >= 400:
            assert r.json()["error"]["message"]

    check()
    assert "Traceback" not in server.console.read_text()
    assert server.http.get("/_mockllm/health").json()["status"] == "ok"
