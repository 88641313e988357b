"""A reply without a fault goes out through `Responder.whole` (the path of nearly every
request), not through `deliver` and a `Delivery`: the two must send the same ASGI messages
and leave the same log entry, plain and streamed, on every wire's adapter. And a plain
request's log entry sets none of the fields a request rarely sets (they stay the class's
defaults, `LiveEntry`), while an entry that sets one keeps it to itself."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Coroutine
from typing import Any

import pytest

from mockllm.core.faults import Delivery
from mockllm.loading.loader import load_text
from mockllm.log.journal import Journal, LiveEntry
from mockllm.providers import ADAPTERS
from mockllm.serving.responder import Responder
from mockllm.serving.server import build_app

BODY = b'{"id":"x","choices":[]}'


def done(step: Coroutine[Any, Any, None]) -> None:
    with contextlib.suppress(StopIteration):  # nothing here suspends: done in one step
        step.send(None)


def sent_by(adapter_api: str, stream: bool, whole: bool) -> tuple[list[Any], dict[str, Any]]:
    adapter = next(cls() for cls in ADAPTERS.values() if cls().api == adapter_api)
    journal = Journal(10, None, 1 << 20)
    entry = journal.open("/v1/x", [(b"host", b"h")])
    messages: list[Any] = []

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    async def receive() -> dict[str, Any]:
        raise AssertionError("a whole reply waits for nothing")

    responder = Responder(journal, entry, send, receive, adapter, 1.0)
    responder.request_id = "req_fixed"
    if whole:
        done(responder.whole(BODY, stream))
    else:
        done(responder.deliver(Delivery([BODY]), stream))
    shown = entry.to_json()
    for drawn in ("time", "duration_ms", "epoch"):  # a clock, and each journal's own epoch
        shown.pop(drawn)
    return messages, shown


@pytest.mark.parametrize("api", sorted({cls().api for cls in ADAPTERS.values()}))
@pytest.mark.parametrize("stream", [False, True])
def test_a_whole_reply_is_sent_and_logged_as_its_delivery_would_be(api: str, stream: bool) -> None:
    whole = sent_by(api, stream, whole=True)
    delivered = sent_by(api, stream, whole=False)
    assert whole == delivered
    messages, shown = whole
    assert [m["type"] for m in messages] == ["http.response.start", "http.response.body"]
    assert messages[1] == {"type": "http.response.body", "body": BODY, "more_body": False}
    assert shown["response"]["body"] == BODY.decode() and shown["response"]["status"] == 200


SCENARIO = "name: plain\nturns: [{reply: {text: hi}}]\n"


def test_a_plain_requests_entry_leaves_the_rare_fields_to_the_class() -> None:
    app = build_app([load_text(SCENARIO)])
    raw = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode()
    scope = {"type": "http", "method": "POST", "path": "/s/plain/one/v1/chat/completions",
             "raw_path": b"", "query_string": b"", "headers": [(b"content-type", b"application/json")],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8000)}  # fmt: skip

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        return None

    done(app(scope, receive, send))
    (entry,) = app.journal.entries()
    assert entry.status == 200 and entry.closed
    assert vars(entry) == {}  # no fault, error, note, side request or shared use: none set
    other = app.journal.open("/v1/y", [])
    other.error = {"kind": "k", "message": "m"}
    other.note("a note")
    assert (entry.error, entry.notes) == (None, ())
    assert (other.error, other.notes) == ({"kind": "k", "message": "m"}, ("a note",))
    assert LiveEntry.error is None and LiveEntry.notes == ()
