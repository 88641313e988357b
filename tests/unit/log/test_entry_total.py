"""An entry that cannot be written whole is logged with the failing part replaced and
named, never dropped, and never leaves the log unreadable (issue 24)."""

from __future__ import annotations

import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar, cast

from mockllm.errors import Finding
from mockllm.log.journal import Journal, LiveEntry, entry_json, entry_line

T = TypeVar("T")


class Unwritable(Finding):
    """A finding whose JSON form fails, as a bug in a part of the entry would."""

    def to_json(self) -> dict[str, Any]:
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")


class Infinite(Finding):
    def to_json(self) -> dict[str, Any]:
        return {"rule": "x", "value": float("inf")}  # JSON cannot hold it


def closed(log: Journal, finding: Finding) -> LiveEntry:
    entry = log.open("/s/hello/s1/v1/chat/completions", [(b"content-type", b"application/json")])
    entry.session, entry.scenario, entry.body = "s1", "hello", b'{"model": "m"}'
    entry.violations = (finding,)
    entry.status = 400
    log.close(entry)
    return entry


def done(work: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never awaits (the in-memory log's reads of few entries)."""
    try:
        work.send(None)
    except StopIteration as stop:
        return cast(T, stop.value)
    raise AssertionError("it awaited")


def log_first(log: Journal) -> LiveEntry:
    return next(iter(log.entries()))


def test_a_part_that_fails_is_replaced_and_named_and_the_rest_is_kept(tmp_path: Path) -> None:
    file = tmp_path / "log.jsonl"
    log = Journal(10, str(file), 1000)
    for finding in (Unwritable("x", "y"), Infinite("x", "y")):
        entry = closed(log, finding)
        shown = json.loads(entry_line(entry))
        assert shown["violations"] == []
        assert shown["request"] == {"model": "m"} and shown["response"]["status"] == 400
        assert "the log could not write violations" in shown["server_error"]
    assert "the log could not write violations" in entry_json(log_first(log))["server_error"]
    lines = [json.loads(line) for line in file.read_text().splitlines()]
    assert [e["seq"] for e in lines] == [1, 2]  # both in the file: none dropped
    text = done(log.read_text())
    assert [e["seq"] for e in json.loads(text)] == [1, 2]
    assert len(done(log.read_json())) == 2
    log.shutdown()
