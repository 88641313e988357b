"""The rendered reply as the serving path and the faults see it: a list of tagged frames."""

from __future__ import annotations

from typing import NamedTuple


class Event(NamedTuple):
    """One complete SSE frame, tagged with what it carries so faults can find their place.

    part: "head" (role / lifecycle start), "reasoning", "text", "call:I" (call I begins),
    "args:I" (a fragment of call I's arguments), "done:I" (call I closes), "tail" (finish,
    usage), "done" (the terminator: [DONE], message_stop, response.completed).

    inside: for a frame that carries a whole call (Gemini sends no argument fragments), the
    byte offset in `data` that falls inside the call's arguments, where a cut goes.
    """

    data: bytes
    part: str
    inside: int | None = None
