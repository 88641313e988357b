"""core/eventstream.py writes AWS's event-stream framing exactly as botocore's own parser
reads it (both CRCs checked), and its reader for the log never fails on what a cut or a
corruption leaves: a cut is a partial message, never a wrong one."""

from __future__ import annotations

import json
import zlib

import pytest
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer, ParserError
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.core import eventstream
from tests.support.hypothesis_profiles import examples

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


@given(
    kinds=st.lists(st.sampled_from(["messageStart", "contentBlockDelta", "chunk"]), max_size=5),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
)
def test_frames_reads_every_message_back_in_any_chunking(kinds: list[str], cuts: list[int]) -> None:
    """`Frames` (the recorder's reader of a Bedrock stream) splits what `event` wrote, however
    the bytes arrive; a stream cut inside a message leaves it partial."""
    payloads = [json.dumps({"n": i, "k": kind}) for i, kind in enumerate(kinds)]
    data = b"".join(eventstream.event(k, p.encode()) for k, p in zip(kinds, payloads, strict=True))
    frames, got = eventstream.Frames(), []
    at = 0
    for cut in sorted({c for c in cuts if c < len(data)}):
        got += frames.feed(data[at:cut])
        at = cut
    got += frames.feed(data[at:])
    assert got == list(zip(kinds, payloads, strict=True)) and not frames.partial
    if data:
        cut_short = eventstream.Frames()
        assert len(cut_short.feed(data[:-1])) == len(kinds) - 1 and cut_short.partial


@given(st.binary(max_size=300))
def test_frames_never_raises_on_any_bytes(data: bytes) -> None:
    frames = eventstream.Frames()
    for name, payload in frames.feed(data):
        assert isinstance(payload, str) and (name is None or isinstance(name, str))
