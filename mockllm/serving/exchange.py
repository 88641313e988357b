"""One model request, end to end: read → prepare → answer → render → deliver, logged.

Preparing (JSON, the adapter's parse, its rule checks) is cached by the raw body, and
rendering by what decides the bytes: a harness repeats bodies constantly (retries, tests
sharing a scenario, suite reruns), and the cached work is all pure.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from mockllm.core import eventstream, misbehaviour, schema_budget, wirejson
from mockllm.core.cache import MAX_CACHED_BYTES, Bounded
from mockllm.core.conversation import Conversation
from mockllm.core.divergence import CallId
from mockllm.core.engine import Answer, Engine, Resolved
from mockllm.core.events import Event
from mockllm.core.faults import (
    answer_kind,
    body_delivery,
    counts_events,
    first_byte_ms,
    stream_delivery,
)
from mockllm.core.keepalive import KeepAlive, with_comments
from mockllm.core.scenario import Fault, HttpFault, Reply, Scenario, StreamError
from mockllm.core.side import side_request
from mockllm.core.validation import RuleContext, Violation
from mockllm.errors import RequestError
from mockllm.log.journal import Journal, LiveEntry
from mockllm.options import ServerOptions
from mockllm.providers import Adapter, Parsed, SharedResponses, shares_responses
from mockllm.serving.asgi import Receive, Scope, Send, read_body
from mockllm.serving.rendered import BodyAgain, Rendered, for_attempt, template
from mockllm.serving.responder import Responder
from mockllm.state import StoreUnavailable
from mockllm.state.memory import MemoryStore
from mockllm.state.store import Store, answer_turn


@dataclass(slots=True)
class Prepared:
    """A request body read, parsed and checked: what is cached by its bytes."""

    raw: bytes
    body: dict[str, Any]
    parsed: Parsed
    # (scenario name, flavor) → (the scenario checked against, what the rules found)
    checks: dict[tuple[str, str], tuple[Scenario, tuple[Violation, ...]]] = field(
        default_factory=dict
    )


class Exchanges:
    def __init__(
        self, engine: Engine, journal: Journal, options: ServerOptions, store: Store
    ) -> None:
        self.engine, self.journal, self.options = engine, journal, options
        self.store = store  # memory or Redis, one seam (state/store.py)
        # The default store answers in one plain call (MemoryStore.answer); others count
        # through `answer_turn`: Redis's own, one coroutine (serving/redis_store.py).
        self._in_memory = store if isinstance(store, MemoryStore) else None
        self._turns = getattr(store, "answer_turn", None) or partial(answer_turn, store)
        self._prepared: dict[str, Bounded[Any, Prepared]] = {}  # per adapter, by route and raw body
        # Bodies seen once, by hash: a body is cached on its second sight, so a suite whose
        # bodies never repeat does not keep 256 parsed histories alive for nothing.
        self._seen: Bounded[int, bool] = Bounded(4096)
        self._rendered: Bounded[Any, Rendered] = Bounded(512)
        # An attempt's own bytes where its template cannot be reused (Bedrock's checksummed
        # event stream): apart, as every such request puts one, and first in first out
        # they would push the hot templates out of `_rendered`.
        self._attempts: Bounded[Any, Rendered] = Bounded(512)
        self._drawn: Bounded[Any, Reply] = Bounded(512)  # render keys seen once (see `_render`)
        # Each adapter's reparse and call_id, bound once: every log entry keeps both, and a
        # method bound per request is 64 bytes each in the ring (adapters are few; a bound
        # as variants may be made per scenario)
        # (a plain dict, emptied past _BOUND_KEPT)
        self._bound: dict[Adapter, tuple[Callable[[bytes], Conversation | None], CallId]] = {}
        # Paths found free of control characters: a suite sends a few paths again and again
        # (a session per path), and the set lookup costs a fraction of the regex search.
        self._clean: set[str] = set()

    async def handle(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        adapter: Adapter,
        route: str,
        scenario: str | None,
        session: str | None,
        parsed: Any = None,
    ) -> None:
        """`parsed`: the body's JSON where the caller has read it already (a WebSocket
        frame's: serving/websocket.py), so it is not parsed again."""
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        entry = self.journal.open(scope["path"], headers)
        entry.api = adapter.api
        request_headers = {}  # the few headers mockllm reads, in one pass (a loop: on
        for k, v in headers:  # Python 3.11 a comprehension is a call of its own)
            if k in _WANTED:
                request_headers[k] = v.decode("latin-1")
        entry.session = sys.intern(
            session or request_headers.get(b"x-mockllm-session") or "default"
        )
        entry.scenario = (
            scenario or request_headers.get(b"x-mockllm-scenario") or self.engine.default
        )
        if session == "v1":
            entry.note(v1_session_warning(scope["path"]))
        responder = Responder(self.journal, entry, send, receive, adapter, self.options.max_stall)
        try:
            # One budget for every schema this request's answer walks (docs/security.md);
            # Budget's `with`, written out (two calls fewer a request)
            opened = schema_budget.current.set(schema_budget.Budget(self.options.max_schema_work))
            try:
                await self._answer(
                    receive, adapter, route, entry, responder, request_headers, parsed
                )
            finally:
                schema_budget.current.reset(opened)
        except RequestError as error:  # refused: in the provider's error shape
            await responder.error(error)
        except StoreUnavailable as lost:  # before anything was sent: nothing half-written
            if lost.consumed is not None:  # unless it was lost while counting (shared.py)
                entry.turn, entry.attempt = lost.consumed
                entry.note(lost.consumed_note())
            await responder.error(store_error(lost))
        except Exception as error:
            # A body whose types are off (or that nests deeper than Python recurses) trips
            # the optimistic reading: the provider's 400 naming the parameter, found only now
            # so that good bodies pay nothing for it.
            refusal = None if responder.started else adapter.refusal(error, entry.body)
            if refusal is not None:
                await responder.error(refusal)
                return
            await responder.crashed()
        finally:
            if (written := self.journal.close(entry)) is not None:
                await written

    async def _answer(
        self,
        receive: Receive,
        adapter: Adapter,
        route: str,
        entry: LiveEntry,
        responder: Responder,
        request_headers: dict[bytes, str],
        parsed: Any,
    ) -> None:
        path = entry.path
        if path not in self._clean:
            if CONTROL.search(path):
                raise bad_path(path)
            if len(self._clean) < _CLEAN_KEPT and len(path) <= _LONGEST_CLEAN_KEPT:
                self._clean.add(path)
        entry.body = await read_body(
            receive, self.options.max_body, request_headers.get(b"content-length")
        )
        if self.store.keeps_responses and shares_responses(adapter):
            await self._fetch_referred(adapter, entry.body, parsed)
        # Found after the last await before counting: a scenario found earlier could be
        # replaced by a refresh meanwhile, and answer under the new version's count.
        scenario = self.engine.scenarios.get(entry.scenario or "")  # (`find`'s usual find)
        if scenario is None:
            scenario = await self._found(entry.scenario)
        entry.scenario = scenario.name  # the scenario's own string: shared by its entries
        # Its flavor: (unless the URL chose one): from here on that provider answers (with
        # none, every adapter answers for itself: no call)
        if scenario.flavor is not None:
            adapter = responder.adapter = adapter.for_scenario(scenario)
        prepared = self._prepare(adapter, route, request_headers, entry.body, parsed)
        entry.body, entry.decoded = prepared.raw, prepared.body  # shared copy; JSON for the log
        conv = prepared.parsed.conversation
        entry.conversation, entry.stream = conv, conv.stream
        bound = self._bound.get(adapter) or self._bind(adapter)
        if prepared.parsed.cacheable:
            entry.reparse = bound[0]
        session = entry.session or "default"
        if scenario.side_requests and (side := self._side(adapter, prepared, scenario)):
            answer = side  # not a turn: nothing is counted (core/side.py)
        elif (memory := self._in_memory) is not None:  # the scenario found is the one
            found = self._violations(adapter, prepared, scenario)
            answer = memory.answer(self.engine, scenario, session, conv, adapter.call_id, found)
        else:
            checks = lambda found: self._violations(adapter, prepared, found)  # noqa: E731
            scenario, answer = await self._turns(
                self.engine, scenario, session, conv, adapter.call_id, checks
            )
        _logged(entry, scenario, answer)
        responder.request_id = adapter.request_id(
            entry.session, scenario.name, answer.turn, answer.attempt
        )
        if answer.error is not None:
            raise answer.error
        assert answer.resolved is not None
        entry.resolved, entry.call_id = adapter.as_sent(answer.resolved), bound[1]  # (served)
        await self._deliver(adapter, prepared.parsed, answer.resolved, answer.fault, responder)

    def _bind(self, adapter: Adapter) -> tuple[Callable[[bytes], Conversation | None], CallId]:
        if len(self._bound) >= _BOUND_KEPT:
            self._bound.clear()
        bound = self._bound[adapter] = (adapter.reparse, adapter.call_id)
        return bound

    def _side(self, adapter: Adapter, prepared: Prepared, scenario: Scenario) -> Answer | None:
        conv = prepared.parsed.conversation
        found = side_request(scenario, conv, adapter.api)
        if found is None:
            return None
        violations = self._violations(adapter, prepared, scenario)
        return self.engine.side(scenario, conv, found, violations)

    async def _found(self, name: str | None) -> Scenario:
        try:
            return self.engine.find(name)  # (the default, or the 404 naming what there is)
        except RequestError:  # perhaps posted to another server of the store
            await self.store.refresh()  # in memory: nothing, and the same 404 again
            return self.engine.find(name)

    async def _fetch_referred(self, adapter: SharedResponses, raw: bytes, body: Any) -> None:
        """Load the stored response a request names (previous_response_id) from the shared
        store, before the adapter's parse looks for it."""
        if body is None:
            try:
                body = wirejson.loads(raw, self.options.max_number_digits)
            except wirejson.InvalidJson:
                return  # _prepare refuses it
        referred = adapter.referred(body)
        if referred is not None:
            adapter.adopt(referred, await self.store.response(referred))

    def _prepare(
        self,
        adapter: Adapter,
        route: str,
        request_headers: dict[bytes, str],
        raw: bytes,
        body: Any = None,  # `raw`'s JSON, where the caller parsed it (Exchanges.handle)
    ) -> Prepared:
        content_type = request_headers.get(b"content-type")
        if content_type is not None and "json" not in content_type:
            message = f"mockllm: unsupported Content-Type {content_type!r}; send application/json"
            raise RequestError(
                400, message, kind="bad_content_type", code="unsupported_content_type"
            )
        cache = self._prepared.get(adapter.api)
        if cache is None:  # not setdefault: that would build one per request
            cache = self._prepared[adapter.api] = Bounded(256)
        # The path can say part of the request (Gemini's model and stream), headers too.
        key: tuple[Any, ...] = (route, raw)
        if adapter.parse_headers:
            key += tuple(request_headers.get(h) for h in adapter.parse_headers)
        prepared = cache.get(key)
        if prepared is not None:
            return prepared
        if body is None:
            try:
                body = wirejson.loads(raw, self.options.max_number_digits)
            except wirejson.InvalidJson as e:
                raise (adapter.limit_refused if e.limit else adapter.invalid_json)(
                    e.detail
                ) from None
        prepared = Prepared(raw, body, adapter.parse_headed(body, route, request_headers))
        if len(raw) <= MAX_CACHED_BYTES and prepared.parsed.cacheable and self._seen_before(key):
            cache.put(key, prepared)
        return prepared

    def _seen_before(self, request: tuple[Any, ...]) -> bool:
        """Whether this (route, body) was seen before (and remember it now)."""
        key = hash(request)
        if self._seen.get(key):
            return True
        self._seen.put(key, True)
        return False

    def _violations(
        self, adapter: Adapter, prepared: Prepared, scenario: Scenario
    ) -> tuple[Violation, ...]:
        if self.engine.mode(scenario) == "off":
            return ()
        flavor = adapter.flavor  # URL, else scenario, else --flavor (Adapter.for_scenario)
        cached = prepared.checks.get((scenario.name, flavor))
        if cached is not None and cached[0] is scenario:
            return cached[1]
        views = prepared.parsed.views  # what the parse already found for the rules
        context = RuleContext(prepared.parsed.conversation, scenario, flavor, dict(views))
        found = tuple(adapter.validate(prepared.body, context))
        prepared.checks[(scenario.name, flavor)] = (scenario, found)
        return found

    async def _deliver(
        self,
        adapter: Adapter,
        parsed: Parsed,
        resolved: Resolved,
        fault: Fault | None,
        responder: Responder,
    ) -> None:
        """Render the reply and send it as the fault (if any) has it delivered."""
        stream = parsed.conversation.stream
        error = None
        if fault is not None:  # (the usual reply has none: no call asks what it does)
            error = _stream_error(adapter, fault)
            if await _answered_as_error(adapter, fault, stream, error, responder):
                return
        rendered = self._render(adapter, resolved, parsed, stream)
        for note in rendered.notes:
            responder.entry.note(note)
        body = None if stream else rendered.body  # a stream's JSON is rendered anew
        adapter.served(resolved, parsed, body)
        if self.store.keeps_responses and shares_responses(adapter):
            kept = adapter.shareable(resolved, parsed, body)
            if kept is not None:  # stored before the reply goes: the next request may ask
                try:
                    await self.store.keep_response(*kept)
                except StoreUnavailable as lost:  # after the attempt was counted
                    entry = responder.entry
                    lost.consumed, lost.counted = (entry.turn or 0, entry.attempt or 0), True
                    raise
        if fault is None:  # the usual reply: the whole stream or body, in one send
            entry = responder.entry
            if stream:  # (a whole body's plan is the entry's default)
                entry.streamed(rendered.events)
            # An attempt's own copy of a template's bytes: the log keeps what makes it
            # again when read (rendered.py), not the bytes; a body rendered whole, or
            # attempt 1's (shared by every session), is kept by reference as sent.
            made_from = rendered.template
            if made_from is not None and rendered is not made_from.first:
                entry.sent_again = BodyAgain(made_from, resolved, parsed.id_part)
            await responder.whole(rendered.body, stream, rendered)
            return
        if stream:  # the in-band error frames exist only when a stream_error fault applies
            frames = (lambda sent: adapter.stream_error_events(error, sent)) if error else None
            delivery = stream_delivery(fault, list(rendered.events), frames)
        else:
            by_events = counts_events(fault)
            events = len(self._render(adapter, resolved, parsed, True).events) if by_events else 0
            delivery = body_delivery(fault, rendered.body, resolved.reply, events)
        # One place for every wire (and the WebSocket route, which comes through here):
        # what the client is to get, for the log to say what it got (log/delivered.py).
        responder.entry.planned(rendered.events if stream else None, delivery)
        await responder.deliver(delivery, stream)

    def _render(
        self, adapter: Adapter, resolved: Resolved, parsed: Parsed, stream: bool
    ) -> Rendered:
        """The reply's bytes: a template per reply and request shape, made once, with each
        attempt's own ids put in (serving/rendered.py)."""
        own = parsed.render_key
        # The request's own stream flag too: the notes say how that request was answered;
        # and the flavour, which the parse (cached across flavours) does not know.
        if own is None:
            return self._draw(adapter, resolved, parsed, stream)
        asked, flavor, scenario = parsed.conversation.stream, adapter.flavor, resolved.scenario
        # With everything of the resolved reply that shows in its bytes (ids derive from
        # name and turn; not the attempt: its ids are put into the template, rendered.py).
        # The reply by identity: hashing it costs more than a render saves; a hit is checked
        # to be the very same object, so a recycled id() never matches.
        key: tuple[Any, ...] = (
            adapter.api,
            flavor,
            stream,
            asked,
            scenario.name,
            scenario.stream,
            resolved.turn,
            id(resolved.reply),
            resolved.created,
            resolved.input_tokens,
            resolved.output_tokens,
            resolved.reasoning_tokens,
            own,
        )
        made = self._rendered.get(key)
        if made is None or made.reply is not resolved.reply:  # the key holds its id()
            # A template costs a render and the swap: made on the key's second sight only,
            # so a reply or request shape that never repeats (a Responses body's
            # fingerprint, a templated reply) pays one render, as before templates.
            if self._drawn.get(key) is not resolved.reply:
                self._drawn.put(key, resolved.reply)  # the reply kept: its id() not reused
                return self._draw(adapter, resolved, parsed, stream)
            draw = lambda at: self._draw(adapter, at, parsed, stream)  # noqa: E731
            made = template(draw, resolved, parsed.id_part)
            if stream and adapter.stream_content_type == eventstream.CONTENT_TYPE:
                # A binary framing checksums its bytes (Bedrock's event stream: a CRC32 a
                # message): an id swapped in would break them. Rendered per attempt.
                made.reusable = False
            if len(made.body) <= MAX_CACHED_BYTES:
                self._rendered.put(key, made)
        part = parsed.id_part
        found = for_attempt(made, resolved, part) if made.reusable else None
        if found is not None:
            return found
        key = (*key, resolved.attempt, part)  # this attempt's own bytes, as one render
        found = self._attempts.get(key)
        if found is None or found.reply is not resolved.reply:
            found = self._draw(adapter, resolved, parsed, stream)
            if len(found.body) <= MAX_CACHED_BYTES:
                self._attempts.put(key, found)
        return found

    def _draw(self, adapter: Adapter, resolved: Resolved, parsed: Parsed, stream: bool) -> Rendered:
        if stream:
            events, notes = adapter.render_stream(resolved, parsed)
            keep_alive = resolved.scenario.stream.keep_alive
            if keep_alive is not None:
                events, notes = _keep_alive(adapter, events, notes, keep_alive)
            return Rendered(resolved.reply, b"".join(e.data for e in events), events, notes)
        body, notes = adapter.render(resolved, parsed)
        return Rendered(resolved.reply, body, notes=notes)


async def _answered_as_error(
    adapter: Adapter,
    fault: Fault,
    stream: bool,
    error: RequestError | None,
    responder: Responder,
) -> bool:
    """Answer with the error a fault makes of the reply, if it makes one (an `http` fault,
    or a `stream_error` with no stream to carry it); False when the reply goes out."""
    kind, first_byte = answer_kind(fault, stream), first_byte_ms(fault)
    if kind == "http_error":
        assert isinstance(fault.part, HttpFault)
        http = fault.part
        refusal = adapter.fault_error(http.status, http.type, http.message, http.code, http.headers)
        if http.filtered is not None:  # Azure's prompt filter: its annotations say why
            refusal.param, refusal.filtered = "prompt", http.filtered
        await responder.error(refusal, first_byte)
        return True
    if kind == "stream_error":
        assert error is not None
        await responder.error(error, first_byte)
        return True
    return False


def _logged(entry: LiveEntry, scenario: Scenario, answer: Answer) -> None:
    """What the answer says of the request, in its log entry."""
    entry.turn, entry.attempt = answer.turn, answer.attempt
    if answer.why is not None:
        entry.why = answer.why
    if answer.side is not None:
        entry.turn, entry.attempt, entry.side = None, None, answer.side.to_json()
    plain, turn = scenario.plain, entry.turn  # (None for a side request: no turn)
    if plain is not None and turn is not None and turn < len(plain.allow):
        entry.allow = plain.allow[turn]  # decided at load
    else:
        entry.allow = scenario.allowances(turn)
    entry.violations = answer.violations
    entry.expectation_failures = answer.expectation_failures
    fault = answer.fault  # (never with an error: the engine finds one only for a reply)
    if fault is not None:
        entry.fault = {"kind": fault.kind, "detail": fault.describe(), "why": answer.fault_why}


def _keep_alive(
    adapter: Adapter, events: list[Event], notes: tuple[str, ...], keep_alive: KeepAlive
) -> tuple[list[Event], tuple[str, ...]]:
    """The stream with its keep-alive comments, where the wire's framing has comments."""
    if adapter.api in misbehaviour.SSE_COMMENTS:
        return with_comments(events, keep_alive), notes
    why = f"stream.keep_alive not sent: {adapter.api}'s stream has no comments (not SSE)"
    return events, (*notes, why)


def store_error(lost: StoreUnavailable) -> RequestError:
    """A lost shared store, as the 503 the provider would send (the URL's password masked)."""
    return RequestError(503, str(lost), kind="store_unavailable", code="store_unavailable")


def v1_session_warning(path: str) -> str:
    base = path[: path.index("/v1/") + 3]
    return (
        f"warning: session 'v1' from {path}: an Anthropic SDK given base URL {base} adds /v1 "
        f"itself, so its requests land in a session named 'v1'. Give it {base[:-3]} "
        "(or .../s/SCENARIO/SESSION) instead"
    )


def _stream_error(adapter: Adapter, fault: Fault | None) -> RequestError | None:
    error = fault.part if fault and isinstance(fault.part, StreamError) else None
    if error is None:
        return None
    return adapter.fault_error(
        error.status or adapter.stream_error_status, error.type, error.message
    )


_WANTED = (
    b"x-mockllm-session",
    b"x-mockllm-scenario",
    b"content-type",
    b"content-length",
    b"anthropic-beta",  # Messages.parse_headers
    b"x-mockllm-transport",  # Responses.parse_headers: set by serving/websocket.py
)


# A session or scenario name becomes a log field and a header value: no control characters.
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_BOUND_KEPT = 64  # adapters whose reparse and call_id are kept bound (see Exchanges)
_CLEAN_KEPT = 1024  # paths remembered free of them (bounded: the paths come from clients)
_LONGEST_CLEAN_KEPT = 512  # characters: a longer path is searched each time


def bad_path(path: str) -> RequestError:
    message = (
        f"mockllm: the path {path!r} holds a control character; scenario and session names "
        "may use any other characters"
    )
    return RequestError(400, message, kind="bad_path", code="invalid_path")
