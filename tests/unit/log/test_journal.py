"""`mockllm.log.journal`: the ring, the gap-free seq, filters, `clear`, the body cap, the
JSONL file and an entry's JSON form (tests/e2e/log/test_journal_e2e.py reads the same through the
admin routes of a real server)."""

from __future__ import annotations

import json
from pathlib import Path

from mockllm.core.conversation import Conversation, Message, Tool, ToolCall, ToolResult
from mockllm.core.engine import FIXED_CREATED, Resolved
from mockllm.core.scenario import Reply, Scenario, ScriptedCall, Turn
from mockllm.errors import Finding
from mockllm.log.journal import Journal
from tests.support.journals import opened


def journal(limit: int = 100, path: Path | None = None, body_cap: int = 1000) -> Journal:
    return Journal(limit, str(path) if path else None, body_cap)


def seqs(log: Journal, **filters: object) -> list[int]:
    return [e.seq for e in log.entries(**filters)]


def test_seq_counts_from_one_without_gaps_and_never_repeats_after_clear() -> None:
    log = journal()
    for session in ("a", "b", "a"):
        opened(log, session)
    assert seqs(log) == [1, 2, 3]
    assert log.clear() == 3 and seqs(log) == []
    opened(log, "a")
    assert seqs(log) == [4]


def test_the_ring_keeps_the_last_limit_entries() -> None:
    log = journal(limit=3)
    for _ in range(5):
        opened(log, "a")
    assert seqs(log) == [3, 4, 5]


def test_filters_by_session_scenario_and_since() -> None:
    log = journal()
    for session, scenario in (("a", "hello"), ("b", "hello"), ("a", "loop"), ("a", "hello")):
        opened(log, session, scenario)
    assert seqs(log, session="a") == [1, 3, 4]
    assert seqs(log, scenario="hello") == [1, 2, 4]
    assert seqs(log, session="a", scenario="hello") == [1, 4]
    assert seqs(log, since=2) == [3, 4]
    assert seqs(log, session="a", since=3) == [4]
    assert seqs(log, session="nobody") == []


def test_entries_is_a_snapshot_that_tolerates_new_arrivals() -> None:
    log = journal()
    opened(log, "a")
    found = []
    for entry in log.entries():
        found.append(entry.seq)
        opened(log, "a")  # a request arriving while the log is read
    assert found == [1] and seqs(log) == [1, 2]


def test_clear_one_session_keeps_the_others_in_order() -> None:
    log = journal()
    for session in ("a", "b", "a", "c"):
        opened(log, session)
    assert log.clear("a") == 2
    assert seqs(log) == [2, 4]
    assert log.clear("nobody") == 0 and seqs(log) == [2, 4]


def test_the_body_cap_limits_what_is_kept_not_what_is_counted() -> None:
    log = journal(body_cap=10)
    entry = opened(log, "a")
    for chunk in (b"data: 1234", b"\n\n", b"", b"more"):
        log.record_sent(entry, chunk)
    assert (entry.sent, entry.kept, entry.bytes_sent) == ([b"data: 1234"], 10, 16)
    entry.status = 200
    response = entry.to_json()["response"]
    assert (response["body"], response["bytes_sent"], response["body_truncated"]) == (
        "data: 1234",
        16,
        True,
    )


def test_a_chunk_is_cut_at_the_cap() -> None:
    log = journal(body_cap=5)
    entry = opened(log, "a")
    log.record_sent(entry, b"abc")
    log.record_sent(entry, b"defgh")
    assert entry.sent == [b"abc", b"de"] and entry.kept == 5


def test_close_writes_one_jsonl_line_once_and_the_file_keeps_all(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = journal(limit=1, path=path)
    first, second = opened(log, "a"), opened(log, "b")
    assert path.read_text() == ""  # pending entries are in memory only
    for entry in (first, second, first):
        entry.status = 200
        log.close(entry)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(e["seq"], e["session"]) for e in lines] == [(1, "a"), (2, "b")]
    assert seqs(log) == [2]
    assert first.closed and first.duration_ms is not None and first.duration_ms >= 0
    log.shutdown()
    log.shutdown()  # twice is harmless
    late = opened(log, "c")
    log.close(late)  # after shutdown: kept in memory, not written
    assert len(path.read_text().splitlines()) == 2 and seqs(log) == [3]


def test_a_closed_entry_drops_a_conversation_it_can_parse_again() -> None:
    """Memory: the body is kept anyway, so the parsed history need not outlive the request."""
    log = journal()
    kept, dropped = opened(log, "a"), opened(log, "a")
    conversation = Conversation("m", (Message("user", "Paris?", at="messages[0]"),))
    bodies: list[bytes] = []

    def reparse(body: bytes) -> Conversation:
        bodies.append(body)
        return Conversation("m", (Message("user", body.decode(), at="messages[0]"),))

    for entry in (kept, dropped):
        entry.conversation, entry.body = conversation, b"again"
    dropped.reparse = reparse
    log.close(kept)
    log.close(dropped)
    assert kept.conversation is conversation and dropped.conversation is None
    assert kept.to_json()["conversation"] == [
        {"role": "user", "at": "messages[0]", "text": "Paris?"}
    ]
    assert dropped.to_json()["conversation"] == [
        {"role": "user", "at": "messages[0]", "text": "again"}
    ]
    assert bodies == [b"again"]  # parsed again only when read


def test_the_file_is_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"seq": 0}\n')
    log = journal(path=path)
    log.close(opened(log, "a"))
    log.shutdown()
    assert [json.loads(line)["seq"] for line in path.read_text().splitlines()] == [0, 1]


def test_a_pending_entry_as_json() -> None:
    entry = opened(journal(), "a")
    entry.time = 1735689600.1234
    entry.body = b'{"model":"m"}'
    assert entry.to_json() == {
        "seq": 1,
        "time": "2025-01-01T00:00:00.123Z",
        "session": "a",
        "scenario": "hello",
        "api": None,
        "method": "POST",
        "path": "/s/hello/a/v1/chat/completions",
        "stream": False,
        "turn": None,
        "attempt": None,
        "headers": {  # credentials by name, as a short hash that tells two apart
            "content-type": "application/json",
            "authorization": "[redacted aaee9fd3]",
            "x-api-key": "[redacted 9a36c022]",
            "cookie": "[redacted 98a1e9a1]",
            "x-mockllm-session": "s1",
        },
        "request": {"model": "m"},
        "conversation": None,
        "tools": [],
        "tool_results": [],
        "violations": [],
        "expectation_failures": [],
        "response": None,
        "duration_ms": None,
        "client_disconnected": False,
        "server_error": None,
    }


def test_a_body_that_is_not_json_is_kept_as_text() -> None:
    entry = opened(journal(), "a")
    entry.body = b"{not json \xff"
    assert entry.to_json()["request"] == "{not json \ufffd"


TOOL = Tool("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}})
SERVED = Reply(
    text="",
    tool_calls=(
        ScriptedCall("get_weather", '{"city":"Paris"}'),
        ScriptedCall("get_weather", '{"city":1}'),
        ScriptedCall("get_time", "{}"),
        ScriptedCall("get_weather", "[1]"),
        ScriptedCall("get_weather", '{"city":"Pa'),
    ),
    finish="tool_calls",
)
SCENARIO = Scenario("weather", (Turn(SERVED),))


def test_a_served_entry_as_json_flags_calls_a_harness_must_refuse() -> None:
    log = journal()
    entry = opened(log, "a", "weather")
    entry.api, entry.turn, entry.attempt, entry.stream = "openai-chat", 1, 2, True
    entry.conversation = Conversation(
        "m",
        (
            Message("user", "Paris?", at="messages[0]"),
            Message(
                "assistant", tool_calls=(ToolCall("c0", "get_weather", "{}"),), at="messages[1]"
            ),
            Message("tool", tool_results=(ToolResult("c0", "18 °C"),), at="messages[2]"),
        ),
        (TOOL,),
    )
    entry.violations = (Finding("C1", "bad"),)
    entry.expectation_failures = (Finding("expect.user", "turn 1: no"),)
    entry.served(
        Resolved(SCENARIO, 0, SERVED, 1, 1, 0, FIXED_CREATED), lambda s, t, i: f"call_{t}_{i}"
    )
    entry.fault = {"kind": "delay", "detail": "d", "why": "w"}
    entry.note("text dropped")
    entry.note("second note")
    entry.status, entry.retry_after = 200, 1.5
    log.record_sent(entry, "data: é\n\n".encode())
    out = entry.to_json()
    assert out["conversation"] == [
        {"role": "user", "at": "messages[0]", "text": "Paris?"},
        {
            "role": "assistant",
            "at": "messages[1]",
            "tool_calls": [{"id": "c0", "name": "get_weather", "arguments": "{}"}],
        },
        {
            "role": "tool",
            "at": "messages[2]",
            "tool_results": [{"call_id": "c0", "content": "18 °C"}],
        },
    ]
    assert (out["tools"], out["tool_results"]) == (
        ["get_weather"],
        [{"call_id": "c0", "content": "18 °C"}],
    )
    assert out["violations"] == [{"rule": "C1", "message": "bad"}]
    assert out["expectation_failures"] == [{"rule": "expect.user", "message": "turn 1: no"}]
    assert out["response"] == {
        "status": 200,
        "finish": "tool_calls",
        "misbehaviour": None,  # a reply with calls: nothing wrong with it as a reply
        "text": "",
        "reasoning": None,
        "delivered": None,  # a body sent whole
        "tool_calls": [
            {"id": "call_0_0", "name": "get_weather", "arguments": '{"city":"Paris"}'},
            {
                "id": "call_0_1",
                "name": "get_weather",
                "arguments": '{"city":1}',
                "problem": "arguments break the schema: 1 is not of type 'string'",
            },
            {"id": "call_0_2", "name": "get_time", "arguments": "{}", "problem": "not offered"},
            {
                "id": "call_0_3",
                "name": "get_weather",
                "arguments": "[1]",
                "problem": "arguments are not a JSON object",
            },
            {
                "id": "call_0_4",
                "name": "get_weather",
                "arguments": '{"city":"Pa',
                "problem": "arguments are not valid JSON",
            },
        ],
        "fault": {"kind": "delay", "detail": "d", "why": "w"},
        "error": None,
        "notes": ["text dropped", "second note"],
        "retry_after": 1.5,
        "bytes_sent": 10,  # é is two bytes
        "body": "data: é\n\n",
        "body_truncated": False,
    }


def test_an_error_entry_has_no_reply() -> None:
    entry = opened(journal(), "a")
    entry.status, entry.error = 400, {"kind": "C1", "message": "bad"}
    response = entry.to_json()["response"]
    assert (response["finish"], response["text"], response["tool_calls"], response["error"]) == (
        None,
        None,
        [],
        {"kind": "C1", "message": "bad"},
    )


def test_a_body_over_the_request_cap_is_cut_with_its_size_and_hash_and_the_file_keeps_it(
    tmp_path: Path,
) -> None:
    import hashlib

    log = Journal(100, str(tmp_path / "log.jsonl"), 1000, request_cap=10)
    entry = opened(log, "s1")
    entry.body = b'{"model": "m", "messages": []}'
    log.close(entry)
    shown = entry.to_json()
    assert shown["request_truncated"] == {
        "bytes": 30,
        "kept": 10,
        "sha256": hashlib.sha256(b'{"model": "m", "messages": []}').hexdigest(),
    }
    assert shown["request"] == '{"model": ' and shown["conversation"] is None
    (line,) = (tmp_path / "log.jsonl").read_text().splitlines()
    assert json.loads(line)["request"] == {"model": "m", "messages": []}
    assert "request_truncated" not in json.loads(line)
    log.shutdown()


def test_the_ring_drops_its_oldest_entries_past_its_bytes() -> None:
    log = Journal(100, None, 1000, ring_bytes=3000)
    for i in range(10):
        entry = opened(log, f"s{i}")
        entry.body = b"x" * 1000
        log.close(entry)
    kept = [e.session for e in log.entries()]
    assert kept == ["s8", "s9"]  # 1,000 bytes of body and 100-odd of headers each
    log.clear("s8")
    assert [e.session for e in log.entries()] == ["s9"]
    entry = opened(log, "big")
    entry.body = b"y" * 5000  # alone over the bound: kept, the newest always is
    log.close(entry)
    assert [e.session for e in log.entries()] == ["big"]
