"""OpenAI Responses (https://platform.openai.com/docs/api-reference/responses), with its
state (`store`, `previous_response_id`: the responses themselves are kept by
responses_store.py)."""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Mapping
from typing import Any

from mockllm.core.cache import SizedLru
from mockllm.core.conversation import (
    Conversation,
    Message,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSearch,
)
from mockllm.core.encoding import canonical_json, compact_json, digest, sse_frame
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.heard import Heard
from mockllm.core.ids import HEX, derive
from mockllm.core.scenario import Scenario
from mockllm.errors import RequestError
from mockllm.providers import output_formats, shapes
from mockllm.providers.base import (
    Adapter,
    Body,
    Parsed,
    Stream,
    chunks,
    dumps,
    fragments,
    scripted_id,
    text_of,
)

from .openai_chat import (
    INVALID_JSON,
    missing,
    openai_error_body,
    openai_fault_texts,
    openai_headers,
    snapshot,
    wrong_type,
)
from .responses_store import ResponseStore, Stored

INCOMPLETE_REASONS = {"length": "max_output_tokens", "content_filter": "content_filter"}
# Request fields the real API echoes on the response object, with its defaults, in the
# order it sends them (with the fields it adds around them: see `_response`).
ECHOED: dict[str, Any] = {
    "frequency_penalty": 0.0,
    "instructions": None,
    "max_output_tokens": None,
    "max_tool_calls": None,
    "parallel_tool_calls": True,
    "presence_penalty": 0.0,
    "previous_response_id": None,
    "prompt_cache_key": None,
    "prompt_cache_retention": None,
    "reasoning": {"effort": None, "summary": None},
    "safety_identifier": None,
    "service_tier": "auto",
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "tool_choice": "auto",
    "tools": [],
    "top_logprobs": 0,
    "top_p": 1.0,
    "truncation": "disabled",
    "user": None,
    "metadata": {},
}
ENCRYPTED = "reasoning.encrypted_content"
# The header serving/websocket.py marks its requests with (one per response.create frame).
TRANSPORT_HEADER = b"x-mockllm-transport"


class Responses(Adapter):
    api = "openai-responses"
    family = "openai"
    # Azure OpenAI's: the SDK's AzureOpenAI posts to /openai/responses, the GA base /openai/v1/.
    routes = ("v1/responses", "responses", "openai/responses", "openai/v1/responses")
    get_prefix = "v1/responses/"
    request_id_header = "x-request-id"
    invalid_json_message = INVALID_JSON
    shape = shapes.RESPONSES

    def type_error(self, path: shapes.Path, expected: str, value: Any) -> RequestError:
        return wrong_type(shapes.openai_param(path), expected, value)

    def __init__(self) -> None:
        self._store = ResponseStore()

    # --- parse -------------------------------------------------------------------------

    # Set on the requests serving/websocket.py hands over: one per `response.create` frame.
    parse_headers = (TRANSPORT_HEADER,)

    def parse_headed(self, body: Any, route: str, headers: Mapping[bytes, str]) -> Parsed:
        return self._parse(body, headers.get(TRANSPORT_HEADER) == "websocket")

    def parse(self, body: Any) -> Parsed:
        return self._parse(body, False)

    def _parse(self, body: Any, connection: bool) -> Parsed:
        if not isinstance(body, dict):
            raise wrong_type("body", "an object", body)
        if not body.get("model"):
            raise missing("model")
        previous = body.get("previous_response_id")
        history = self._previous(previous)
        earlier = self._carried(previous)
        items = body.get("input")
        if items is None and previous is None:
            raise missing("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        if not isinstance(items, list | None):
            raise wrong_type("input", "a string or an array of input items", items)
        referring = isinstance(items, list) and self._referenced(items)
        if history and items:
            self._no_duplicate_ids(str(previous), items)
        messages = history + resent_dropped(history, tuple(_items(items or [])))
        system = _system(body.get("instructions"))
        cacheable = previous is None and not referring
        shape, canonical = _canonical(body, cacheable and not _offers_tools(items))
        tools, deferred, search, wire_names, carried = (
            _offer(body.get("tools"), items or [], earlier)
            if shape is None
            else _shaped_offer(body.get("tools"), shape[1])
        )
        conversation = Conversation(
            model=str(body["model"]),
            messages=system + messages,
            tools=tools,
            tool_choice=_tool_choice(body.get("tool_choice")),
            stream=body.get("stream") is True,
            output=output_formats.openai_responses(body.get("text")),
            parallel_tool_calls=body.get("parallel_tool_calls") is not False,
            tool_search=search,
            deferred=deferred,
        )
        include = body.get("include")
        options = {
            "fingerprint": digest(canonical.encode(), 16).hex(),
            "store": body.get("store") is not False,
            # the echoed fields the request set (the rest go out as their defaults)
            "sent": {k: v for k, v in body.items() if v is not None and k in ECHOED},
            "encrypted": isinstance(include, list) and ENCRYPTED in include,
            "summary": _summary_asked(body.get("reasoning")),
            "stored_messages": messages,  # instructions are not carried to the next response
            "wire_names": wire_names,  # (both as `Offer` says)
            "carried": carried,
            # over WebSocket a response is kept for the connection's next request to name
            # (previous_response_id) even with `store: false`, though never for a GET
            "connection": connection,
        }
        # A request that continues a stored response parses to what the store holds: not
        # cached.
        return _parsed(conversation, options, cacheable, shape)

    def _referenced(self, items: list[Any]) -> bool:
        """Replace each `item_reference` in `items` by the stored item it names, in place
        (the history rules read the same body), as the API reads it; True if there was one.
        An id no stored response holds is the API's own 404."""
        found = False
        for i, item in enumerate(items):
            if isinstance(item, dict) and item.get("type") == "item_reference":
                item_id = item.get("id")
                if not isinstance(item_id, str):
                    raise missing(f"input[{i}].id")
                stored = self._store.item(item_id)
                if stored is None:
                    raise RequestError(
                        404,
                        f"Item with id '{item_id}' not found. Items are not persisted when "
                        "`store` is set to false. Try again with `store` set to true, or "
                        "remove this item from your input.",
                        kind="item_not_found",
                        param="input",
                    )
                items[i], found = stored, True
        return found

    def _no_duplicate_ids(self, previous: str, items: list[Any]) -> None:
        """An input item sent again with the `id` the previous response gave it: the API's
        400 (MacPaw/OpenAI#432, openai/openai-agents-python#1789). Without an `id` it is
        accepted (`resent_dropped`)."""
        stored = self._store.get(previous)
        if stored is None or stored.body is None:
            return
        ids = {i for i in (item.get("id") for item in items if isinstance(item, dict)) if i}
        if not ids:
            return
        for item in json.loads(stored.body).get("output") or ():
            if isinstance(item, dict) and item.get("id") in ids:
                raise RequestError(
                    400,
                    f"Duplicate item found with id {item['id']}. Remove duplicate items from "
                    "your input and try again.",
                    kind="duplicate_item",
                    param="input",
                )

    def _carried(self, response_id: Any) -> Offered:
        """The tools the continued response's conversation offered in its input items."""
        stored = self._store.get(str(response_id)) if response_id is not None else None
        if stored is None:
            return []
        return [
            (Tool(flat, freeform=kind == "custom"), (namespace, bare, kind))
            for flat, namespace, bare, kind in stored.carried()
        ]

    def _previous(self, response_id: Any) -> tuple[Message, ...]:
        if response_id is None:
            return ()
        stored = self._store.get(str(response_id))
        if stored is None:
            raise RequestError(
                404,
                f"Previous response with id '{response_id}' not found.",
                kind="previous_response_not_found",
                param="previous_response_id",
                code="previous_response_not_found",
            )
        return self._store.continued(str(response_id), stored)

    # --- render ------------------------------------------------------------------------

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        return scripted_id(scenario, turn, index, "call_", 24, attempt)

    def render(self, resolved: Resolved, parsed: Parsed) -> Body:
        """The finished response object (pure: storing it is `served`'s job)."""
        return Body(self._finished(resolved, parsed))

    def _finished(self, resolved: Resolved, parsed: Parsed) -> bytes:
        incomplete = resolved.reply.finish in INCOMPLETE_REASONS
        output = self._output(resolved, parsed)
        if incomplete and output and "status" in output[-1]:
            output[-1]["status"] = "incomplete"
        status = "incomplete" if incomplete else "completed"
        return _finished(resolved, parsed, status, output)

    def served(self, resolved: Resolved, parsed: Parsed, body: bytes | None = None) -> None:
        """Keep the response for previous_response_id and GET, unless `store: false`
        (over WebSocket, then, for previous_response_id alone)."""
        stored = parsed.options["store"]
        if not stored and not parsed.options.get("connection"):
            return
        reply = resolved.reply
        calls = tuple(
            ToolCall(
                self.call_id(resolved.scenario, resolved.turn, i, resolved.attempt),
                c.name,
                c.arguments,
            )
            for i, c in enumerate(reply.tool_calls)
        )
        own = Message("assistant", reply.text, calls, reasoning=reply.reasoning)
        messages = (*parsed.options["stored_messages"], own)
        rendered = (
            (body if body is not None else self._finished(resolved, parsed)) if stored else None
        )
        kept = Stored.made(messages, rendered, parsed.options["carried"])
        # The render's own id, where its body is at hand (`_finished` writes it first), not
        # derived again: the same id, by the same hash of the same parts.
        response_id = _id_in(body) if body is not None else _response_id(resolved, parsed)
        self._store.keep(response_id, kept, messages)

    def warm_up(self, parsed: Parsed, created: int) -> list[bytes]:
        """A `response.create` with `generate: false` (WebSocket): no turn, no output; the
        request is kept so that the next one may continue it (previous_response_id). The
        events' JSON, `response.created` then `response.completed`."""
        options = parsed.options
        response_id = derive("resp_", 50, "warm-up", options["fingerprint"], alphabet=HEX)
        self._store.keep(
            response_id, Stored.made(options["stored_messages"], None, options["carried"])
        )
        echo = {k: _echoed(options["sent"].get(k), d) for k, d in ECHOED.items()}
        head = {"id": response_id, "object": "response", "created_at": created}
        model = snapshot(parsed.conversation.model)
        out = []
        for n, (kind, status) in enumerate(
            (("response.created", "in_progress"), ("response.completed", "completed"))
        ):
            usage = _ZERO_USAGE if status == "completed" else None
            body = {**head, "status": status, "model": model, "output": [], **echo, "usage": usage}
            out.append(dumps({"type": kind, "sequence_number": n, "response": body}))
        return out

    def recorded(self, parsed: Parsed, heard: Heard) -> None:
        """Keep an upstream's answer under its own id: the next request names it."""
        if heard.response_id is None or not parsed.options["store"]:
            return
        calls = tuple(ToolCall(c.id, c.name, c.arguments) for c in heard.calls)
        own = Message("assistant", heard.text, calls, reasoning=heard.reasoning)
        kept = Stored.made(
            (*parsed.options["stored_messages"], own), None, parsed.options["carried"]
        )
        self._store.keep(heard.response_id, kept)

    def render_stream(self, resolved: Resolved, parsed: Parsed) -> Stream:
        numbers = itertools.count()

        def event(
            kind: str, payload: dict[str, Any], part: str, carries: str | None = None
        ) -> Event:
            data = dumps({"type": kind, "sequence_number": next(numbers), **payload})
            return Event(sse_frame(data, kind), part, None, carries)

        start = self._response(resolved, parsed, "in_progress", [])
        events = [event("response.created", {"response": start}, "head")]
        events.append(event("response.in_progress", {"response": start}, "head"))
        calls = itertools.count()
        for index, item in enumerate(self._output(resolved, parsed)):
            client = item["type"] == "tool_search_call" and item["execution"] == "client"
            call = next(calls) if item["type"] in CALL_ITEMS or client else -1
            events += _item_events(event, index, item, resolved, call)
        final = json.loads(self._finished(resolved, parsed))
        kind = "response.completed" if final["status"] == "completed" else "response.incomplete"
        events.append(event(kind, {"response": final}, "done"))
        return Stream(events)

    def _response(
        self, resolved: Resolved, parsed: Parsed, status: str, output: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """The response object as a dict (streamed events; `render` writes the same bytes
        from `_TEMPLATE`)."""
        reason = INCOMPLETE_REASONS.get(resolved.reply.finish) if status == "incomplete" else None
        sent = parsed.options["sent"]
        echo = {k: _echoed(sent.get(k), default) for k, default in ECHOED.items()}
        done = status != "in_progress"
        head: dict[str, Any] = {
            "id": _response_id(resolved, parsed),
            "object": "response",
            "created_at": resolved.created,
            "status": status,
            "background": False,
        }
        if done and not parsed.conversation.stream:  # only the non-streamed object bills
            head["billing"] = {"payer": "developer"}
        rest = {
            "completed_at": resolved.created if status == "completed" else None,
            "error": None,
            "incomplete_details": {"reason": reason} if reason else None,
            "model": snapshot(parsed.conversation.model),
            "moderation": None,
            "output": output,
        }
        body = {**head, **rest, **echo, "usage": _usage(resolved) if done else None}
        body["service_tier"] = "default" if done else echo["service_tier"]
        return {k: body[k] for k in _FIELD_ORDER if k in body}

    def _output(self, resolved: Resolved, parsed: Parsed) -> list[dict[str, Any]]:
        reply, name, turn = resolved.reply, resolved.scenario.name, resolved.id_turn
        items: list[dict[str, Any]] = []
        if reply.reasoning is not None:
            item: dict[str, Any] = {"id": reasoning_item_id(name, turn), "type": "reasoning"}
            if parsed.options.get("encrypted"):
                item["encrypted_content"] = encrypt(reply.reasoning)
            # The summary is there only when the request asked for one (reasoning.summary).
            item["summary"] = [_summary(reply.reasoning)] if parsed.options.get("summary") else []
            items.append(item)
        items += _server_search(resolved, parsed)
        if reply.text_part or reply.refusal is not None:  # an empty reply: no item at all
            msg_id = derive("msg_", 50, name, turn, "message", alphabet=HEX)
            content = [_output_text(reply.text)]
            if reply.refusal is not None:  # the model declines: a refusal part, no text
                content = [{"type": "refusal", "refusal": reply.refusal}]
            items.append(
                {
                    "id": msg_id,
                    "type": "message",
                    "status": "completed",
                    "content": content,
                    "role": "assistant",
                }
            )
        wire_names = parsed.options.get("wire_names") or {}
        for i, call in enumerate(reply.tool_calls):
            call_id = self.call_id(resolved.scenario, resolved.turn, i, resolved.attempt)
            namespace, bare, kind = wire_names.get(call.name, (None, call.name, "function"))
            if kind == "tool_search":  # the client's own search (execution: client)
                items.append(_search_call(name, turn, i, call_id, call.arguments))
                continue
            if kind == "custom":  # a free-form tool: its input is text, not JSON arguments
                item = {
                    "id": derive("ctc_", 50, name, turn, i, alphabet=HEX),
                    "type": "custom_tool_call",
                    "status": "completed",
                    "call_id": call_id,
                    "input": call.arguments,
                    "name": bare,
                }
            else:
                item = {
                    "id": derive("fc_", 50, name, turn, i, alphabet=HEX),
                    "type": "function_call",
                    "status": "completed",
                    "arguments": call.arguments,
                    "call_id": call_id,
                    "name": bare,
                }
            if namespace is not None:
                item["namespace"] = namespace
            items.append(item)
        return items

    def get(self, rest: str) -> tuple[int, bytes]:
        stored = self._store.get(rest)
        if stored is None or stored.body is None:
            error = RequestError(404, f"No response found with id '{rest}'.", param="response_id")
            return 404, openai_error_body(error)
        return 200, stored.body

    def reset(self) -> None:
        self._store.clear()

    # --- a shared store (base.SharedResponses) ---------------------------------------------

    def referred(self, body: Any) -> str | None:
        found = body.get("previous_response_id") if isinstance(body, dict) else None
        return None if found is None else str(found)

    def shareable(
        self, resolved: Resolved, parsed: Parsed, body: bytes | None = None
    ) -> tuple[str, bytes] | None:
        """The conversation (to continue it) and the rendered response (for GET), as JSON."""
        response_id = _response_id(resolved, parsed)
        stored = self._store.get(response_id) if parsed.options["store"] else None
        if stored is None:
            return None
        return response_id, stored.shared()  # `served` renders what it keeps

    def adopt(self, key: str, data: bytes | None) -> None:
        if data is None:
            self._store.drop(key)
        else:
            self._store.keep(key, Stored.adopted(data))

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        return openai_error_body(error)

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        return openai_fault_texts(status)

    def wire_headers(self, status: int, retry_after: float | None) -> list[tuple[bytes, bytes]]:
        return openai_headers(status, retry_after)

    def stream_error_events(self, error: RequestError, sent: int) -> list[bytes]:
        payload = {
            "type": "error",
            "sequence_number": sent,
            "code": error.code or error.error_type,
            "message": error.message,
            "param": error.param,
        }
        return [sse_frame(dumps(payload), "error")]


_ZERO_USAGE = {
    "input_tokens": 0,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 0,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 0,
}


def reasoning_item_id(scenario: str, turn: int | str) -> str:
    return derive("rs_", 50, scenario, turn, "reasoning", alphabet=HEX)


def _response_id(resolved: Resolved, parsed: Parsed) -> str:
    """Content-addressed: the same request to the same turn names the same response."""
    return derive(
        "resp_",
        50,
        resolved.scenario.name,
        resolved.id_turn,
        parsed.options["fingerprint"],
        alphabet=HEX,
    )


def _id_in(body: bytes) -> str:
    """The response id of a body `_finished` wrote: its first field, `{"id":"resp_…"`
    (`resp_` and hex: no escape)."""
    return body[7 : body.index(b'"', 7)].decode()


_FIELD_ORDER = (
    "id", "object", "created_at", "status", "background", "billing", "completed_at", "error",
    "frequency_penalty", "incomplete_details", "instructions", "max_output_tokens",
    "max_tool_calls", "model", "moderation", "output", "parallel_tool_calls",
    "presence_penalty", "previous_response_id", "prompt_cache_key", "prompt_cache_retention",
    "reasoning", "safety_identifier", "service_tier", "store", "temperature", "text",
    "tool_choice", "tools", "top_logprobs", "top_p", "truncation", "usage", "user", "metadata",
)  # fmt: skip


# The finished response object as `_response` writes it, cut into one `,"key":value`
# fragment per field in `_FIELD_ORDER`, each echoed field at its default: `_finished`
# replaces only the fragments of what the request set and what the reply decides, and
# skips encoding the ~25 defaults again for every request.
_KEY = {k: compact_json(k) + ":" for k in _FIELD_ORDER}
_TEMPLATE = ["," + _KEY[k] + compact_json(ECHOED.get(k)) for k in _FIELD_ORDER]
_TEMPLATE[_FIELD_ORDER.index("object")] = ',"object":"response"'
_TEMPLATE[_FIELD_ORDER.index("background")] = ',"background":false'
_SLOT = {k: i for i, k in enumerate(_FIELD_ORDER)}
_ID, _CREATED, _STATUS, _BILLING, _COMPLETED, _INCOMPLETE, _MODEL, _OUTPUT, _TIER, _USAGE = (
    _SLOT[k]
    for k in (
        "id", "created_at", "status", "billing", "completed_at", "incomplete_details", "model",
        "output", "service_tier", "usage",
    )
)  # fmt: skip
_BILLED = ',"billing":{"payer":"developer"}'


def _finished(
    resolved: Resolved, parsed: Parsed, status: str, output: list[dict[str, Any]]
) -> bytes:
    """`dumps(_response(resolved, parsed, status, output))` for a completed or incomplete
    response, from `_TEMPLATE` (held equal by tests/unit/providers/test_responses_template.py)."""
    parts = _TEMPLATE.copy()
    for key, value in parsed.options["sent"].items():
        parts[_SLOT[key]] = "," + _KEY[key] + compact_json(_echoed(value, ECHOED[key]))
    reason = INCOMPLETE_REASONS.get(resolved.reply.finish) if status == "incomplete" else None
    parts[_ID] = f'{{"id":"{_response_id(resolved, parsed)}"'  # resp_ and hex: no escapes
    parts[_CREATED] = f',"created_at":{resolved.created}'
    parts[_STATUS] = f',"status":"{status}"'
    parts[_BILLING] = "" if parsed.conversation.stream else _BILLED
    if status == "completed":
        parts[_COMPLETED] = f',"completed_at":{resolved.created}'
    if reason:
        parts[_INCOMPLETE] = ',"incomplete_details":' + compact_json({"reason": reason})
    parts[_MODEL] = ',"model":' + compact_json(snapshot(parsed.conversation.model))
    parts[_OUTPUT] = ',"output":' + compact_json(output)
    parts[_TIER] = ',"service_tier":"default"'  # what was asked for is not what served it
    parts[_USAGE] = ',"usage":' + compact_json(_usage(resolved))
    return ("".join(parts) + "}").encode()


def _parsed(
    conversation: Conversation, options: dict[str, Any], cacheable: bool, shape: Any
) -> Parsed:
    """Rendered, the whole request body shows (its fingerprint); but where no input item
    offers tools, `input` shows only in the response id: one rendering then serves every
    input (`shape`: the body but its input), each request's id put in (`Parsed.id_part`,
    serving/rendered.py)."""
    fingerprint: str = options["fingerprint"]
    if shape is not None:
        return Parsed(conversation, options, render_key=shape, id_part=fingerprint)
    return Parsed(conversation, options, cacheable=cacheable, render_key=fingerprint)


def _system(instructions: Any) -> tuple[Message, ...]:
    if isinstance(instructions, str) and instructions:
        return (Message("system", instructions, at="instructions"),)
    return ()


def _canonical(body: dict[str, Any], shaped: bool) -> tuple[tuple[str, str] | None, str]:
    """`canonical_json(body)` (what the fingerprint hashes) and, if `shaped`, the body's
    shape: its canonical text before and after `input`. The text is then put together
    from those and the input's, as `canonical_json` writes it (sorted keys, `, ` and
    `: `), so that the rest of the body (its tools) is encoded once, not twice."""
    if not shaped or body.get("input") is None:
        return None, canonical_json(body)
    before = canonical_json({k: v for k, v in body.items() if k < "input"})
    after = canonical_json({k: v for k, v in body.items() if k > "input"})
    fields = ['"input": ' + canonical_json(body["input"])]
    if before != "{}":
        fields.insert(0, before[1:-1])
    if after != "{}":
        fields.append(after[1:-1])
    return (before, after), "{" + ", ".join(fields) + "}"


def _offers_tools(items: Any) -> bool:
    """Whether an input item offers tools (Codex's `additional_tools`, a search's output)."""
    return isinstance(items, list) and any(
        isinstance(i, dict) and i.get("type") in ("additional_tools", "tool_search_output")
        for i in items
    )


def _echoed(sent: Any, default: Any) -> Any:
    """What the request set, completed with the defaults the API fills in beside it."""
    if sent is None:
        return default
    if isinstance(default, dict) and isinstance(sent, dict):
        return {**default, **sent}
    return sent


def _summary_asked(reasoning: Any) -> bool:
    if not isinstance(reasoning, dict):
        return False
    return reasoning.get("summary") is not None or reasoning.get("generate_summary") is not None


# An opaque, deterministic stand-in for the encrypted reasoning of a stateless loop
# (`store: false` with include reasoning.encrypted_content): Fernet-looking, and checked
# when it comes back, so a client that edits or invents one is refused as the API does.
_TOKEN = "gAAAAA"


def encrypt(reasoning: str) -> str:
    text = reasoning.encode()
    seal = digest(b"mockllm-rs\x1f" + text, 12)
    return _TOKEN + base64.urlsafe_b64encode(seal + text).decode()


def decrypt(token: str) -> str | None:
    """The reasoning an `encrypt` token carries, or None when it is not one."""
    if not token.startswith(_TOKEN):
        return None
    try:
        raw = base64.urlsafe_b64decode(token[len(_TOKEN) :])
    except ValueError:
        return None
    seal, text = raw[:12], raw[12:]
    if digest(b"mockllm-rs\x1f" + text, 12) != seal:
        return None
    return text.decode(errors="replace")


def _summary(text: str) -> dict[str, str]:
    return {"type": "summary_text", "text": text}


def _output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _usage(resolved: Resolved) -> dict[str, Any]:
    return {
        "input_tokens": resolved.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": resolved.output_tokens,
        "output_tokens_details": {"reasoning_tokens": resolved.reasoning_tokens},
        "total_tokens": resolved.input_tokens + resolved.output_tokens,
    }


def _item_events(
    event: Any, index: int, item: dict[str, Any], resolved: Resolved, call: int
) -> list[Event]:
    """The added … done events of one output item (`call`: its call index), in the
    order of https://platform.openai.com/docs/api-reference/responses-streaming."""
    size = resolved.scenario.stream.text_chunk_chars
    if item["type"] == "reasoning":
        middle, part = _reasoning_events(event, index, item, size), "reasoning"
    elif item["type"] == "message":
        middle, part = _message_events(event, index, item, size), "text"
    elif item["type"] in _SEARCH_ITEMS:  # added and done, the item whole in each
        carries = compact_json(item["arguments"]) if item.get("execution") == "client" else None
        opening = f"call:{call}" if carries is not None else "search"
        added = {"output_index": index, "item": {**item, "status": "in_progress"}}
        middle = [event("response.output_item.added", added, opening, carries)]
        part = f"done:{call}" if carries is not None else "search"
    else:
        fragments_ = resolved.scenario.stream.argument_fragments
        middle, part = _call_events(event, index, item, fragments_, call), f"done:{call}"
    return [
        *middle,
        event("response.output_item.done", {"output_index": index, "item": item}, part),
    ]


def _reasoning_events(event: Any, index: int, item: dict[str, Any], size: int) -> list[Event]:
    if not item["summary"]:  # no summary asked for: the item alone
        return [
            event("response.output_item.added", {"output_index": index, "item": item}, "reasoning")
        ]
    text = item["summary"][0]["text"]
    part = {"item_id": item["id"], "output_index": index, "summary_index": 0}
    added = {"output_index": index, "item": {**item, "summary": []}}
    return [
        event("response.output_item.added", added, "reasoning"),
        event("response.reasoning_summary_part.added", {**part, "part": _summary("")}, "reasoning"),
        *(
            event("response.reasoning_summary_text.delta", {**part, "delta": p}, "reasoning", p)
            for p in chunks(text, size)
        ),
        event("response.reasoning_summary_text.done", {**part, "text": text}, "reasoning"),
        event(
            "response.reasoning_summary_part.done", {**part, "part": _summary(text)}, "reasoning"
        ),
    ]


def _message_events(event: Any, index: int, item: dict[str, Any], size: int) -> list[Event]:
    part = {"item_id": item["id"], "output_index": index, "content_index": 0}
    added = {"output_index": index, "item": {**item, "status": "in_progress", "content": []}}
    first = item["content"][0]
    if first["type"] == "refusal":  # the refusal's own events, as the API streams them
        refusal = first["refusal"]
        return [
            event("response.output_item.added", added, "text"),
            event(
                "response.content_part.added", {**part, "part": {**first, "refusal": ""}}, "text"
            ),
            *(
                event("response.refusal.delta", {**part, "delta": p}, "text")
                for p in chunks(refusal, size)
            ),
            event("response.refusal.done", {**part, "refusal": refusal}, "text"),
            event("response.content_part.done", {**part, "part": first}, "text"),
        ]
    text = first["text"]
    return [
        event("response.output_item.added", added, "text"),
        event("response.content_part.added", {**part, "part": _output_text("")}, "text"),
        *(
            event("response.output_text.delta", {**part, "delta": p, "logprobs": []}, "text", p)
            for p in chunks(text, size)
        ),
        event("response.output_text.done", {**part, "text": text, "logprobs": []}, "text"),
        event("response.content_part.done", {**part, "part": _output_text(text)}, "text"),
    ]


def _search_call(
    scenario: str, turn: int | str, i: int, call_id: str, arguments: str
) -> dict[str, Any]:
    """The client's own tool search called (a `tool_search` with `execution: client`)."""
    return {
        "id": derive("tsc_", 50, scenario, turn, i, alphabet=HEX),
        "type": "tool_search_call",
        "status": "completed",
        "arguments": json.loads(arguments),
        "call_id": call_id,
        "execution": "client",
    }


def _server_search(resolved: Resolved, parsed: Parsed) -> list[dict[str, Any]]:
    """A hosted tool search (`tool_search`, run by the API): its `tool_search_call` and the
    `tool_search_output` loading the deferred tools found, namespaces kept."""
    reply, search = resolved.reply, parsed.conversation.tool_search
    if reply.search is None or search is None or search.kind != "server":
        return []
    name, turn = resolved.scenario.name, resolved.id_turn
    wire_names = parsed.options.get("wire_names") or {}
    by_name = {t.name: t for t in parsed.conversation.deferred}
    tools: list[dict[str, Any]] = []
    spaces: dict[str, dict[str, Any]] = {}
    for found in reply.found:
        tool = by_name[found]
        namespace, bare, _ = wire_names.get(found, (None, found, "function"))
        definition: dict[str, Any] = {"type": "function", "name": bare}
        definition["description"] = tool.description
        definition.update(parameters=tool.parameters, strict=tool.strict, defer_loading=True)
        if namespace is None:
            tools.append(definition)
            continue
        if namespace not in spaces:
            spaces[namespace] = {"type": "namespace", "name": namespace, "description": ""}
            spaces[namespace]["tools"] = []
            tools.append(spaces[namespace])
        spaces[namespace]["tools"].append(definition)
    head: dict[str, Any] = {"status": "completed", "call_id": None, "execution": "server"}
    call: dict[str, Any] = {"id": derive("tsc_", 50, name, turn, "search", alphabet=HEX)}
    call.update(type="tool_search_call", arguments={"query": reply.search}, **head)
    output: dict[str, Any] = {"id": derive("tso_", 50, name, turn, "search", alphabet=HEX)}
    output.update(type="tool_search_output", tools=tools, **head)
    return [call, output]


def _call_events(
    event: Any, index: int, item: dict[str, Any], pieces: int, call: int
) -> list[Event]:
    at = {"item_id": item["id"], "output_index": index}
    field_, kind = (
        ("input", "custom_tool_call_input")
        if item["type"] == "custom_tool_call"
        else ("arguments", "function_call_arguments")
    )
    added = {"output_index": index, "item": {**item, field_: "", "status": "in_progress"}}
    done = {field_: item[field_], **at}  # no name: the API sends none here
    return [
        event("response.output_item.added", added, f"call:{call}", ""),
        *(
            event(f"response.{kind}.delta", {**at, "delta": p}, f"args:{call}", p)
            for p in fragments(item[field_], pieces)
        ),
        event(f"response.{kind}.done", done, f"done:{call}"),
    ]


# --- request parsing helpers ---------------------------------------------------------------


def resent_dropped(history: tuple[Message, ...], new: tuple[Message, ...]) -> tuple[Message, ...]:
    """`new` without the leading messages that repeat the end of the stored `history`.

    strands' `OpenAIResponsesModel(stateful=True)` and CrewAI's `auto_chain` name the
    previous response and still send the run's items again (the user message, the
    `function_call` without its `id`, …). The API appends input to the stored
    conversation and accepts such items (only a resent `id` is a 400): the model reads
    them twice, and has still given one reply per response, not two; so the repeat is
    read once, for turn counting and the history check alike."""
    for size in range(min(len(history), len(new)), 0, -1):
        if all(map(_same, history[-size:], new[:size])):
            return new[size:]
    return new


def _same(stored: Message, sent: Message) -> bool:
    """The same message as far as a resend can tell: role, text, calls by id and name,
    results by call and content (arguments may come back re-encoded)."""
    return (
        stored.role == sent.role
        and (stored.text == sent.text or bool(stored.tool_calls))
        and [(c.id, c.name) for c in stored.tool_calls] == [(c.id, c.name) for c in sent.tool_calls]
        and [(r.call_id, r.content) for r in stored.tool_results]
        == [(r.call_id, r.content) for r in sent.tool_results]
    )


class _Run:
    """Consecutive output items (message, function_call, reasoning): one assistant reply."""

    def __init__(self, first: int) -> None:
        self.first = first  # index of its first item in `input`
        self.texts: list[str] = []
        self.calls: list[ToolCall] = []
        self.reasoning: list[str] = []

    def message(self) -> Message:
        reasoning = "\n".join(self.reasoning) if self.reasoning else None
        text = "\n".join(self.texts)
        return Message(
            "assistant", text, tuple(self.calls), reasoning=reasoning, at=f"input[{self.first}]"
        )


def _items(items: list[Any]) -> list[Message]:
    out: list[Message] = []
    run: _Run | None = None
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise wrong_type(f"input[{i}]", "an object", item)
        kind = item.get("type", "message")
        role = item.get("role")
        if (
            kind in ("function_call", "custom_tool_call", "reasoning", "tool_search_call")
            or (kind == "message" and role == "assistant")
            or (kind == "tool_search_output" and item.get("execution") != "client")
        ):
            run = run or _Run(i)
            _add_output_item(run, item, i)
            continue
        if run is not None:
            out.append(run.message())
            run = None
        if kind == "message":
            out.append(_input_message(item, i))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            result = ToolResult(str(item.get("call_id", "")), text_of(item.get("output")))
            out.append(Message("tool", tool_results=(result,), at=f"input[{i}]"))
        elif kind == "tool_search_output":  # the client's answer to its search: tools loaded
            loaded = "\n".join(f"{_LOADED}{t.name}" for t, _ in _loaded(item, i))
            result = ToolResult(str(item.get("call_id", "")), loaded)
            out.append(Message("tool", tool_results=(result,), at=f"input[{i}]"))
    if run is not None:
        out.append(run.message())
    return out


def _add_output_item(run: _Run, item: dict[str, Any], i: int) -> None:
    kind = item.get("type", "message")
    if kind == "message":
        run.texts.append(text_of(item.get("content")))
    elif kind in _SEARCH_ITEMS:
        # A search the API ran (execution: server) is no call to answer; the client's own
        # is a call of its `tool_search`, answered by its tool_search_output.
        if kind == "tool_search_call" and item.get("execution") == "client":
            arguments = compact_json(item.get("arguments", {}))
            run.calls.append(ToolCall(str(item.get("call_id", "")), SEARCH_TOOL, arguments))
    elif kind == "reasoning":
        token = item.get("encrypted_content")
        if token is not None:
            reasoning = decrypt(token) if isinstance(token, str) else None
            if reasoning is None:
                raise RequestError(
                    400,
                    f"The encrypted content for item {item.get('id', f'input[{i}]')} could not "
                    "be verified.",
                    param=f"input[{i}].encrypted_content",
                    code="invalid_encrypted_content",
                )
            run.reasoning.append(reasoning)
        else:
            run.reasoning.append(text_of(item.get("summary")))
    else:
        if not isinstance(item.get("call_id"), str):
            raise missing(f"input[{i}].call_id")
        arguments = item.get("arguments", item.get("input", ""))
        name, namespace = str(item.get("name", "")), item.get("namespace")
        if isinstance(namespace, str):  # a namespace tool's call: read by its flat name
            name = flat_name(namespace, name)
        run.calls.append(ToolCall(item["call_id"], name, str(arguments)))


def _input_message(item: dict[str, Any], i: int) -> Message:
    role = item.get("role")
    if role not in ("user", "system", "developer"):
        raise RequestError(
            400,
            f"Invalid value: '{role}'. Supported values are: "
            "'assistant', 'system', 'developer', and 'user'.",
            param=f"input[{i}].role",
            code="invalid_value",
        )
    text = text_of(item.get("content"))
    return Message("user" if role == "user" else "system", text, at=f"input[{i}]")


WireName = tuple[str | None, str, str]  # (namespace, name, "function" | "custom")
CALL_ITEMS = ("function_call", "custom_tool_call")
# Codex's own namespace for its built-in tools (the `additional_tools` of its "lite"
# requests): its tools are named bare, as plain functions are.
DEFAULT_NAMESPACE = "functions"


def flat_name(namespace: str, name: str) -> str:
    """`mcp__orders` + `lookup_order` → `mcp__orders__lookup_order`: a namespace tool's
    name in expectations and calls, joined as Codex joins them (codex-rs tool_name.rs)."""
    if namespace == DEFAULT_NAMESPACE:
        return name
    return namespace.rstrip("_") + "__" + name.lstrip("_")


Offered = list[tuple[Tool, WireName | None]]
SEARCH_TOOL = "tool_search"  # a Responses tool search's name in scenarios and the log
_SEARCH_ITEMS = ("tool_search_call", "tool_search_output")


# What `_offer` makes of a request's tools, in the parse's terms: the tools offered, those
# deferred, the tool search, the wire names (flat name → (namespace, name, kind) of the
# tools that are not plain functions) and the tools this conversation's input items
# offered, carried with the stored response.
Offer = tuple[
    tuple[Tool, ...], tuple[Tool, ...], ToolSearch | None, dict[str, WireName], list[list[Any]]
]


def _offer(tools: Any, items: list[Any], earlier: Offered) -> Offer:
    offered, deferred, search, own = _offered(tools, items, earlier)
    wire_names = {t.name: w for t, w in offered + deferred if w is not None}
    out = (tuple(t for t, _ in offered), tuple(t for t, _ in deferred), search, wire_names)
    return (*out, _carry(offered[own:]))


# A request shape's tools, parsed: a client sends the same few tool lists again and again
# (an agent's every request). Bounded in entries and bytes (the key is the shape's text).
_SHAPED_OFFERS = SizedLru(64)


def _shaped_offer(tools: Any, after: str) -> Offer:
    """`_offer` of a request with nothing continued and no input item offering tools, whose
    tools all come from its `tools` field: remembered by the canonical text of the body's
    fields after `input` (`_canonical`), which holds `tools`. Nothing in it is changed
    after the parse (the wire names and the carried list are read only)."""
    found: Offer | None = _SHAPED_OFFERS.get(after)
    if found is None:
        found = _SHAPED_OFFERS.put(after, _offer(tools, [], []), len(after))
    return found


def _carry(offered: Offered) -> list[list[Any]]:
    """Tools that came from input items, not the `tools` field, as a stored response
    keeps them."""
    return [[t.name, *(w if w is not None else (None, t.name, "function"))] for t, w in offered]


def _offered(
    tools: Any, items: list[Any], earlier: Offered | None = None
) -> tuple[Offered, Offered, ToolSearch | None, int]:
    """The tools of `tools` and of `additional_tools` input items (Codex), namespaces
    flattened, each with how a call to it is written when it is not a plain function; the
    tools deferred (`defer_loading: true`) that no `tool_search_output` has loaded yet;
    and the tool search offered (a `tool_search` tool). A tool loaded stays offered for
    the rest of the conversation, also when the output is in the stored response that
    `previous_response_id` continues (`earlier`: what its input items offered), not in
    this request's input. Last, how many of the tools offered the `tools` field
    gave (they come first): the others belong to the conversation, kept with it."""
    deferred: Offered = []
    out = _tools(tools, "tools", deferred=deferred)
    own = len(out)
    loaded: Offered = []
    for i, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            out += _tools(item.get("tools"), f"input[{i}].tools", deferred=deferred)
        elif isinstance(item, dict) and item.get("type") == "tool_search_output":
            loaded += _loaded(item, i)
    found = {t.name for t, _ in loaded}
    names = {t.name for t, _ in out}
    again = [d for d in deferred if d[0].name in found]
    for tool, wire in [*loaded, *(earlier or ()), *again]:
        if tool.name not in names:
            names.add(tool.name)
            out.append((tool, wire))
    return out, [d for d in deferred if d[0].name not in names], _search(tools), own


_LOADED = "tool_search_output: "  # how a search's loaded tool reads in the log and history


def _loaded(item: dict[str, Any], i: int) -> Offered:
    """The tools a `tool_search_output` item loads (offered from then on)."""
    tools = item.get("tools")
    return _tools(tools, f"input[{i}].tools") if isinstance(tools, list) else []


def _search(tools: Any) -> ToolSearch | None:
    for t in tools if isinstance(tools, list) else ():
        if isinstance(t, dict) and t.get("type") == "tool_search":
            client = t.get("execution") == "client"
            return ToolSearch("client" if client else "server", SEARCH_TOOL)
    return None


def _tools(
    tools: Any, at: str, namespace: str | None = None, deferred: Offered | None = None
) -> Offered:
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise wrong_type(at, "an array of objects", tools)
    out: list[tuple[Tool, WireName | None]] = []
    for i, t in enumerate(tools):
        if not isinstance(t, dict):
            raise wrong_type(f"{at}[{i}]", "an object", t)
        kind = t.get("type", "function")
        if kind in ("function", "namespace", "custom") and not isinstance(t.get("name"), str):
            raise missing(f"{at}[{i}].name")
        if kind == "namespace" and namespace is None:
            out += _tools(t.get("tools"), f"{at}[{i}].tools", t["name"], deferred)
            continue
        name = str(t.get("name") or kind)
        wire: WireName | None = None
        if kind == "tool_search":  # called as a tool_search_call item, not a function
            wire = (None, name, "tool_search")
        if namespace is not None or kind == "custom":
            wire = (namespace, name, "custom" if kind == "custom" else "function")
            if namespace is not None:
                name = flat_name(namespace, name)
                wire = (None if namespace == DEFAULT_NAMESPACE else namespace, *wire[1:])
        described = t.get("description")
        text = described if isinstance(described, str) else ""
        tool = Tool(name, t.get("parameters"), _strict(t), kind == "custom", text)
        later = deferred is not None and t.get("defer_loading") is True
        (deferred if later and deferred is not None else out).append((tool, wire))
    return out


def _strict(tool: dict[str, Any]) -> bool:
    """Responses' `strict` defaults to true (the API reference: "Whether to enforce strict
    parameter validation. Default `true`."), so a tool sent without it is strict when its
    schema is one strict mode takes: an object that allows no other properties and requires
    each of its own. CrewAI and others send such tools without `strict`."""
    strict = tool.get("strict")
    if strict is not None:
        return strict is True
    schema = tool.get("parameters")
    if not isinstance(schema, dict) or schema.get("additionalProperties") is not False:
        return False
    properties, required = schema.get("properties"), schema.get("required")
    return (
        isinstance(properties, dict)
        and isinstance(required, list)
        and set(properties) == {r for r in required if isinstance(r, str)}
    )


def _tool_choice(choice: Any) -> ToolChoice | None:
    if choice is None:
        return None
    if choice in ("auto", "none", "required"):
        return ToolChoice(choice)
    if isinstance(choice, dict):
        if choice.get("type") == "allowed_tools":
            return ToolChoice("required" if choice.get("mode") == "required" else "auto")
        if choice.get("type") in ("function", "custom") and isinstance(choice.get("name"), str):
            return ToolChoice("tool", choice["name"])
        if isinstance(choice.get("type"), str):
            return ToolChoice("tool", choice["type"])
    raise RequestError(
        400,
        f"Invalid value for 'tool_choice': {choice!r}.",
        param="tool_choice",
        code="invalid_value",
    )
