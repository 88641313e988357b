"""Server-sent events split into (event name, data) frames as bytes arrive, in any chunking;
and the splitter of a stream by its content type (Bedrock's is AWS's binary event stream,
Ollama's newline-delimited JSON)."""

from __future__ import annotations

import codecs

from mockllm.core import eventstream


def frames_for(content_type: str) -> SseFrames | NdjsonFrames | eventstream.Frames | None:
    """The splitter of a streamed answer of this content type; None: not a stream."""
    if "text/event-stream" in content_type:
        return SseFrames()
    if "application/x-ndjson" in content_type:
        return NdjsonFrames()
    if eventstream.CONTENT_TYPE.decode() in content_type:
        return eventstream.Frames()
    return None


class NdjsonFrames:
    """Newline-delimited JSON (Ollama's streams): each complete line is one frame, with no
    event name; a line not yet ended waits for the next chunk."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""

    def feed(self, chunk: bytes) -> list[tuple[str | None, str]]:
        self._buffer += self._decoder.decode(chunk)
        *complete, self._buffer = self._buffer.split("\n")
        return [(None, line) for line in complete if line.strip()]

    @property
    def partial(self) -> bool:
        """Whether the bytes so far end inside a line (a stream cut mid-object)."""
        return bool(self._buffer.strip())


class SseFrames:
    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""

    def feed(self, chunk: bytes) -> list[tuple[str | None, str]]:
        """The frames `chunk` completes; an unfinished frame waits for the next chunk."""
        self._buffer = (self._buffer + self._decoder.decode(chunk)).replace("\r\n", "\n")
        *complete, self._buffer = self._buffer.split("\n\n")
        return [frame for text in complete if (frame := _frame(text)) is not None]

    @property
    def partial(self) -> bool:
        """Whether the bytes so far end inside a frame (a stream cut mid-event)."""
        return bool(self._buffer.strip())


def _frame(text: str) -> tuple[str | None, str] | None:
    name: str | None = None
    data: list[str] = []
    for line in text.split("\n"):
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    return (name, "\n".join(data)) if data else None
