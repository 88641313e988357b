"""The neutral record of what the client received (log/delivered.py), from tagged events and
the delivery plan alone: no wire is read. The SDKs' side is tests/e2e/faults/test_delivered_e2e.py."""

from __future__ import annotations

import pytest

from mockllm.core.events import Event
from mockllm.core.faults import stream_delivery
from mockllm.core.scenario import Fault, Reply, ScriptedCall, Truncate
from mockllm.log.delivered import body_holds, delivered, streams_reasoning

REPLY = Reply(
    text="Hello there",
    reasoning="Think",
    tool_calls=(ScriptedCall("a", '{"x":1}'), ScriptedCall("b", '{"y":2}')),
    finish="tool_calls",
)
# As a wire that streams calls in fragments tags them: lifecycle frames carry nothing.
EVENTS = [
    Event(b"head|", "head"),
    Event(b"r1|", "reasoning", None, "Thi"),
    Event(b"r2|", "reasoning", None, "nk"),
    Event(b"t0|", "text"),  # a block's start: nothing carried
    Event(b"t1|", "text", None, "Hello "),
    Event(b"t2|", "text", None, "there"),
    Event(b"c0|", "call:0", None, ""),
    Event(b"a0.1|", "args:0", None, '{"x"'),
    Event(b"a0.2|", "args:0", None, ":1}"),
    Event(b"d0|", "done:0"),
    Event(b"c1|", "call:1", None, '{"y":2}'),  # a call sent whole (as Gemini does)
    Event(b"tail|", "tail"),
    Event(b"done|", "done"),
]


def sent(n: int) -> int:
    return sum(len(e.data) for e in EVENTS[:n])


@pytest.mark.parametrize(
    ("whole", "text", "reasoning", "calls", "where"),
    [
        (0, "", "", [], "head"),
        (2, "", "Thi", [], "reasoning"),
        (5, "Hello ", "Think", [], "text"),
        (7, "Hello there", "Think", [("a", "")], "call:0"),
        (8, "Hello there", "Think", [("a", '{"x"')], "call:0"),
        (9, "Hello there", "Think", [("a", '{"x":1}')], "call:0"),  # its close not yet sent
        (10, "Hello there", "Think", [("a", '{"x":1}')], "call:1"),
        (11, "Hello there", "Think", [("a", '{"x":1}'), ("b", '{"y":2}')], "tail"),
        (12, "Hello there", "Think", [("a", '{"x":1}'), ("b", '{"y":2}')], "tail"),
    ],
)
def test_a_cut_stream_delivers_the_pieces_of_the_events_sent_whole(
    whole: int, text: str, reasoning: str, calls: list[tuple[str, str]], where: str
) -> None:
    got = delivered(REPLY, EVENTS, whole, "truncate", sent(whole), False)
    assert got == {
        "text": text,
        "reasoning": reasoning,
        "tool_calls": [{"name": n, "arguments": a} for n, a in calls],
        "cut": {"by": "truncate", "in": where},
    }


def test_a_frame_cut_short_hands_the_client_nothing() -> None:
    """after_bytes, or a cut inside a whole call's frame: the partial frame is no event."""
    fault = Fault(Truncate(after_bytes=sent(8) + 2))
    plan = stream_delivery(fault, EVENTS, None)
    got = delivered(REPLY, EVENTS, plan.whole, plan.cut, sum(map(len, plan.chunks)), False)
    assert got is not None and got["tool_calls"] == [{"name": "a", "arguments": '{"x"'}]


def test_a_stream_sent_whole_is_no_record() -> None:
    assert delivered(REPLY, EVENTS, None, None, sent(len(EVENTS)), False) is None


def test_a_client_that_hangs_up_mid_plan_is_the_cut() -> None:
    """A paced stream the client left after 5 events: the plan would have sent them all."""
    got = delivered(REPLY, EVENTS, None, None, sent(5), True)
    assert got is not None and got["cut"] == {"by": "disconnect", "in": "text"}
    assert got["text"] == "Hello "


def test_a_body_is_whole_or_nothing() -> None:
    assert delivered(REPLY, None, None, None, 100, False) is None
    assert delivered(REPLY, None, 0, "truncate", 10, False) == {
        "text": "",
        "reasoning": "",
        "tool_calls": [],
        "cut": {"by": "truncate", "in": "body"},
    }
    stalled = delivered(REPLY, None, 0, "stall", 0, False)
    assert stalled is not None and stalled["cut"] == {"by": "stall", "in": "body"}


def test_reasoning_is_readable_only_where_the_wire_sends_it() -> None:
    assert streams_reasoning(EVENTS)
    hidden = [Event(b"enc|", "reasoning"), *EVENTS[3:]]  # Responses without a summary
    assert not streams_reasoning(hidden)
    assert body_holds(b'{"thinking":"Say \\"hi\\"\\n"}', 'Say "hi"\n')
    assert not body_holds(b'{"encrypted_content":"gAAA"}', 'Say "hi"\n')
