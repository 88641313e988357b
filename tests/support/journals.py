"""Entries opened as a request opens them, for the tests of the log's writers (the ring, the
fleet's log on a stand-in store and on a real Redis)."""

from __future__ import annotations

from mockllm.log.journal import Journal, LiveEntry

HEADERS = [
    (b"content-type", b"application/json"),
    (b"authorization", b"Bearer sk-secret"),
    (b"x-api-key", b"sk-ant-secret"),
    (b"cookie", b"a=b"),
    (b"x-mockllm-session", b"s1"),
]


def opened(log: Journal, session: str, scenario: str = "hello") -> LiveEntry:
    entry = log.open(f"/s/{scenario}/{session}/v1/chat/completions", HEADERS)
    entry.session, entry.scenario = session, scenario
    return entry
