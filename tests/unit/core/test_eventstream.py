"""core/eventstream.py writes AWS's event-stream framing exactly as botocore's own parser
reads it (both CRCs checked), and its reader for the log never fails on what a cut or a
corruption leaves: a cut is a partial message, never a wrong one."""

from __future__ import annotations

import zlib

import pytest
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer, ParserError
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.core import eventstream

from ...hypothesis_profiles import examples

names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=20)
headers = st.lists(st.tuples(names, st.text(max_size=50)), max_size=4, unique_by=lambda h: h[0])
payloads = st.binary(max_size=300)


def parsed(data: bytes) -> list[tuple[dict[str, object], bytes]]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(m.headers, m.payload) for m in buffer]


@settings(max_examples=examples(200))
@given(st.lists(st.tuples(headers, payloads), min_size=1, max_size=4))
def test_botocore_reads_back_what_was_written(
    messages: list[tuple[list[tuple[str, str]], bytes]],
) -> None:
    data = b"".join(eventstream.message(tuple(h), p) for h, p in messages)
    assert parsed(data) == [(dict(h), p) for h, p in messages]


@settings(max_examples=examples(200))
@given(st.lists(payloads, min_size=1, max_size=4), st.data())
def test_a_cut_is_a_partial_message_and_a_flipped_byte_a_crc_error(
    bodies: list[bytes], data: st.DataObject
) -> None:
    frames = [eventstream.event("contentBlockDelta", b) for b in bodies]
    whole = b"".join(frames)
    ends = {sum(map(len, frames[:n])) for n in range(len(frames) + 1)}  # message boundaries
    cut = data.draw(st.integers(0, len(whole) - 1))
    # botocore yields the complete messages before the cut and keeps the rest waiting.
    complete = parsed(whole[:cut])
    assert [p for _, p in complete] == bodies[: len(complete)]
    text = eventstream.readable(whole[:cut])
    assert text.count("contentBlockDelta: ") == len(complete)
    assert text.endswith("the stream was cut]") == (cut not in ends)
    at = data.draw(st.integers(0, len(whole) - 1))
    corrupt = bytearray(whole)
    corrupt[at] ^= 0xFF
    with pytest.raises(ParserError):  # ChecksumMismatch, or a length botocore refuses
        parsed(bytes(corrupt))
    eventstream.readable(bytes(corrupt))  # the log's reader: never an exception


def test_the_crc_is_the_standard_one() -> None:
    data = eventstream.event("messageStart", b'{"role":"assistant"}')
    assert int.from_bytes(data[8:12], "big") == zlib.crc32(data[:8])
    assert int.from_bytes(data[-4:], "big") == zlib.crc32(data[:-4])
    with pytest.raises(ChecksumMismatch):
        parsed(data[:-1] + bytes([data[-1] ^ 1]))


def test_an_exception_frame_and_a_chunk_read_as_text() -> None:
    chunk = eventstream.event("chunk", b'{"bytes":"eyJ0eXBlIjoicGluZyJ9"}')
    error = eventstream.exception("throttlingException", b'{"message":"slow down"}')
    assert eventstream.readable(chunk + error) == (
        'chunk: {"type":"ping"}\nthrottlingException: {"message":"slow down"}'
    )
