"""What every wire-format adapter provides, and the helpers they share.

An adapter is a parse/render pair: wire JSON → `Conversation`; `Resolved` reply →
JSON body or SSE events; `RequestError` → the provider's error body. docs/design.md, "What
a wire implements", lists the members a wire writes; the rest have defaults, and the
hooks only a stateful wire needs (Responses) are the optional protocols at the end.
"""

from __future__ import annotations

import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping
from dataclasses import field, replace
from typing import Any, ClassVar, NamedTuple, Protocol, TypeGuard, runtime_checkable

from mockllm.core import wirejson
from mockllm.core.conversation import Conversation, Message
from mockllm.core.encoding import dumps as dumps  # the adapters' name for it
from mockllm.core.encoding import sse_frame
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.heard import Heard, HeardError
from mockllm.core.ids import HEX, derive, fresh
from mockllm.core.scenario import Scenario
from mockllm.core.validation import RuleContext, RuleSet, Violation
from mockllm.core.values import value
from mockllm.errors import RequestError
from mockllm.providers.shapes import Path, Shape, mismatch


@value  # one per request: see values.py
class Parsed:
    """A request body as an adapter read it: the conversation and the wire's options."""

    conversation: Conversation
    options: Mapping[str, Any] = field(default_factory=dict)  # adapter-specific render options
    # Facts of the request, decided by the parse once: whether the parse depends on nothing
    # but the body's bytes (not on adapter state: Responses' previous_response_id), so that
    # it may be cached and the log may keep the bytes alone; and what of the request,
    # besides the resolved reply and the flavour, shows in the rendered bytes (None: a
    # rendering is never reused).
    cacheable: bool = True
    render_key: Hashable | None = None


class Body(NamedTuple):
    """What `render` returns: the JSON body, and what rendering it had to adapt (the log's
    notes: a call Gemini cannot carry, reasoning a flavour does not send)."""

    data: bytes
    notes: tuple[str, ...] = ()


class Stream(NamedTuple):
    """What `render_stream` returns: the tagged frames, and the notes as for `Body`."""

    events: list[Event]
    notes: tuple[str, ...] = ()


class Answers(ABC):
    """Reads one upstream answer on this wire back into neutral terms, for `mockllm record`:
    a whole JSON body, or a stream fed frame by frame. One instance per answer."""

    def __init__(self) -> None:
        self.heard = Heard()

    @abstractmethod
    def body(self, data: Any) -> None:
        """A complete non-streamed answer (its parsed JSON body)."""

    def event(self, name: str | None, data: str) -> None:
        """One SSE frame of a streamed answer: its event name (if any) and its data text. By
        default its JSON object goes to `on`, typed by its own `type`, else the event name."""
        payload = json.loads(data)
        if isinstance(payload, dict):
            kind = payload.get("type")
            self.on(kind if isinstance(kind, str) else name, payload)

    def on(self, kind: str | None, payload: dict[str, Any]) -> None:  # noqa: B027 (optional)
        """One event's JSON object, for wires whose every frame is one."""

    @abstractmethod
    def error(self, data: Any) -> HeardError:
        """The provider's words in an error body (parsed JSON of any shape, or None)."""


class Adapter(ABC):
    """One wire format. Each server instantiates its own adapters, so state (the Responses
    store) lives on the instance and dies with the server.

    A wire writes `api`, `family`, `routes`, `parse`, `render`, `render_stream` and
    `error_body`; the rest say what the provider says differently from the defaults."""

    # --- what every wire writes -----------------------------------------------------------

    api: ClassVar[str]  # stable name used in the log: "openai-chat", ...
    family: ClassVar[str]  # "openai" | "anthropic" | "gemini": decides the shape of shared routes
    routes: ClassVar[tuple[str, ...]]  # POST paths after the optional /s/NAME[/SESSION] prefix

    @abstractmethod
    def parse(self, body: Any) -> Parsed:
        """Wire JSON → the neutral request; raise RequestError for what the provider refuses."""

    @abstractmethod
    def render(self, resolved: Resolved, parsed: Parsed) -> Body: ...

    @abstractmethod
    def render_stream(self, resolved: Resolved, parsed: Parsed) -> Stream: ...

    @abstractmethod
    def error_body(self, error: RequestError, request_id: str) -> bytes: ...

    # --- what a wire may say differently --------------------------------------------------

    # POST paths that carry a parameter (Gemini's model), matched whole; `route_help` shows them.
    route_pattern: ClassVar[re.Pattern[str] | None] = None
    route_help: ClassVar[tuple[str, ...]] = ()
    get_prefix: ClassVar[str | None] = None  # GET paths starting with this go to `get`
    models_routes: ClassVar[tuple[str, ...]] = ("v1/models",)  # GET listing (and /{id}) paths
    # Request headers that mark this family's SDKs, for the routes families share (v1/models).
    family_headers: ClassVar[tuple[bytes, ...]] = ()
    request_id_header: ClassVar[str] = "x-mockllm-request-id"  # the provider's, if it has one
    stream_content_type: ClassVar[bytes] = b"text/event-stream; charset=utf-8"  # or binary framing
    invalid_json_message: ClassVar[str] = "mockllm: the request body is not valid JSON"
    shape: ClassVar[Shape] = dict  # the types of the fields it reads (shapes.py)
    stream_error_status: ClassVar[int] = 500  # a stream_error fault, asked for without a stream
    # Fault statuses this wire does not have, served as the one they mean (Gemini: 529 → 503).
    status_aliases: ClassVar[Mapping[int, int]] = {}
    rules: ClassVar[RuleSet] = RuleSet()  # set by `register`: the provider's history rules
    flavor: str = "openai"  # the server's --flavor, set when the server builds its adapters

    def parse_at(self, body: Any, route: str) -> Parsed:
        """`parse`, for a wire whose path says part of the request (Gemini: model, stream)."""
        return self.parse(body)

    # Request headers that decide whether a body is accepted (Anthropic's betas): the
    # server hands them to `parse_headed` and caches prepared bodies by them too.
    parse_headers: ClassVar[tuple[bytes, ...]] = ()

    def parse_headed(self, body: Any, route: str, headers: Mapping[bytes, str]) -> Parsed:
        """`parse_at` as a live request is read, with its `parse_headers`; `parse` alone
        (the log, the recorder) accepts what some header would allow."""
        return self.parse_at(body, route)

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        """The id of call `index` in the reply of `turn` on `attempt`: what the client must
        answer it with (fresh on every attempt: docs/scenarios.md, "Retries")."""
        return scripted_id(scenario, turn, index, "call_", 24, attempt)

    def models_body(self) -> bytes:
        """The model listing (GET v1/models), in OpenAI's shape unless the wire has its own."""
        data = [
            {"id": m, "object": "model", "created": 1735689600, "owned_by": "mockllm"}
            for m in MODELS
        ]
        return dumps({"object": "list", "data": data})

    def model_body(self, model: str) -> bytes:
        """One model: any id is served, in the shape of the listing's entries."""
        entry = json.loads(self.models_body())["data"][0]
        entry.update({"id": model})
        return json.dumps(entry).encode()

    def invalid_json(self, detail: str) -> RequestError:
        """The provider's answer to a body that is not JSON it reads; `detail` says why."""
        return RequestError(400, self.invalid_json_message, kind="invalid_json")

    def limit_refused(self, detail: str) -> RequestError:
        """The invalid-JSON 400 for a body past one of mockllm's limits (a number's digits):
        the provider's text, and the limit named (docs/security.md)."""
        error = self.invalid_json(detail)
        if detail in error.message:
            return error
        return RequestError(400, f"{error.message} (mockllm: {detail})", kind="invalid_json")

    def refusal(self, error: Exception, raw: bytes) -> RequestError | None:
        """The 400 for a body that made reading it fail with `error`: it nests too deeply, or
        the first field whose type is off; None when the body is not to blame."""
        if isinstance(error, RecursionError):
            return self.invalid_json("nested too deeply")
        if not raw:
            return None  # failed before the body was read: not the body's doing
        try:
            found = mismatch(wirejson.loads(raw, wirejson.HIGHEST_NUMBER_DIGITS), self.shape)
        except wirejson.InvalidJson as e:
            return self.invalid_json(e.detail)
        except RecursionError:
            return self.invalid_json("nested too deeply")
        return None if found is None else self.type_error(*found)

    def type_error(self, path: Path, expected: str, value: Any) -> RequestError:
        """How this provider names a field of the wrong type."""
        return RequestError(400, f"Invalid type for {path}: expected {expected}")

    def fault_error(
        self,
        status: int,
        error_type: str | None = None,
        message: str | None = None,
        code: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> RequestError:
        """A scripted HTTP error in this provider's words, unless the scenario gives its own."""
        status = self.status_aliases.get(status, status)
        default_type, default_message, default_code = self.fault_texts(status)
        return RequestError(
            status,
            message or default_message,
            kind="fault",
            code=code or default_code,
            error_type=error_type or default_type,
            headers=headers,
        )

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        """(error type, message, code) the provider sends with this status."""
        return "error", f"mockllm fault: HTTP {status}", None

    def stream_error_events(self, error: RequestError, sent: int) -> list[bytes]:
        """The in-band error frame(s) that end a stream after `sent` events: by default the
        error body as one `data:` frame, as Chat Completions sends it."""
        return [sse_frame(self.error_body(error, ""))]

    def validate(self, body: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        """Every rule this request breaks, in the order the provider would report them."""
        return self.rules.run(body, ctx)

    def variant(self, flavor: str) -> Adapter:
        """This wire in a provider's flavour, chosen by a `/f/FLAVOR/` URL (Chat Completions
        has flavours, docs/flavours.md; the other wires are themselves)."""
        return self

    def for_route(self, route: str) -> Adapter:
        """This wire as `route` asks for it (Azure's Chat routes: the azure flavour)."""
        return self

    def for_scenario(self, scenario: Scenario) -> Adapter:
        """The adapter that answers for `scenario` (its `flavor:`, unless the URL chose)."""
        return self

    def request_id(self, *parts: object) -> str:
        """Derived afresh: the attempt is among the parts, so it never repeats."""
        return fresh("req_", 32, *parts, alphabet=HEX)

    def error_headers(self, error: RequestError) -> list[tuple[bytes, bytes]]:
        """Headers that say which error this is, where the provider says it in a header
        (Bedrock's x-amzn-ErrorType) rather than in the body. None by default."""
        return []

    def wire_headers(self, status: int, retry_after: float | None) -> list[tuple[bytes, bytes]]:
        """The provider's own response headers (versions, rate limits) for this status; a
        429's rate-limit headers agree with its retry-after. None by default."""
        return []

    def reparse(self, raw: bytes) -> Conversation | None:
        """A logged request's conversation, parsed again when the log is read. The log keeps
        the bytes, not the parsed objects, of requests whose parse is `cacheable`: thousands
        of parsed histories would make every garbage collection walk them. `raw` is a body
        `wirejson.loads` read when it arrived, and reads the same way again."""
        try:
            return self.parse(wirejson.loads(raw, wirejson.HIGHEST_NUMBER_DIGITS)).conversation
        except (ValueError, RequestError):
            return None

    def served(  # noqa: B027 (most keep no state)
        self, resolved: Resolved, parsed: Parsed, body: bytes | None = None
    ) -> None:
        """Called once a reply is on its way: for adapters that keep state (Responses);
        `body`, the reply's JSON body as rendered (None for a stream)."""

    def as_sent(self, resolved: Resolved) -> Resolved:
        """The reply as this wire carries it, which the log shows as served; all of it unless
        the wire cannot say part of it (Gemini sends no call whose arguments are not an object)."""
        return resolved

    def get(self, rest: str) -> tuple[int, bytes]:
        """Answer GET {get_prefix}{rest}; by default there is nothing to get: a 404 in this
        provider's error shape (only adapters that declare a get_prefix are ever asked)."""
        error = RequestError(
            404, f"mockllm: nothing at {self.get_prefix or ''}{rest}", kind="not_found"
        )
        return 404, self.error_body(error, "")

    def reset(self) -> None:  # noqa: B027 (most adapters keep no state)
        """Forget any state kept between requests."""


# --- optional protocols: only a wire whose requests refer back to earlier answers ---------


@runtime_checkable
class SharedResponses(Protocol):
    """A wire whose requests may name a response stored by an earlier one (Responses'
    previous_response_id). On a shared store the server loads the response a request
    names before parsing it (`referred`, then `adopt`) and shares what `served` stored
    (`shareable`); the server asks only adapters that are instances of this protocol."""

    def referred(self, body: Any) -> str | None:
        """The id of the stored response this request body names, if any."""

    def adopt(self, key: str, data: bytes | None) -> None:
        """Hold `data` (as `shareable` made it) as the stored response `key`; None: the
        shared store has no such response, so neither may this server."""

    def shareable(
        self, resolved: Resolved, parsed: Parsed, body: bytes | None = None
    ) -> tuple[str, bytes] | None:
        """(key, bytes) of what `served` stored for this reply, for the other servers;
        `body`, the reply's JSON body when it was just rendered (not for a stream)."""


# Adapter classes are few and fixed: each is checked against the protocol once. A check of a
# runtime protocol walks its attributes every time (about 1,400 bytecodes on Python 3.11),
# and a shared store asks it twice per request.
_SHARING: dict[type, bool] = {}


def shares_responses(adapter: object) -> TypeGuard[SharedResponses]:
    """`isinstance(adapter, SharedResponses)`, remembered per adapter class."""
    kind = type(adapter)
    found = _SHARING.get(kind)
    if found is None:
        found = _SHARING[kind] = isinstance(adapter, SharedResponses)
    return found


@runtime_checkable
class RecordedResponses(Protocol):
    """A wire whose later requests refer back to an upstream's answer (Responses'
    previous_response_id): `mockllm record` hands it each answer it heard in full, so
    that the next request's parse finds it."""

    def recorded(self, parsed: Parsed, heard: Heard) -> None:
        """Keep what the upstream answered to `parsed`."""


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def fragments(text: str, count: int) -> list[str]:
    """`text` cut into at most `count` nearly equal pieces (none when empty)."""
    return chunks(text, max(1, math.ceil(len(text) / count))) if text else []


def scripted_id(
    scenario: Scenario, turn: int, index: int, prefix: str, length: int, attempt: int = 1
) -> str:
    """The scenario's own id for call `index`, else one derived from scenario, turn, position
    and, past the first attempt, the attempt."""
    served = scenario.turn(turn) if turn >= 0 else None
    calls = served.reply.tool_calls if served else ()
    explicit = calls[index].id if index < len(calls) else None
    if explicit is not None:
        return explicit
    if attempt == 1:
        return derive(prefix, length, scenario.name, turn, index)
    return derive(prefix, length, scenario.name, turn, index, f"attempt {attempt}")


def merge_assistants(messages: list[Message], sep: str = "\n") -> list[Message]:
    """The API merges consecutive same-role messages into one turn: one reply, not two."""
    out: list[Message] = []
    for m in messages:
        if out and m.role == "assistant" and out[-1].role == "assistant":
            prev = out[-1]
            text = sep.join(t for t in (prev.text, m.text) if t)
            reasoning = (
                prev.reasoning if m.reasoning is None else (prev.reasoning or "") + m.reasoning
            )
            calls = prev.tool_calls + m.tool_calls
            out[-1] = replace(prev, text=text, tool_calls=calls, reasoning=reasoning)
        else:
            out.append(m)
    return out


def text_of(content: Any) -> str:
    """The text of a content field: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


MODELS = (
    "gpt-4o-mini",
    "gpt-4.1",
    "gpt-5",
    "o3",
    "deepseek-chat",
    "deepseek-reasoner",
    "claude-sonnet-4-6",
    "claude-opus-4-7",
    "claude-haiku-4-5",
    "mockllm",
)
