"""Server-sent events split into (event name, data) frames as bytes arrive, in any chunking."""

from __future__ import annotations

import codecs


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
