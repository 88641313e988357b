"""`mockllm.core.faults`: the fault transforms as pure functions, each branch with its exact
output (tests/e2e/faults/test_faults_e2e.py checks what the real SDKs make of the same faults)."""

from __future__ import annotations

from typing import get_args

import pytest

from mockllm.core.events import Event
from mockllm.core.faults import (
    Delivery,
    answer_kind,
    body_delivery,
    counts_events,
    first_byte_ms,
    stream_delivery,
)
from mockllm.core.scenario import (
    Delay,
    Disconnect,
    Fault,
    HttpFault,
    Misbehave,
    Part,
    Reply,
    ScriptedCall,
    Stall,
    StreamError,
    Truncate,
)

# A stream tagged as the adapters tag theirs: call 0 has three argument fragments, call 1 one.
EVENTS = [
    Event(b"head|", "head"),
    Event(b"text|", "text"),
    Event(b"call0|", "call:0"),
    Event(b"a0.1|", "args:0"),
    Event(b"a0.2|", "args:0"),
    Event(b"a0.3|", "args:0"),
    Event(b"done0|", "done:0"),
    Event(b"call1|", "call:1"),
    Event(b"a1.1|", "args:1"),
    Event(b"done1|", "done:1"),
    Event(b"tail|", "tail"),
    Event(b"[DONE]", "done"),
]
FRAMES = [e.data for e in EVENTS]


def error_frames(sent: int) -> list[bytes]:
    """What an adapter's `stream_error_events` returns: it is told how many events went out."""
    return [b"error after %d|" % sent]


def stream(fault: Fault | None, events: list[Event] = EVENTS) -> Delivery:
    return stream_delivery(fault, events, error_frames)


# --- stream_delivery ---------------------------------------------------------------------------


def test_no_fault_sends_every_frame_at_once() -> None:
    delivery = stream_delivery(None, EVENTS, None)
    assert delivery == Delivery(FRAMES, "complete", 0, 0)
    assert delivery.paced is False


def test_stall_sends_nothing_and_is_paced() -> None:
    delivery = stream(Fault(Stall()))
    assert delivery == Delivery([], "stall", whole=0, cut="stall")
    assert delivery.paced is True  # the app must hold the connection, not send one batch


def test_stream_error_half_way_by_default() -> None:
    assert stream(Fault(StreamError())) == Delivery(
        [*FRAMES[:6], b"error after 6|"], "complete", whole=6, cut="stream_error"
    )


@pytest.mark.parametrize(("after", "sent"), [(0, 0), (3, 3), (12, 12), (99, 12)])
def test_stream_error_after_n_events_is_capped_at_the_stream(after: int, sent: int) -> None:
    delivery = stream(Fault(StreamError(after_events=after)))
    assert delivery.chunks == [*FRAMES[:sent], b"error after %d|" % sent]
    assert delivery.ending == "complete"  # the error frame ends the stream cleanly


def test_stream_error_without_error_frames_leaves_the_stream_whole() -> None:
    """The app always passes error frames with a stream_error; without them there is
    nothing to send in their place."""
    assert stream_delivery(Fault(StreamError()), EVENTS, None) == Delivery(FRAMES)


@pytest.mark.parametrize("disconnect", ["close", "reset"])
def test_truncate_after_bytes_cuts_the_joined_stream_into_one_chunk(
    disconnect: Disconnect,
) -> None:
    fault = Fault(Truncate(after_bytes=13, disconnect=disconnect))
    # Two frames whole; the client gets nothing of the one cut short.
    assert stream(fault) == Delivery([b"head|text|cal"], disconnect, whole=2, cut="truncate")


def test_truncate_after_events() -> None:
    assert stream(Fault(Truncate(after_events=3))) == Delivery(
        [b"head|", b"text|", b"call0|"], "reset", whole=3, cut="truncate"
    )


def test_truncate_inside_call_stops_after_the_first_half_of_its_fragments() -> None:
    """Call 0 has three fragments: its start and the first one go out."""
    assert stream(Fault(Truncate(call=0))).chunks == [
        b"head|",
        b"text|",
        b"call0|",
        b"a0.1|",
    ]


def test_truncate_inside_call_with_four_fragments_sends_two() -> None:
    events = [
        Event(b"call0|", "call:0"),
        *(Event(b"a0.%d|" % i, "args:0") for i in range(1, 5)),
        Event(b"[DONE]", "done"),
    ]
    assert stream(Fault(Truncate(call=0)), events).chunks == [
        b"call0|",
        b"a0.1|",
        b"a0.2|",
    ]


def test_truncate_inside_a_call_with_one_fragment_stops_after_its_start() -> None:
    assert stream(Fault(Truncate(call=1))).chunks == FRAMES[:8]
    assert FRAMES[7] == b"call1|"


def test_truncate_inside_a_call_the_stream_lacks_stops_half_way() -> None:
    assert stream(Fault(Truncate(call=5))).chunks == FRAMES[:6]


def test_chaos_truncate_cuts_inside_call_0_else_half_way() -> None:
    """Chaos's `Truncate()` names no place: call 0's arguments when there is a call."""
    assert Truncate().inside == 0
    assert stream(Fault(Truncate())).chunks == FRAMES[:4]
    text_only = [Event(b"head|", "head"), *(Event(b"t%d|" % i, "text") for i in range(5))]
    assert stream(Fault(Truncate()), text_only).chunks == [b"head|", b"t0|", b"t1|"]


def test_delay_paces_a_complete_stream() -> None:
    fault = Fault(delay=Delay(first_byte_ms=250, between_chunks_ms=20))
    delivery = stream(fault)
    assert delivery == Delivery(FRAMES, "complete", first_byte_ms=250, between_ms=20)
    assert delivery.paced is True


def test_first_byte_delay_alone_needs_no_pacing() -> None:
    delivery = stream(Fault(delay=Delay(first_byte_ms=250)))
    assert delivery == Delivery(FRAMES, "complete", first_byte_ms=250)
    assert delivery.paced is False


def test_delay_combines_with_a_cut() -> None:
    fault = Fault(Truncate(after_events=1, disconnect="close"), delay=Delay(5, 7))
    assert stream(fault) == Delivery([b"head|"], "close", 5, 7, whole=1, cut="truncate")


def test_an_http_fault_leaves_the_stream_whole() -> None:
    """HTTP faults are answered before any rendering; the transform has nothing to do."""
    assert stream(Fault(HttpFault(429))) == Delivery(FRAMES)


# --- body_delivery -----------------------------------------------------------------------------

ARGUMENTS = '{"city":"Paris"}'
OPENAI_BODY = b'{"tool_calls":[{"arguments":"{\\"city\\":\\"Paris\\"}"}]}'
ANTHROPIC_BODY = b'{"content":[{"type":"tool_use","input":{"city":"Paris"}}]}'
CALLING = Reply(tool_calls=(ScriptedCall("get_weather", ARGUMENTS),), finish="tool_calls")


def test_body_without_fault_is_one_chunk() -> None:
    assert body_delivery(None, OPENAI_BODY, CALLING) == Delivery([OPENAI_BODY])


def test_body_stall() -> None:
    fault = Fault(Stall(), delay=Delay(first_byte_ms=3))
    assert body_delivery(fault, OPENAI_BODY, CALLING) == Delivery([], "stall", 3, 0, 0, "stall")


def test_body_after_bytes() -> None:
    fault = Fault(Truncate(after_bytes=10, disconnect="close"))
    assert body_delivery(fault, OPENAI_BODY, CALLING) == Delivery(
        [b'{"tool_cal'], "close", whole=0, cut="truncate"
    )


@pytest.mark.parametrize(
    ("after", "events", "cut"),
    [
        (1, 4, 13),  # the same fraction of the body (53 bytes) as of the stream
        (3, 4, 39),
        (9, 4, 53),  # past the end of the stream: the whole body, still without a clean end
        (2, 0, 26),  # no event count known: half way
    ],
)
def test_body_after_events_cuts_at_the_same_fraction(after: int, events: int, cut: int) -> None:
    assert len(OPENAI_BODY) == 53
    fault = Fault(Truncate(after_events=after))
    whole, by = (None, None) if cut == len(OPENAI_BODY) else (0, "truncate")
    assert body_delivery(fault, OPENAI_BODY, CALLING, events) == Delivery(
        [OPENAI_BODY[:cut]], "reset", whole=whole, cut=by
    )


def test_body_inside_arguments_as_an_escaped_string() -> None:
    """OpenAI: the arguments are a JSON string in the body; the cut is in its middle."""
    fault = Fault(Truncate(call=0))
    assert body_delivery(fault, OPENAI_BODY, CALLING).chunks == [
        b'{"tool_calls":[{"arguments":"{\\"city\\":'
    ]


def test_body_inside_arguments_as_an_object() -> None:
    """Anthropic: the arguments are the `input` object; the cut is in its middle."""
    fault = Fault(Truncate(call=0))
    assert body_delivery(fault, ANTHROPIC_BODY, CALLING).chunks == [
        b'{"content":[{"type":"tool_use","input":{"city":'
    ]


def test_body_inside_arguments_that_are_not_json() -> None:
    reply = Reply(tool_calls=(ScriptedCall("f", "not json"),))
    body = b'{"arguments":"not json"}'
    cut = body_delivery(Fault(Truncate(call=0)), body, reply).chunks
    assert cut == [b'{"arguments":"not ']


def test_body_inside_arguments_not_found_or_absent_cuts_half_way() -> None:
    fault = Fault(Truncate(call=0))
    other = b'{"tool_calls":[{"arguments":"{\\"city\\":\\"Lyon\\"}"}]}'
    assert body_delivery(fault, other, CALLING).chunks == [other[: len(other) // 2]]
    assert body_delivery(Fault(Truncate(call=1)), OPENAI_BODY, CALLING).chunks == [OPENAI_BODY[:26]]
    assert body_delivery(Fault(Truncate()), b"0123456789", Reply()).chunks == [b"01234"]


def test_body_inside_the_second_of_two_calls_with_equal_arguments() -> None:
    twice = Reply(tool_calls=(ScriptedCall("a", ARGUMENTS), ScriptedCall("b", ARGUMENTS)))
    body = b'[{"input":{"city":"Paris"}},{"input":{"city":"Paris"}}]'
    (cut,) = body_delivery(Fault(Truncate(call=1)), body, twice).chunks
    assert cut == b'[{"input":{"city":"Paris"}},{"input":{"city":'


@pytest.mark.parametrize(
    "fault",
    [
        Fault(HttpFault(500)),
        Fault(StreamError()),
        Fault(delay=Delay(first_byte_ms=1, between_chunks_ms=2)),
    ],
    ids=["http", "stream_error", "delay"],
)
def test_body_parts_without_a_cut_send_it_whole(fault: Fault) -> None:
    """http and stream_error are answered as HTTP errors by the app before this."""
    delivery = body_delivery(fault, OPENAI_BODY, CALLING)
    assert delivery.chunks == [OPENAI_BODY] and delivery.ending == "complete"
    assert (delivery.first_byte_ms, delivery.between_ms) == ((1, 2) if fault.delay else (0, 0))


# --- the questions the exchange asks of a fault ------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "streamed", "not_streamed"),
    [
        (None, "stream", "body"),
        (Fault(HttpFault(429)), "http_error", "http_error"),
        (Fault(StreamError()), "stream", "stream_error"),
        (Fault(Truncate(after_events=1)), "stream", "body"),
        (Fault(Stall()), "stream", "body"),
    ],
    ids=["none", "http", "stream_error", "truncate", "stall"],
)
def test_answer_kind(fault: Fault | None, streamed: str, not_streamed: str) -> None:
    assert (answer_kind(fault, True), answer_kind(fault, False)) == (streamed, not_streamed)


def test_first_byte_ms() -> None:
    assert first_byte_ms(None) == 0
    assert first_byte_ms(Fault(Stall())) == 0
    assert first_byte_ms(Fault(delay=Delay(first_byte_ms=250, between_chunks_ms=9))) == 250


def test_counts_events_only_for_a_cut_after_events() -> None:
    assert counts_events(Fault(Truncate(after_events=2))) is True
    for fault in (None, Fault(Truncate(after_bytes=2)), Fault(Truncate())):
        assert counts_events(fault) is False


# --- the fault type ----------------------------------------------------------------------------

PARTS = {HttpFault(503): "http", Stall(): "stall", StreamError(): "stream_error"}
PARTS |= {Truncate(after_bytes=3, disconnect="close"): "truncate", Misbehave("empty"): "empty"}


def test_a_fault_holds_one_part_of_each_kind_the_union_names() -> None:
    """A part added to `Part` without a kind here fails (mypy's assert_never, in the code)."""
    assert {type(p) for p in PARTS} == set(get_args(Part))


@pytest.mark.parametrize(("part", "kind"), [*PARTS.items(), (None, "delay")])
def test_each_part_names_its_kind_and_says_what_the_client_gets(
    part: Part | None, kind: str
) -> None:
    fault = Fault(part, delay=Delay(first_byte_ms=5))
    # A misbehaving reply is delivered whole: it cuts nothing.
    assert (fault.kind, fault.cuts) == (kind, part is not None and kind != "empty")
    assert (
        fault.describe()
        == {
            "http": "HTTP 503",
            "stall": "headers, then nothing",
            "stream_error": "error event after half the events",
            "truncate": "cut after 3 bytes, then close",
            "empty": "an empty reply instead of the reply",
            "delay": "delay Delay(first_byte_ms=5, between_chunks_ms=0)",
        }[kind]
    )
