"""recording/sse.py's NdjsonFrames: Ollama's newline-delimited JSON split into one frame a
line as bytes arrive, in any chunking (a line, or a UTF-8 character, split between reads);
a stream cut inside a line is partial."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mockllm.recording.sse import NdjsonFrames, frames_for

LINES = ['{"message":{"content":"北京"},"done":false}', '{"done":true,"done_reason":"stop"}']
STREAM = ("\n".join(LINES) + "\n").encode()


@given(st.lists(st.integers(0, len(STREAM)), max_size=6))
def test_any_chunking_gives_the_same_lines(cuts: list[int]) -> None:
    frames, seen, start = NdjsonFrames(), [], 0
    for cut in [*sorted(cuts), len(STREAM)]:
        seen += frames.feed(STREAM[start:cut])
        start = cut
    assert seen == [(None, line) for line in LINES] and not frames.partial


def test_a_cut_inside_a_line_is_partial() -> None:
    frames = NdjsonFrames()
    assert frames.feed(STREAM[:60]) == [(None, LINES[0])]
    assert frames.partial


def test_chosen_by_content_type() -> None:
    assert isinstance(frames_for("application/x-ndjson"), NdjsonFrames)
