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

    carries: the piece of the part this frame hands the client, in no wire's words: a
    fragment of reasoning or text, or of call I's arguments (on a "call:I" frame, what the
    call opens with: "" when fragments follow, all of them when the call arrives whole).
    None for frames that carry none (lifecycle, a "done" that repeats the whole text). The
    log adds up the carried pieces of the frames that went out whole (log/delivered.py).
    """

    data: bytes
    part: str
    inside: int | None = None
    carries: str | None = None
