"""The verdict contract (`GET /_mockllm/verdict?session=S`), which the server does not serve
yet: the client is checked against a stand-in that answers exactly the agreed shape."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mockllm import Check, Client, LogEntry, Verdict
from mockllm.assertions import assert_clean_verdict

VERDICT = {
    "session": "s1",
    "ok": False,
    "checks": [
        {"name": "calls_answered", "ok": True, "message": "every call answered once"},
        {"name": "no_tool_loop", "ok": False, "message": "get_weather called 9 times in a row"},
    ],
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        found = {"/_mockllm/verdict?session=s1": VERDICT, "/_mockllm/requests?session=s1": []}
        body = json.dumps(found.get(self.path, {"error": {"message": "?"}})).encode()
        self.send_response(200 if self.path in found else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:  # keep the test output clean
        pass


@pytest.fixture
def stand_in() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_client_reads_the_verdict_contract(stand_in: str) -> None:
    verdict = Client(stand_in).verdict("s1")
    assert verdict == Verdict(
        "s1",
        False,
        (
            Check("calls_answered", True, "every call answered once"),
            Check("no_tool_loop", False, "get_weather called 9 times in a row"),
        ),
    )
    assert [c.name for c in verdict.failed] == ["no_tool_loop"]


def test_a_failed_verdict_names_its_checks(stand_in: str) -> None:
    with pytest.raises(AssertionError) as failure:
        Client(stand_in).session("s1").assert_clean_verdict()
    message = str(failure.value)
    assert message.startswith("mockllm: the protocol verdict failed 1 check\n")
    assert "no model requests were logged" in message
    assert message.endswith("  - no_tool_loop: get_weather called 9 times in a row")


def test_a_clean_verdict_passes() -> None:
    assert_clean_verdict(Verdict("s", True, (Check("calls_answered", True, ""),)), [])


def test_records_tolerate_fields_they_do_not_know_and_pending_responses() -> None:
    entry = LogEntry.from_json(
        {"seq": 7, "path": "/v1/chat/completions", "response": None, "future_field": {"x": 1}}
    )
    assert entry.seq == 7 and entry.response is None and entry.tool_calls == ()
    assert entry.conversation == () and entry.raw["future_field"] == {"x": 1}
