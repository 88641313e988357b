"""The request log: one entry per request, in arrival order, with a gap-free `seq`.

Entries keep references (raw body, parsed conversation, bytes sent) and format them
only when read, so logging costs the hot path almost nothing. Memory is a ring of
`limit` entries; the JSONL file, when given, keeps everything.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from functools import partial
from typing import IO, TYPE_CHECKING, Any, TypeVar

from mockllm.core import eventstream, wirejson
from mockllm.core.call_problem import call_problem
from mockllm.core.conversation import Conversation, result_json
from mockllm.core.encoding import digest
from mockllm.errors import Finding
from mockllm.log.delivered import body_holds, delivered, streams_reasoning
from mockllm.log.runs import run_of

if TYPE_CHECKING:
    from mockllm.core.divergence import CallId
    from mockllm.core.engine import Resolved
    from mockllm.core.events import Event
    from mockllm.core.faults import Delivery
    from mockllm.core.scenario import Reply

T = TypeVar("T")
E = TypeVar("E", bound="LiveEntry")
Part = Callable[[str, Callable[[], Any], Any], Any]  # builds one part of an entry's JSON
_NO_ALLOWANCE: Mapping[str, str] = {}
Plan = tuple[bool, int | None, str | None, bool]  # see LiveEntry.plan
_UNPLANNED: Plan = (False, None, None, False)
_STREAMED: Plan = (True, None, None, False)  # a stream sent whole, at once
_PLANS: dict[Plan, Plan] = {p: p for p in (_UNPLANNED, _STREAMED)}

# Header names that carry credentials, or name an account (OpenAI-Organization,
# OpenAI-Project, ChatGPT-Account-Id, X-Goog-User-Project): their values never reach the
# log (docs/security.md).
SECRET_HEADER = re.compile(
    r"auth|token|key|secret|passw|cookie|credential|organi[sz]ation|project|account|tenant",
    re.IGNORECASE,
)


REQUEST_CAP = 1 << 20
"""Request bytes an entry keeps in memory (--log-request-cap); past it, the start, the
size and the SHA-256."""
RING_BYTES = 256 << 20
"""Bytes of bodies the in-memory log keeps (--log-bytes); past it the oldest entries go."""
INLINE_BYTES = 64 << 10  # a read of more than this is formatted on a worker
STREAM_BYTES = 1 << 20  # about this much of the entries' bodies per piece of a streamed read


class LiveEntry:
    """One request as it happened. Built on the hot path from references only; every field
    that needs formatting is computed in `to_json`, when somebody reads the log.

    The fields a request rarely sets are class-level defaults, set on the entry (in its
    `__dict__`, made on the first such write) only when they differ: every request opens
    an entry, and most are answered without a fault, an error or a note."""

    __slots__ = (
        "__dict__",  # the rare fields below, once one is set
        "allow",
        "api",
        "attempt",
        "body",
        "bytes_sent",
        "call_id",
        "closed",
        "conversation",
        "decoded",
        "duration_ms",
        "epoch",
        "expectation_failures",
        "headers",
        "kept",
        "method",
        "path",
        "reparse",
        "resolved",
        "scenario",
        "sent",
        "sent_again",
        "seq",
        "session",
        "started",
        "status",
        "stream",
        "time",
        "turn",
        "violations",
        "weight",
    )

    why: str | None = None  # which rule picked the turn, when not the plain count
    side: dict[str, str] | None = None  # a side request: its name and rule
    # What the client was to receive (log/delivered.py): the stream's tagged events, by
    # reference, kept only while it may not arrive whole (they are not capped as `sent`
    # is); the plan: (a stream?, its whole events, the cutting fault, whether the stream
    # carries the reasoning readable).
    events: Sequence[Event] | None = None
    plan: Plan = _UNPLANNED
    fault: dict[str, str] | None = None  # kind, detail, and why it fired
    error: dict[str, str] | None = None  # kind and message of an error answer
    notes: tuple[str, ...] = ()  # what the adapter had to adapt to render this reply
    retry_after: float | None = None  # seconds an error answer told the client to wait
    client_disconnected = False
    server_error: str | None = None
    shared: tuple[str, str] | None = None  # two clients that used the entry's use at once
    # A body over --log-request-cap, once closed: (its size, its SHA-256); `body` is cut
    request_cut: tuple[int, str] | None = None

    def __init__(
        self, seq: int, path: str, headers: list[tuple[bytes, bytes]], method: str = "POST"
    ) -> None:
        """`headers` as the server received them (name, value) pairs."""
        self.seq = seq
        self.method = method
        self.time = time.time()
        self.started = time.perf_counter()
        self.path = path
        # One bytes object, not a list of tuples: a ring of 10 000 entries stays compact.
        self.headers = b"\n".join(map(b":".join, headers))
        self.api: str | None = None
        self.session: str | None = None
        self.scenario: str | None = None
        self.stream = False
        self.turn: int | None = None
        self.attempt: int | None = None
        self.body = b""
        self.conversation: Conversation | None = None
        # The body's JSON as the request's parse read it (None: not parsed): a shared log,
        # which formats the entry as it closes, writes it without reading the body again.
        # Dropped at close (the ring keeps the bytes, read again when the log is read).
        self.decoded: Any = None
        # Set when the conversation can be parsed again from `body`: then the entry drops it
        # once closed, and `to_json` parses it again (see `Adapter.reparse`).
        self.reparse: Callable[[bytes], Conversation | None] | None = None
        # Tuples: an entry without findings shares the empty one and cannot change it.
        self.violations: Sequence[Finding] = ()
        self.expectation_failures: Sequence[Finding] = ()
        self.status: int | None = None  # None while the response is still being sent
        self.resolved: Resolved | None = None  # the reply served, if one was
        self.call_id: CallId | None = None  # how this wire names its calls
        # the bytes sent, by reference, up to the body cap; a list from the first send only
        self.sent: list[bytes] | None = None
        # Instead of `sent`: what makes the same bytes again when the entry is read (an
        # attempt's own copy of a reply, serving/rendered.py's BodyAgain)
        self.sent_again: Callable[[], bytes] | None = None
        self.kept = 0
        self.bytes_sent = 0
        self.duration_ms: float | None = None
        self.allow: Mapping[str, str] = _NO_ALLOWANCE  # verdict checks its scenario/turn waive
        self.epoch: str | None = None  # the session's use it belongs to (judge/uses.py)
        self.closed = False
        self.weight = 0  # the bytes the ring counts for this entry (Journal.close)

    def served(self, resolved: Resolved, call_id: CallId) -> None:
        self.resolved, self.call_id = resolved, call_id

    def planned(self, events: Sequence[Event] | None, delivery: Delivery) -> None:
        """Called once the reply's delivery is decided: `events` for a stream, else None."""
        if events is None and delivery.whole is None and delivery.cut is None:
            return  # a whole body, the class's plan (its reasoning is found in it when read)
        stream = events is not None
        if stream and (delivery.whole is not None or delivery.paced):
            self.events = events  # a cut, or pauses the client may hang up in
        thinks = self.resolved is not None and bool(self.resolved.reply.reasoning)
        shows = thinks and streams_reasoning(events or ())
        plan: Plan = (stream, delivery.whole, delivery.cut, shows)
        self.plan = _PLANS.get(plan, plan)  # the common plans shared: a ring of 10 000 entries

    def streamed(self, events: Sequence[Event]) -> None:
        """`planned` of a stream without a fault (sent whole, at once, uncut), the usual
        stream: only whether it carries the reasoning readable is left to find."""
        resolved = self.resolved
        if resolved is not None and resolved.reply.reasoning and streams_reasoning(events):
            self.plan = (True, None, None, True)
        else:
            self.plan = _STREAMED

    def note(self, text: str) -> None:
        self.notes = (*self.notes, text)

    def parsed(self) -> Conversation | None:
        if self.conversation is None and self.reparse is not None:
            return self.reparse(self.body)
        return self.conversation

    def to_json(self) -> dict[str, Any]:
        return self.json_parts(self.parsed(), _built)

    def json_parts(self, conv: Conversation | None, part: Part) -> dict[str, Any]:
        """The entry as JSON, each part that could fail built through `part(name, make,
        instead)`: `_built` just makes it, `_salvaged` replaces what fails."""
        return {
            "seq": self.seq,
            "time": part("time", self._stamp, None),
            "session": self.session,
            **({"run": run} if (run := run_of(self.session)) else {}),
            **({"epoch": self.epoch} if self.epoch else {}),
            **({"clients": list(self.shared)} if self.shared else {}),
            "scenario": self.scenario,
            "api": self.api,
            "method": self.method,
            "path": self.path,
            "stream": self.stream,
            "turn": self.turn,
            "attempt": self.attempt,
            # How many turns the scenario scripts: the verdict's `turns_served` reads it.
            **(
                {"scripted_turns": len(self.resolved.scenario.turns)}
                if self.resolved is not None and self.turn is not None
                else {}
            ),
            **({"why": why} if (why := self.why or self._counted()) else {}),
            **({"side": self.side} if self.side is not None else {}),
            **({"request_truncated": self._cut_json()} if self.request_cut else {}),
            "headers": part("headers", lambda: _headers_json(self.headers), {}),
            "request": part("request", self._request, self.body.decode("utf-8", "replace")),
            "conversation": part(
                "conversation",
                lambda: [m.to_json() for m in conv.messages] if conv else None,
                None,
            ),
            "tools": part("tools", lambda: list(conv.tool_names) if conv else [], []),
            "tool_results": part(
                "tool_results",
                lambda: [result_json(r) for r in conv.latest_tool_results] if conv else [],
                [],
            ),
            "violations": part("violations", lambda: [f.to_json() for f in self.violations], []),
            "expectation_failures": part(
                "expectation_failures",
                lambda: [f.to_json() for f in self.expectation_failures],
                [],
            ),
            "response": None
            if self.status is None
            else part("response", lambda: self._response_json(conv), None),
            "duration_ms": self.duration_ms,
            "client_disconnected": self.client_disconnected,
            "server_error": self.server_error,
            **({"allow": dict(self.allow)} if self.allow else {}),
        }

    def _request(self) -> Any:
        """The body as JSON: what the request's parse read (the same reader, the same value:
        one within --max-number-digits reads alike at the log's higher limit), else read."""
        value = self.decoded
        if value is None or self.request_cut is not None:
            return _decode_request(self.body)
        text = self.body.decode("utf-8", "replace")
        return text if wirejson.too_deep(value, text) else value

    def _cut_json(self) -> dict[str, Any]:
        size, sha = self.request_cut or (0, "")
        return {"bytes": size, "kept": len(self.body), "sha256": sha}

    def cut_request(self, cap: int) -> None:
        """Keep only the first `cap` bytes of the body, and its size and hash: a 9 MB body
        held whole made every read of the log pay for it. Its conversation goes too (it is
        the same bytes, parsed); the entry says `request_truncated`."""
        body = self.body
        self.request_cut = (len(body), hashlib.sha256(body).hexdigest())
        self.body = body[:cap]
        self.conversation, self.reparse = None, None

    def _stamp(self) -> str:
        stamp = datetime.fromtimestamp(self.time, timezone.utc).isoformat(timespec="milliseconds")
        return stamp.replace("+00:00", "Z")

    def _counted(self) -> str | None:
        """The plain rule, said only when the log is read: turn N for N assistant replies."""
        if self.turn is None:
            return None
        return f"counted: {self.turn} assistant {'reply' if self.turn == 1 else 'replies'}"

    def _response_json(self, conv: Conversation | None) -> dict[str, Any]:
        # What the scenario would have said is not what an error answer (a fault's 429) said.
        reply = self.resolved.reply if self.resolved and self.status == 200 else None
        again = self.sent_again
        body = b"".join(self.sent or ()) if again is None else again()[: self.kept]
        return {
            "status": self.status,
            "finish": reply.finish if reply else None,
            # A valid reply that is still wrong: refusal, content_filter, empty, … (or None).
            "misbehaviour": reply.kind if reply else None,
            "text": reply.text if reply else None,
            "reasoning": self._reasoning(reply, body),
            "tool_calls": self._calls_json(conv),
            "delivered": self._delivered(reply),
            "fault": self.fault,
            "error": self.error,
            "notes": list(self.notes),
            "retry_after": self.retry_after,
            "bytes_sent": self.bytes_sent,
            "body": self._body_text(body),
            "body_truncated": self.bytes_sent > self.kept,
        }

    def _body_text(self, body: bytes) -> str:
        """What went out, as text: an AWS event stream (Bedrock's streams) as one line per
        message, its binary framing read; anything else as UTF-8."""
        if self.stream and body[:1] == b"\x00" and (self.api or "").startswith("bedrock"):
            return eventstream.readable(body)
        return body.decode("utf-8", "replace")

    def _reasoning(self, reply: Reply | None, body: bytes) -> str | None:
        stream, *_, shows = self.plan
        if reply is None or not reply.reasoning:
            return None
        return reply.reasoning if (shows if stream else body_holds(body, reply.reasoning)) else None

    def _delivered(self, reply: Reply | None) -> dict[str, Any] | None:
        stream, whole, cut, _ = self.plan
        if reply is None or (stream and self.events is None):
            return None  # a stream sent in one go, uncut: it arrived whole
        sent, hung_up = self.bytes_sent, self.client_disconnected
        return delivered(reply, self.events, whole, cut, sent, hung_up)

    def _calls_json(self, conv: Conversation | None) -> list[dict[str, Any]]:
        """The served calls, each with what a careful harness must refuse about it."""
        resolved, call_id = self.resolved, self.call_id
        if resolved is None or call_id is None or self.status != 200:
            return []
        check = self.request_cut is None  # a cut body's tools are gone: nothing to check
        from mockllm.core.divergence import retry_id

        tools = {t.name: t.parameters for t in conv.tools} if conv else {}
        freeform = frozenset(t.name for t in conv.tools if t.freeform) if conv else frozenset()
        out = []
        for i, call in enumerate(resolved.reply.tool_calls):
            served = {
                "id": retry_id(call_id, resolved.scenario, resolved.turn, i, resolved.attempt),
                "name": call.name,
                "arguments": call.arguments,
            }
            # With no tools offered at all the call is mockllm's (core/possible.py logs it):
            # no harness could have refused it, and none is blamed.
            problem = (
                call_problem(call.name, call.arguments, tools, freeform)
                if check and tools
                else None
            )
            out.append({**served, "problem": problem} if problem else served)
        return out


def _headers_json(headers: bytes) -> dict[str, str]:
    pairs = (line.decode("latin-1").partition(":") for line in headers.split(b"\n") if line)
    return {k: redact(v) if SECRET_HEADER.search(k) else v for k, _, v in pairs}


def redact(value: str) -> str:
    """A credential's place in the log: a short hash tells two keys apart, and no more."""
    return f"[redacted {digest(value.encode('latin-1'), 4).hex()}]"


def _decode_request(body: bytes) -> Any:
    """The body as JSON, or as text when it is not JSON its readers can take."""
    text = body.decode("utf-8", "replace")
    try:
        value = wirejson.loads(body, wirejson.HIGHEST_NUMBER_DIGITS)
    except wirejson.InvalidJson:
        return text
    return text if wirejson.too_deep(value, text) else value


def entry_line(entry: LiveEntry) -> str:
    """One entry as JSON text a strict parser reads, whatever the client sent: a request
    nested too deeply to write out is shown as its text instead, and a part that cannot be
    written at all is replaced and said so (`entry_json`). Never raises: an entry that could
    not be written would be lost, and a log read that fails on it would fail for everyone."""
    try:
        return wirejson.dumps_line(entry.to_json())
    except (RecursionError, ValueError):
        try:
            shown = entry.to_json()
            shown["request"] = entry.body.decode("utf-8", "replace")
            shown["conversation"] = None
            return wirejson.dumps_line(shown)
        except Exception:
            pass
    except Exception:
        pass
    return wirejson.dumps_line(_salvaged(entry))


def entry_json(entry: LiveEntry) -> dict[str, Any]:
    """`entry.to_json()`, or, when a part of it fails, the entry with that part replaced."""
    try:
        return entry.to_json()
    except Exception:
        return _salvaged(entry)


def _salvaged(entry: LiveEntry) -> dict[str, Any]:
    """The entry part by part: each part that fails to build or to write as JSON is
    replaced (null, [], the body as text) and named in `server_error`, so the rest of the
    entry is logged, and the failure is as loud as any other of mockllm's own."""
    failed: list[str] = []

    def part(name: str, make: Callable[[], Any], instead: Any) -> Any:
        try:
            value = make()
            wirejson.dumps_line(value)
        except Exception as error:
            failed.append(f"{name} ({type(error).__name__}: {str(error)[:200]})")
            return instead
        return value

    try:
        conv = entry.parsed()
    except Exception as error:
        failed.append(f"conversation ({type(error).__name__}: {str(error)[:200]})")
        conv = None
    shown = entry.json_parts(conv, part)
    said = "mockllm: the log could not write " + "; ".join(dict.fromkeys(failed)) + ": replaced"
    shown["server_error"] = f"{entry.server_error}\n{said}" if entry.server_error else said
    return shown


def _built(name: str, make: Callable[[], Any], instead: Any) -> Any:
    return make()


def open_log(path: str) -> IO[str]:
    """The JSONL file, appended to; created readable by its owner only (it holds prompts)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    return open(fd, "a", encoding="utf-8")


class Journal:
    def __init__(
        self,
        limit: int,
        path: str | None,
        body_cap: int,
        console: Callable[[LiveEntry], None] | None = None,
        *,
        request_cap: int = REQUEST_CAP,
        ring_bytes: int = RING_BYTES,
    ) -> None:
        """The defaults live in `mockllm.options.ServerOptions`."""
        self.console = console  # told of each entry as it closes (the server console)
        self._entries: deque[LiveEntry] = deque(maxlen=limit)
        self._next_seq = 1
        self.body_cap = body_cap
        self.request_cap, self.ring_bytes = request_cap, ring_bytes
        self._bytes = 0  # the weight of the entries in the ring (LiveEntry.weight)
        self._file: IO[str] | None = open_log(path) if path else None
        self.uses = Uses()

    def open(
        self, path: str, headers: list[tuple[bytes, bytes]], method: str = "POST"
    ) -> LiveEntry:
        """Start the entry for an arriving request; it is visible (as pending) at once.
        (`open_as`'s steps written out: every request opens one.)"""
        entry = LiveEntry(self._next_seq, path, headers, method)
        self._next_seq += 1
        entries = self._entries
        if entries and len(entries) == entries.maxlen:  # the oldest is pushed out
            self._bytes -= entries[0].weight
        entries.append(entry)
        return entry

    def open_as(
        self, kind: type[E], path: str, headers: list[tuple[bytes, bytes]], method: str = "POST"
    ) -> E:
        """`open`, for an entry of another route's shape (log/mcp.py's `McpEntry`)."""
        entry = kind(self._next_seq, path, headers, method)
        self._next_seq += 1
        entries = self._entries
        if entries and len(entries) == entries.maxlen:  # the oldest is pushed out
            self._bytes -= entries[0].weight
        entries.append(entry)
        return entry

    def record_sent(self, entry: LiveEntry, data: bytes) -> None:
        """Keep what went out by reference (rendered replies are shared), up to the cap."""
        size = len(data)
        entry.bytes_sent += size
        room = self.body_cap - entry.kept
        if room <= 0 or not size:
            return
        if size > room:
            data, size = data[:room], room
        entry.kept += size
        if entry.sent_again is None:
            if entry.sent is None:
                entry.sent = [data]
            else:
                entry.sent.append(data)

    def close(self, entry: LiveEntry) -> Awaitable[None] | None:
        """Finish the entry and write it out; called before the response's last byte leaves,
        so a client that acts on the response (`mockllm report`) finds it in the file. A
        shared log returns the write to await (log/shared.py); this one writes at once."""
        if entry.closed:
            return None
        entry.closed = True
        entry.duration_ms = round((time.perf_counter() - entry.started) * 1000, 3)
        uses = self.uses  # (`Uses.of`, without its call; None is no session's key)
        entry.epoch = epoch = uses._epochs.get(entry.session, uses._boot)  # type: ignore[arg-type]
        if uses._shared and (shared := uses._shared.get(epoch)) is not None:
            entry.shared = shared  # (else the class's None: no `__dict__` made for it)
        if self._file is not None:
            self._file.write(entry_line(entry) + "\n")
            self._file.flush()
        if self.console is not None:
            self.console(entry)
        entry.decoded = None  # read again from the bytes kept, when the log is read
        if entry.reparse is not None:
            entry.conversation = None  # bytes are not walked by the garbage collector
        # Count the closed entry's bytes against --log-bytes, cut its body to
        # --log-request-cap (the file, written above, has it whole), and push the oldest
        # entries out while the ring holds more than --log-bytes (inline: once a request).
        size = len(entry.body)
        if size > self.request_cap:
            entry.cut_request(self.request_cap)
            size = len(entry.body)
        entry.weight = weight = size + entry.kept + len(entry.headers)
        self._bytes += weight
        if self._bytes > self.ring_bytes:
            entries = self._entries
            while self._bytes > self.ring_bytes and len(entries) > 1:
                self._bytes -= entries.popleft().weight
        return None

    def written(self, entry: LiveEntry, line: str) -> None:
        """Tell the file and the console of an entry a shared log has numbered (`close`
        does the same inline: the in-memory hot path pays for no extra call)."""
        if self._file is not None:
            self._file.write(line + "\n")
            self._file.flush()
        if self.console is not None:
            self.console(entry)

    def entries(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> Iterator[LiveEntry]:
        for e in list(self._entries):
            if e.seq > since and session in (None, e.session) and scenario in (None, e.scenario):
                yield e

    def clear(self, session: str | None = None) -> int:
        kept = [e for e in self._entries if session is not None and e.session != session]
        removed = len(self._entries) - len(kept)
        self._entries.clear()
        self._entries.extend(kept)
        self._bytes = sum(e.weight for e in kept)
        return removed

    # --- what the admin routes read: async, so that a shared log can ask its store -------

    async def read_text(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> str:
        """The entries as a JSON array."""
        found = list(self.entries(session, scenario, since))
        return await off_loop(lambda: "[" + ",".join(entry_line(e) for e in found) + "]", found)

    async def stream_text(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> AsyncIterator[str]:
        """`read_text` in pieces of about STREAM_BYTES of entries, each formatted on a
        worker: a log of 1,500 big entries took 10.5 s and 160 MB as one string."""
        found = list(self.entries(session, scenario, since))
        yield "["
        sep = ""
        for batch in _batches(found):
            text = await off_loop(partial(_lines, batch), batch)
            yield sep + text
            sep = ","
        yield "]"

    async def read_json(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> list[dict[str, Any]]:
        found = list(self.entries(session, scenario, since))
        return await off_loop(lambda: [entry_json(e) for e in found], found)

    async def read_touched(self, since: int) -> list[dict[str, Any]]:
        """Every entry of the sessions with an entry after `since`."""
        touched = {e.session for e in self.entries(since=since)}
        found = [e for e in self.entries() if e.session in touched]
        return await off_loop(lambda: [entry_json(e) for e in found], found)

    async def delete(self, session: str | None = None) -> int:
        return self.clear(session)

    def shutdown(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class Uses:
    """Each session's current use (judge/uses.py): an epoch drawn at its reset, or the
    server's own one for a session never reset (drawn anew when all are reset), and the
    client that reset it, if it said (`?client=`), until that client releases it. Kept for
    the sessions reset most recently only: one forgotten joins the server's epoch, which
    at worst splits its use in two in the report."""

    LIMIT = 50_000

    def __init__(self) -> None:
        self._boot = _new_epoch()
        self._epochs: dict[str, str] = {}
        self._owners: dict[str, str] = {}  # session -> the client using it
        self._shared: dict[str, tuple[str, str]] = {}  # epoch -> the two clients that used it

    def epoch(self, session: str | None) -> str:
        return self._epochs.get(session, self._boot) if session is not None else self._boot

    def of(self, session: str | None) -> tuple[str, tuple[str, str] | None]:
        """`epoch` and `shared` of a closing entry's session, in one call."""
        epoch = self._epochs.get(session, self._boot) if session is not None else self._boot
        return epoch, (self._shared.get(epoch) if self._shared else None)

    def shared(self, epoch: str | None) -> tuple[str, str] | None:
        """The two clients' ids when two used this epoch's session at once."""
        return self._shared.get(epoch) if epoch else None

    def reset(self, session: str | None, client: str | None) -> str:
        """A new use of `session` (of every session when None); returns its epoch. A client
        resetting a session another client still holds is said in the log, on both uses."""
        epoch = _new_epoch()
        if session is None:
            self._boot = epoch
            self._epochs.clear()
            self._owners.clear()
            return epoch
        holder = self._owners.get(session)
        if holder is not None and client is not None and holder != client:
            self._shared[epoch] = self._shared[self.epoch(session)] = (holder, client)
            _bound(self._shared, self.LIMIT)
        self._epochs.pop(session, None)
        self._epochs[session] = epoch
        _bound(self._epochs, self.LIMIT)
        if client is not None:
            self._owners[session] = client
            _bound(self._owners, self.LIMIT)
        return epoch

    def release(self, session: str, client: str) -> None:
        """The client is done with the session: another may reset it without a clash."""
        if self._owners.get(session) == client:
            del self._owners[session]


def _new_epoch() -> str:
    return os.urandom(4).hex()


def _bound(found: dict[str, Any], limit: int) -> None:
    while len(found) > limit:
        del found[next(iter(found))]  # the oldest first: dicts keep insertion order


async def off_loop(work: Callable[[], T], entries: Sequence[LiveEntry] | Sequence[str]) -> T:
    """Formatting a big log (thousands of entries, or a few big ones: each parsed and
    written anew, or decoded) runs on a worker thread, so the requests being served
    meanwhile are not held up; a small one is formatted at once."""
    return await asyncio.to_thread(work) if _heavy(entries) else work()


def _size(item: LiveEntry | str) -> int:
    return len(item) if isinstance(item, str) else len(item.body) + item.kept


def _heavy(items: Sequence[LiveEntry] | Sequence[str]) -> bool:
    if len(items) > 100:
        return True
    return sum(map(_size, items)) > INLINE_BYTES


def _batches(found: list[LiveEntry]) -> Iterator[list[LiveEntry]]:
    batch: list[LiveEntry] = []
    size = 0
    for e in found:
        batch.append(e)
        size += _size(e)
        if size >= STREAM_BYTES or len(batch) >= 500:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _lines(batch: list[LiveEntry]) -> str:
    return ",".join(entry_line(e) for e in batch)
