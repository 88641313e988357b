"""Properties of issue 35's bounds in bytes, in-process: whatever bodies arrive, the log
ring stays within --log-bytes (or holds the newest entry alone), every kept body is within
--log-request-cap with the size and SHA-256 of the whole, every entry still writes as
strict JSON; a SizedLru stays within its bytes and entries whatever is put and got."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllm.core import cache
from mockllm.log.journal import Journal, entry_line
from tests.support.hypothesis_profiles import examples

PROPERTY = settings(
    max_examples=examples(200),
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
BODY = st.one_of(
    st.binary(max_size=3000),
    st.integers(0, 5000).map(lambda n: json.dumps({"model": "m", "input": "x" * n}).encode()),
)


@PROPERTY
@given(
    bodies=st.lists(BODY, max_size=30),
    request_cap=st.integers(1, 4000),
    ring_bytes=st.integers(0, 20_000),
    limit=st.integers(1, 40),
)
def test_the_ring_and_each_body_stay_within_their_bytes(
    bodies: list[bytes], request_cap: int, ring_bytes: int, limit: int
) -> None:
    log = Journal(limit, None, 1000, request_cap=request_cap, ring_bytes=ring_bytes)
    for i, body in enumerate(bodies):
        entry = log.open(f"/s/hello/s{i}/v1/responses", [(b"content-type", b"application/json")])
        entry.body, entry.session = body, f"s{i}"
        log.close(entry)
        shown = json.loads(entry_line(entry), parse_constant=_refuse)
        if len(body) > request_cap:
            cut = shown["request_truncated"]
            assert cut == {
                "bytes": len(body),
                "kept": request_cap,
                "sha256": hashlib.sha256(body).hexdigest(),
            }
        else:
            assert "request_truncated" not in shown
    kept = list(log.entries())
    assert len(kept) <= limit
    assert all(len(e.body) <= request_cap for e in kept)
    total = sum(e.weight for e in kept)
    assert total <= ring_bytes or len(kept) == 1
    if bodies:
        assert kept[-1].session == f"s{len(bodies) - 1}"  # the newest is always kept


def _refuse(constant: str) -> Any:
    raise ValueError(constant)


@PROPERTY
@given(
    ops=st.lists(st.tuples(st.text(max_size=5), st.integers(0, 3000)), max_size=60),
    size=st.integers(1, 20),
    budget=st.integers(0, 20_000),
)
def test_a_sized_lru_stays_within_its_bytes_and_entries(
    ops: list[tuple[str, int]], size: int, budget: int
) -> None:
    lru = cache.SizedLru(size)
    try:
        cache.set_cache_bytes(budget)
        for key, cost in ops:
            if lru.get(key) is None:
                lru.put(key, key, cost)
            assert len(lru) <= size and lru.bytes <= budget
            if cost * 4 <= budget:
                assert lru.get(key) == key  # kept, at least until the next put
    finally:
        cache.set_cache_bytes(cache.CACHE_BYTES)
