"""The record of one MCP message both transports write (log/mcp.py), and the stdio
entries a server keeps open until their process says how they ended."""

from __future__ import annotations

from mockllm.log.journal import Journal, entry_json
from mockllm.log.mcp import StdioEntries, answered, asked, failed, unfinished


def test_a_call_is_recorded_when_asked_then_with_its_answer() -> None:
    info = asked("orders", "tools/call", 3, {"name": "lookup_order", "arguments": {"id": "A1"}})
    assert info == {
        "server": "orders",
        "method": "tools/call",
        "id": 3,
        "tool": "lookup_order",
        "arguments": {"id": "A1"},
    }
    answered(info, {"content": [{"type": "text", "text": "shipped"}], "isError": False})
    assert info["result"] == {"text": "shipped", "is_error": False}


def test_a_list_a_read_an_error_and_an_unfinished_call() -> None:
    listed = asked("orders", "tools/list", 1, None)
    answered(listed, {"tools": [{"name": "a"}, {"name": "b"}]})
    assert listed["tools"] == ["a", "b"]
    assert asked("docs", "resources/read", 2, {"uri": "file:///x"})["target"] == "file:///x"
    broken = asked("orders", "tools/call", 4, {"name": "x"})
    failed(broken, -32000, "database is down" + "!" * 1000)
    assert broken["error"]["code"] == -32000 and len(broken["error"]["message"]) == 500
    unfinished(broken, "drop fault: the process exited mid-call")
    unfinished(broken, "cancelled")  # the first reason stays
    assert broken["unfinished"] == "drop fault: the process exited mid-call"


def posted(mcp: dict[str, object], **more: object) -> dict[str, object]:
    return {"session": "s", "scenario": "orders-loop", "request": "{}", "mcp": mcp, **more}


def test_a_stdio_entry_is_numbered_when_it_arrives_and_closed_later() -> None:
    journal, open_entries = Journal(100, None, 1024), StdioEntries()
    call = asked("orders", "tools/call", 2, {"name": "lookup_order", "arguments": {}})
    entry, close = open_entries.take(journal, posted(call, pending=True, seq=99))
    assert not close and entry.seq == 1  # the server numbers it, whatever seq it was sent
    assert entry_json(entry)["response"] is None  # in flight, as over HTTP
    journal.open("/v1/chat/completions", [])  # the model request the harness sends next
    done = {**call, "unfinished": "cancelled before it answered"}
    closed, close = open_entries.take(journal, posted(done, seq=entry.seq))
    assert close and closed is entry and entry.mcp["unfinished"].startswith("cancelled")
    assert entry.status == 200
    again, close = open_entries.take(journal, posted(call, seq=entry.seq))
    assert close and again.seq == 3  # already closed: logged as a new, whole entry


def test_open_stdio_entries_are_bounded() -> None:
    journal, open_entries = Journal(100, None, 1024), StdioEntries(limit=2)
    opened = [
        open_entries.take(journal, posted({"method": "ping"}, pending=True))[0] for _ in range(3)
    ]
    assert opened[0].closed and not opened[1].closed
    assert "never said how this message ended" in opened[0].mcp["unfinished"]
