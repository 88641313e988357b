"""A rendered reply, and the same bytes reused for another attempt at the same turn.

Every attempt at a turn gets fresh ids (docs/scenarios.md, "Retries"), and the ids are all
a render of the same reply changes: the rest is decided by the reply and the request. So
a reply is rendered once per (reply, request shape) as a *template*, at attempt 0 (which
no request is: attempts count from 1), with every id `derive` makes recorded; an attempt
is then that template with each attempt-0 id replaced by the attempt's own, in the bytes.
A 50-frame stream costs a few `bytes.replace` instead of 50 JSON encodings.

Only what the attempt reaches is replaced: an id whose parts hold the attempt-0 marks
(`Resolved.id_turn`'s "turn.0", `scripted_id`'s "attempt 0"). A template whose attempt ids
do not all stand verbatim in its bytes (an id reshaped, such as DeepSeek's UUID, or
hashed into something else) is not reused: `template` returns None and every attempt is
rendered whole, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import overload

from mockllm.core import ids
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.scenario import Reply

TEMPLATE_ATTEMPT = 0  # no request's attempt: its ids are marked by it, and only they
_ATTEMPT_MARK = f"attempt {TEMPLATE_ATTEMPT}"  # what scripted_id adds past attempt 1


# The key of an ASGI body message that carries the Rendered it sends (responder.py's
# `whole`): the WebSocket route slices a stream's frames from it, where it would split.
RENDERED = "mockllm.rendered"


class Rendered:
    """A reply's body (a stream's frames joined) and its frames, with the notes rendering
    it left. A copy for another attempt swaps the ids in its frames on first read only:
    most deliveries send `body` and never look at the frames."""

    __slots__ = ("__dict__", "_events", "_swaps", "body", "notes", "reply", "template")

    # A template's own, set on the few templates only (in their `__dict__`): an attempt's
    # copy, made per request, has the class's.
    derived: tuple[ids.Derivation, ...] = ()  # its attempt ids, with what they were made from
    reusable = True  # False: a template that cannot serve another attempt
    first: Rendered | None = None  # its attempt 1, made once: most requests
    turn = 0  # its turn (its ids' mark is "turn.0")
    plans: tuple[Plan, ...] | None = None  # how to make each attempt id
    # serving/websocket.py's, found once: where each frame's data lies in its body
    frame_data: tuple[tuple[int, int], ...] | None = None

    def __init__(
        self,
        reply: Reply,
        body: bytes,
        events: list[Event] | None = None,
        notes: tuple[str, ...] = (),
        derived: tuple[ids.Derivation, ...] = (),
        swaps: tuple[tuple[bytes, bytes], ...] = (),
    ) -> None:
        self.reply = reply  # what was rendered: a cache hit must be this very object
        self.body = body  # the JSON body, or the whole SSE stream joined
        self.notes = notes
        if derived:
            self.derived = derived
        self._events = events or []  # the stream's frames, for faults
        self._swaps = swaps  # (template id, this attempt's id), not yet done in _events
        self.template: Rendered | None = None  # an attempt's: the template it was made from

    @property
    def events(self) -> Sequence[Event]:
        return _Swapped(self._events, self._swaps) if self._swaps else self._events


class _Swapped(Sequence[Event]):
    """A template's frames with an attempt's ids, swapped in when first read: the log
    takes the frames of every stream but reads them only for a fault or reasoning."""

    def __init__(self, events: list[Event], swaps: tuple[tuple[bytes, bytes], ...]) -> None:
        self._events, self._swaps, self._done = events, swaps, False

    def _list(self) -> list[Event]:
        if not self._done:
            swaps = self._swaps
            self._events = [e._replace(data=_swapped(e.data, swaps)) for e in self._events]
            self._done = True
        return self._events

    def __len__(self) -> int:
        return len(self._events)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        return self._list()[index]

    def __iter__(self) -> Iterator[Event]:
        return iter(self._list())


def template(
    render: Callable[[Resolved], Rendered], resolved: Resolved, part: str | None = None
) -> Rendered:
    """`resolved`'s reply rendered at the template attempt, its attempt ids recorded;
    `reusable` False if its bytes cannot serve an attempt (see the module's docstring).
    `part`: the request's own id part (`Parsed.id_part`), put in per request."""
    marked = replace(resolved, attempt=TEMPLATE_ATTEMPT)
    mark = marked.id_turn
    with ids.recording() as made:
        rendered = render(marked)
    derived = tuple(d for d in made if mark in d[2] or _ATTEMPT_MARK in d[2])
    rendered.derived, rendered.turn = derived, resolved.turn
    plans = _plans(rendered, part)
    # A scenario named like a mark would have ids that could not be told apart.
    rendered.reusable = (
        plans is not None
        and resolved.scenario.name not in (mark, _ATTEMPT_MARK, part)
        and all(d[4].encode() in rendered.body for d in derived)
    )
    rendered.plans = plans or ()
    return rendered


def for_attempt(template: Rendered, resolved: Resolved, part: str | None = None) -> Rendered:
    """A `reusable` template's bytes with `resolved`'s attempt's ids (and the request's
    own id `part`). Attempt 1 (every session's first, the most asked) is made once per
    template, where no request has a part of its own."""
    first = resolved.attempt == 1 and part is None
    if first and template.first is not None:
        return template.first
    made = _for_attempt(template, resolved, part)
    if first:
        template.first = made
    return made


def _for_attempt(template: Rendered, resolved: Resolved, part: str | None = None) -> Rendered:
    attempt = resolved.attempt
    # attempt 1: scripted_id adds no attempt to a first one's parts (the `first` seeds)
    at = 0 if attempt == 1 else 1
    turn_text = str(resolved.turn) if attempt == 1 else f"{resolved.turn}.{attempt}"  # id_turn
    attempt_text = f"attempt {attempt}"
    swaps = []
    body = template.body
    for old, prefix, length, alphabet, seeds in template.plans or ():
        seed = seeds[at].format(turn_text, attempt_text, part).encode()
        new = ids.seed_bytes(prefix, length, seed, alphabet)
        swaps.append((old, new))
        body = body.replace(old, new)
    notes = template.notes
    if notes:
        notes = tuple(_swapped(n.encode(), swaps).decode() for n in notes)
    made = Rendered(template.reply, body, template._events, notes, swaps=tuple(swaps))
    made.template = template
    return made


class BodyAgain:
    """An attempt's body as the log keeps it: its template and its Resolved, the bytes made
    again (the same bytes: `for_attempt` is deterministic) when the entry is read. The log
    keeps a reference to what was sent; an attempt's body is its own copy, so a ring of
    10,000 retried or repeated turns held 10,000 near-identical bodies (770 bytes an entry
    for the bench's Chat reply) where this holds two references."""

    __slots__ = ("part", "resolved", "template")

    def __init__(self, template: Rendered, resolved: Resolved, part: str | None = None) -> None:
        self.template, self.resolved, self.part = template, resolved, part

    def __call__(self) -> bytes:
        return _for_attempt(self.template, self.resolved, self.part).body


# (template id as bytes, prefix as bytes, length, alphabet, seeds): `fresh`'s seed for any attempt,
# as two format strings (attempt 1's, which has no attempt part, and any other's) taking
# the turn mark as {0}, the attempt mark as {1} and the request's own part as {2}: one
# `str.format` per id and attempt.
Plan = tuple[bytes, bytes, int, str, tuple[str, str]]


def _plans(template: Rendered, part: str | None = None) -> tuple[Plan, ...] | None:
    """Each attempt id's plan, from what `derive` made it of; None if an attempt's id would
    not have the template id's length (a frame's byte offsets would move)."""
    own = None if part is None else _escaped(part)
    mark = f"{template.turn}.{TEMPLATE_ATTEMPT}"
    plans: dict[bytes, Plan] = {}
    for prefix, length, parts, alphabet, made in template.derived:
        if len(made) != len(ids.from_seed(prefix, length, b"", alphabet)):
            return None
        pieces = [_escaped(str(p)) for p in (prefix, *parts)]  # `fresh` joins its parts so
        at = next((i for i, p in enumerate(pieces) if i and p == _ATTEMPT_MARK), None)
        for i, piece in enumerate(pieces):
            if i and piece == mark:
                pieces[i] = "{0}"
            elif i and piece == own:
                pieces[i] = "{2}"
        others = "\x1f".join("{1}" if i == at else p for i, p in enumerate(pieces))
        first = "\x1f".join(p for i, p in enumerate(pieces) if i != at)
        plan = (made.encode(), prefix.encode(), length, alphabet, (first, others))
        plans.setdefault(made.encode(), plan)
    return tuple(plans.values())


def _escaped(text: str) -> str:
    """A seed piece as literal text in a format string."""
    return text.replace("{", "{{").replace("}", "}}")


def _swapped(data: bytes, pairs: Sequence[tuple[bytes, bytes]]) -> bytes:
    for old, new in pairs:
        data = data.replace(old, new)
    return data
