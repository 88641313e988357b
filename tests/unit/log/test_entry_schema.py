"""The log entry is declared once, in mockllm/log/entry.schema.json: every entry the writer
makes validates against it (a field added to `LiveEntry.to_json` and not to the schema
fails here), and the readers (log/records.py, clients/node/src/records.ts, the viewer's
`Entry` typedef) and docs/http-api.md's field list name exactly its fields. Every
end-to-end test's server log is validated against it too, at teardown (tests/support/__init__.py)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mockllm.core.conversation import Conversation, Message, ToolCall, ToolResult
from mockllm.core.engine import FIXED_CREATED, Resolved
from mockllm.errors import Finding
from mockllm.log import allowances
from mockllm.log.journal import Journal, LiveEntry, entry_json
from mockllm.log.mcp import McpEntry, answered, asked, failed
from mockllm.log.records import LogEntry, LogResponse
from tests.support import ROOT, log_problems
from tests.support.journals import opened

from .test_journal import SCENARIO, SERVED, TOOL

SCHEMA = json.loads((ROOT / "mockllm" / "log" / "entry.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
FIELDS = set(SCHEMA["properties"])
RESPONSE_FIELDS = set(SCHEMA["$defs"]["response"]["properties"])

# Fields the typed readers leave to `raw` (every reader keeps the whole object), each with
# why: a new field must be read, or added here with its reason.
RAW_ONLY = {
    "scripted_turns": "the verdict's own input (turns_served), read from the JSON",
    "request_truncated": "read by the viewer and the transcript from the JSON",
    "allow": "the verdict's waivers, read from the JSON by the judge",
    "allowance": "on a test's allowance record, which every typed reader leaves out",
}
PY_RAW_ONLY = {**RAW_ONLY, "mcp": "MCP messages are judged from the JSON (judge/mcp_checks.py)"}


def served_entry(log: Journal) -> LiveEntry:
    """A served entry with every optional field the writer can give it."""
    entry = opened(log, "t1~run1", "weather")
    entry.api, entry.turn, entry.attempt, entry.stream = "openai-chat", 1, 2, True
    entry.conversation = Conversation(
        "m",
        (
            Message("user", "Paris?", at="messages[0]"),
            Message(
                "assistant",
                "let me see",
                tool_calls=(ToolCall("c0", "get_weather", "{}"),),
                at="messages[1]",
                reasoning="thinking",
            ),
            Message("tool", tool_results=(ToolResult("c0", "18", True, "p"),), at="messages[2]"),
        ),
        (TOOL,),
    )
    entry.violations = (Finding("C1", "bad"),)
    entry.expectation_failures = (Finding("expect.user", "turn 1: no"),)
    entry.served(Resolved(SCENARIO, 0, SERVED, 1, 1, 0, FIXED_CREATED), lambda s, t, i: f"c{i}")
    entry.epoch, entry.shared, entry.why = "0123abcd", ("a", "b"), "matched turn 1"
    entry.allow = {"no_tool_loop": "a loop on purpose"}
    entry.fault = {"kind": "truncate", "detail": "d", "why": "w"}
    entry.note("text dropped")
    entry.status, entry.retry_after, entry.duration_ms = 200, 1.5, 3.25
    log.record_sent(entry, b"data: x\n\n")
    return entry


def cut_entry(log: Journal) -> LiveEntry:
    entry = opened(log, "s4")
    entry.body, entry.status = b'{"model": "m", "messages": []}', 200
    entry.cut_request(4)
    return entry


def side_entry(log: Journal) -> LiveEntry:
    entry = opened(log, "s2")
    entry.side = {"name": "title", "why": "user contains 'title'", "rules": "common"}
    entry.status, entry.error = 429, {"kind": "rate_limit", "message": "slow down"}
    return entry


def mcp_entry(log: Journal) -> LiveEntry:
    entry = log.open_as(McpEntry, "/mcp/s/weather/orders", [])
    info = asked("orders", "tools/call", 1, {"name": "lookup", "arguments": {"id": 1}})
    entry.mcp = {"transport": "streamable-http", **info}  # as serving/mcp.py opens it
    answered(entry.mcp, {"content": [{"type": "text", "text": "ok"}], "isError": False})
    failed(entry.mcp, -32602, "bad")
    entry.status = 200
    return entry


def entries() -> list[dict[str, Any]]:
    log = Journal(100, None, 1000)
    pending = opened(log, "p")
    made = [served_entry(log), side_entry(log), mcp_entry(log), cut_entry(log)]
    made.append(allowances.recorded(log, "s3", {"no_tool_loop": "why"}, "test_x"))
    shown = [entry_json(e) for e in made]
    return [entry_json(pending), *shown]


def test_the_schema_is_a_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_entry_the_writer_makes_is_declared_and_every_declared_field_is_written() -> None:
    made = entries()
    for entry in made:
        VALIDATOR.validate(entry)
    assert set().union(*made) == FIELDS  # no field declared that the writer never writes
    responses = [e["response"] for e in made if e["response"]]
    assert set().union(*responses) == RESPONSE_FIELDS


def test_a_field_the_writer_adds_without_the_schema_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    written = LiveEntry.json_parts
    monkeypatch.setattr(
        LiveEntry, "json_parts", lambda self, conv, part: {**written(self, conv, part), "new": 1}
    )
    with pytest.raises(jsonschema.ValidationError, match="'new' was unexpected"):
        VALIDATOR.validate(entries()[1])


def test_the_python_reader_reads_every_field() -> None:
    read = {f.name for f in dataclasses.fields(LogEntry)} - {"raw"}
    assert read | set(PY_RAW_ONLY) == FIELDS
    assert not read & set(PY_RAW_ONLY)
    assert {f.name for f in dataclasses.fields(LogResponse)} == RESPONSE_FIELDS


def interface(source: str, name: str) -> set[str]:
    """The field names of `export interface NAME { ... }` in TypeScript source."""
    body = source.split(f"export interface {name} {{", 1)[1].split("\n}", 1)[0]
    return set(re.findall(r"^  (\w+)\??:", body, re.M))


def test_the_typescript_reader_types_every_field() -> None:
    source = (ROOT / "clients" / "node" / "src" / "records.ts").read_text()
    assert interface(source, "LogEntry") | set(RAW_ONLY) == FIELDS
    assert interface(source, "LogResponse") == RESPONSE_FIELDS


def typedef(source: str, name: str) -> set[str]:
    """The `@property` names of a JSDoc `@typedef {object} NAME`."""
    block = source.split(f"@typedef {{object}} {name}\n", 1)[1].split("*/", 1)[0]
    return set(re.findall(r"@property \{[^}]*\} \[?(\w+)", block))


def test_the_viewer_types_every_field() -> None:
    source = (ROOT / "mockllm" / "viewer" / "base.js").read_text()
    assert typedef(source, "Entry") == FIELDS
    assert typedef(source, "EntryResponse") == RESPONSE_FIELDS


def test_the_http_api_page_lists_every_field() -> None:
    doc = (ROOT / "docs" / "http-api.md").read_text()
    section = doc.split("## A log entry\n", 1)[1]
    table = section[section.index("| field |") :].split("\n\n", 1)[0]
    rows = re.findall(r"^\| ([^|]+) \|", table, re.M)
    listed = {name for row in rows for name in re.findall(r"`(\w+)`", row)}
    assert listed - {"field"} == FIELDS
    response_row = next(line for line in table.splitlines() if line.startswith("| `response`"))
    assert {f for f in RESPONSE_FIELDS if f"`{f}`" not in response_row} == set()


def test_a_server_log_with_an_undeclared_field_fails_its_teardown(tmp_path: Path) -> None:
    good = entries()[1]
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(good) + "\n" + json.dumps({**good, "seq": 9, "queue_ms": 1}) + "\n")
    assert log_problems(log) == [
        "seq 9: the entry: Additional properties are not allowed ('queue_ms' was unexpected)"
    ]
    log.write_text(json.dumps(good) + "\n")
    assert log_problems(log) == []
