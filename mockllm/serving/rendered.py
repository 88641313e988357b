"""A rendered reply, and the same bytes reused for another attempt at the same turn.

Every attempt at a turn gets fresh ids (docs/scenarios.md, "Retries"), and the ids are all
a render of the same reply changes: the rest is decided by the reply and the request. So
a reply is rendered once per (reply, request shape) as a *template*, at attempt 0 (which
no request is: attempts count from 1), with every id `derive` makes recorded; an attempt
is then that template with each attempt-0 id replaced by the attempt's own: the body kept
as a bytes `%` format with each id's places marked, filled in one `%` (a 50-frame stream
costs that instead of 50 JSON encodings; frames and notes swap their ids when read).

Only what the attempt reaches is replaced: an id whose parts hold the attempt-0 marks
(`Resolved.id_turn`'s "turn.0", `scripted_id`'s "attempt 0"). A template whose attempt ids
do not all stand verbatim in its bytes (an id reshaped, such as DeepSeek's UUID, or
hashed into something else) is not reused (`template` marks it not reusable) and every
attempt is rendered whole, as before.
"""

from __future__ import annotations

from binascii import hexlify
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from hashlib import blake2b
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

    __slots__ = ("__dict__", "_events", "_marks", "body", "notes", "reply", "template")

    # A template's own, set on the few templates only (in their `__dict__`): an attempt's
    # copy, made per request, has the class's.
    derived: tuple[ids.Derivation, ...] = ()  # its attempt ids, with what they were made from
    reusable = True  # False: a template that cannot serve another attempt
    first: Rendered | None = None  # its attempt 1, made once: most requests
    turn = 0  # its turn (its ids' mark is "turn.0")
    plans: tuple[Plan, ...] = ()  # how to make each attempt id
    format = b""  # its body as a `%` format: each attempt id's place marked (see Plan)
    # serving/websocket.py's, found once: where each frame's data lies in its body
    frame_data: tuple[tuple[int, int], ...] | None = None

    def __init__(
        self,
        reply: Reply,
        body: bytes,
        events: list[Event] | None = None,
        notes: tuple[str, ...] = (),
        marks: dict[bytes, bytes | None] | None = None,
        template: Rendered | None = None,
    ) -> None:
        self.reply = reply  # what was rendered: a cache hit must be this very object
        self.body = body  # the JSON body, or the whole SSE stream joined
        self.notes = notes
        self._events = events or []  # the stream's frames, for faults
        self._marks = marks  # an attempt's: its ids (see Plan), not yet swapped in _events
        self.template = template  # an attempt's: the template it was made from

    @property
    def events(self) -> Sequence[Event]:
        if self._marks is None or self.template is None:
            return self._events
        return _Swapped(self._events, _swaps(self.template, self._marks))


class _Swapped(Sequence[Event]):
    """A template's frames with an attempt's ids, swapped in when first read: the log
    takes the frames of every stream but reads them only for a fault or reasoning."""

    def __init__(self, events: list[Event], swaps: Sequence[tuple[bytes, bytes]]) -> None:
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
    if rendered.reusable:
        rendered.format = _format(rendered.body, rendered.plans)
    return rendered


def for_attempt(template: Rendered, resolved: Resolved, part: str | None = None) -> Rendered:
    """A `reusable` template's bytes with `resolved`'s attempt's ids (and the request's
    own id `part`). Attempt 1 (every session's first, the most asked) is made once per
    template, where no request has a part of its own."""
    attempt = resolved.attempt
    if attempt == 1:  # scripted_id adds no attempt to a first one's parts (the `first` seeds)
        if part is None and template.first is not None:
            return template.first
        at, turn = 0, b"%d" % resolved.turn
    else:
        at, turn = 1, b"%d.%d" % (resolved.turn, attempt)  # Resolved.id_turn
    marks = {  # what a seed's marks stand for (see Plan)
        b"turn": turn,
        b"attempt": b"attempt %d" % attempt,
        b"part": None if part is None else part.encode(),  # (no seed has it then)
    }
    for _, key, prefix, size, table, length, seeds in template.plans:
        digest = blake2b(seeds[at] % marks, digest_size=size).digest()  # ids.from_seed, in bytes
        marks[key] = prefix + (digest.translate(table) if table else hexlify(digest)[:length])
    notes = template.notes
    if notes:
        swaps = _swaps(template, marks)
        notes = tuple(_swapped(n.encode(), swaps).decode() for n in notes)
    body = template.format % marks  # each id in its places, in one pass
    made = Rendered(template.reply, body, template._events, notes, marks, template)
    if attempt == 1 and part is None:
        template.first = made
    return made


def _swaps(template: Rendered, marks: dict[bytes, bytes | None]) -> list[tuple[bytes, bytes]]:
    """(template id, the attempt's id) of each of an attempt's ids, for its frames and notes."""
    return [(plan[0], marks[plan[1]] or b"") for plan in template.plans]


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
        return for_attempt(self.template, self.resolved, self.part).body


# (template id, its key in the template's `format`, prefix, digest size, table, length,
# seeds), the id's `ids.hashing` figures, and `fresh`'s seed for any attempt, as two bytes
# formats (attempt 1's, which has no attempt part, and any other's) taking the turn mark as
# %(turn)b, the attempt mark as %(attempt)b and the request's own part as %(part)b: one `%`
# per id and attempt, and one for the body, whose ids are marked %(0)b, %(1)b, ...
Plan = tuple[bytes, bytes, bytes, int, bytes | None, int, tuple[bytes, bytes]]


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
                pieces[i] = "%(turn)b"
            elif i and piece == own:
                pieces[i] = "%(part)b"
        others = "\x1f".join("%(attempt)b" if i == at else p for i, p in enumerate(pieces))
        first = "\x1f".join(p for i, p in enumerate(pieces) if i != at)
        size, table = ids.hashing(length, alphabet)
        seeds = (first.encode(), others.encode())
        key = b"%d" % len(plans)
        plan = (made.encode(), key, prefix.encode(), size, table, length, seeds)
        plans.setdefault(made.encode(), plan)
    return tuple(plans.values())


def _format(body: bytes, plans: Sequence[Plan]) -> bytes:
    """The template's body as a `%` format, each attempt id's places marked by its key: the
    body cut at the first id, each piece cut at the next ones, the rest escaped. A loop, not
    a recursion per id: a reply of hundreds of parallel calls has hundreds of ids."""
    flat = [body]  # text, mark, text, …: marks sit at the odd places
    for old, key, *_ in plans:
        mark, cut = b"%(" + key + b")b", []
        for i, segment in enumerate(flat):
            if i % 2:
                cut.append(segment)
                continue
            for j, piece in enumerate(segment.split(old)):
                if j:
                    cut.append(mark)
                cut.append(piece)
        flat = cut
    return b"".join(s if i % 2 else s.replace(b"%", b"%%") for i, s in enumerate(flat))


def _escaped(text: str) -> str:
    """A seed piece as literal text in a `%` format."""
    return text.replace("%", "%%")


def _swapped(data: bytes, pairs: Sequence[tuple[bytes, bytes]]) -> bytes:
    for old, new in pairs:
        data = data.replace(old, new)
    return data
