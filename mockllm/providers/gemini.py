"""Gemini API (`generateContent`, `streamGenerateContent?alt=sse`): docs/http-api.md, Gemini
specifics, says what each choice below is based on.

Ids: the API sends a function call without `id` (unless the scenario scripts one); inside
mockllm a call is `turnT.callI` (its place in the conversation), and a `functionResponse`
answers the call with its `id` when it has one, else the next unanswered call of its name.
"""

from __future__ import annotations

import base64
import re
from dataclasses import replace
from functools import cache
from types import MappingProxyType
from typing import Any, ClassVar

import orjson

from mockllm.core.cache import SizedLru
from mockllm.core.conversation import Conversation, Message, Tool, ToolCall, ToolChoice, ToolResult
from mockllm.core.encoding import compact_json, digest, sse_frame
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.ids import derive, fresh
from mockllm.core.scenario import Reply, Scenario, ScriptedCall
from mockllm.errors import RequestError
from mockllm.providers import output_formats
from mockllm.providers.base import (
    Adapter,
    Body,
    Parsed,
    Stream,
    chunks,
    dumps,
    json_object_text,
    merge_assistants,
)
from mockllm.providers.result_pairing import WireKey, call_key, name_calls

ROUTE = re.compile(
    r"(?:v1|v1beta)/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)"
)
FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
# Google's canonical status names by HTTP status (google.rpc.Code).
STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
# What the API sends with these statuses, as seen in public reports (docs/http-api.md).
FAULT_MESSAGES = {
    429: "You exceeded your current quota, please check your plan and billing details. For "
    "more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
    500: "An internal error has occurred. Please retry or report in "
    "https://developers.generativeai.google/guide/troubleshooting",
    503: "The model is overloaded. Please try again later.",
}
RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
MODELS = ("gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite", "gemini-3-pro-preview")
TOOL_CHOICES = {"AUTO": "auto", "VALIDATED": "auto", "MODE_UNSPECIFIED": "auto", "NONE": "none"}
ROLES = ("user", "model")


def signs(model: str) -> bool:
    """Gemini 3 models attach thought signatures to their replies, and require them back."""
    return model.removeprefix("models/").startswith("gemini-3")


def signature(scenario: str, turn: int) -> str:
    """A deterministic stand-in for the opaque thoughtSignature of a reply (standard base64,
    as the API sends it; clients may send it back url-safe)."""
    seed = f"gemini\x1f{scenario}\x1f{turn}".encode()
    return base64.b64encode(digest(seed, 48)).decode()


def field(data: dict[str, Any], name: str) -> Any:
    """A field by its JSON name or its proto name: the API reads both, and the Python SDK
    sends some keys one way (`parameters_json_schema`) and some the other."""
    value = data.get(name)
    return data.get(_proto_name(name)) if value is None else value


_SNAKE = re.compile(r"(?<=[a-z0-9])([A-Z])")


@cache  # the names are this module's constants: a fixed, small set
def _proto_name(name: str) -> str:
    return _SNAKE.sub(r"_\1", name).lower()


def bad(message: str) -> RequestError:
    return RequestError(400, message, error_type="INVALID_ARGUMENT")


class Gemini(Adapter):
    api = "gemini"
    family = "gemini"
    routes = ()
    route_pattern = ROUTE
    route_help: ClassVar[tuple[str, ...]] = (
        "v1beta/models/{model}:generateContent",
        "v1beta/models/{model}:streamGenerateContent",
    )
    models_routes: ClassVar[tuple[str, ...]] = ("v1/models", "v1beta/models")
    family_headers = (b"x-goog-api-key", b"x-goog-api-client")
    request_id_header = "x-mockllm-request-id"  # Google sends none; this one is mockllm's
    invalid_json_message = "Invalid JSON payload received."
    stream_error_status = 503
    status_aliases = MappingProxyType({529: 503})  # Google has no 529: overloaded is 503

    # --- parse -------------------------------------------------------------------------

    def parse(self, body: Any) -> Parsed:
        return self.parse_at(body, "v1beta/models/mockllm:generateContent")

    def parse_at(self, body: Any, route: str) -> Parsed:
        match = ROUTE.fullmatch(route)
        if match is None:  # the app only routes matching paths here
            raise RequestError(404, f"mockllm: no Gemini method at /{route}", kind="not_found")
        if not isinstance(body, dict):
            raise bad("Invalid JSON payload received. Expected an object.")
        model = match["model"]
        messages = _system(field(body, "systemInstruction")) + _contents(field(body, "contents"))
        conversation = Conversation(
            model=model,
            messages=tuple(messages),
            tools=_tools(body.get("tools")),
            tool_choice=_tool_choice(field(body, "toolConfig")),
            stream=match["method"] == "streamGenerateContent",
            output=output_formats.gemini(field(body, "generationConfig"), field),
        )
        return Parsed(conversation, {"signs": signs(model)}, render_key=model)

    # --- render ------------------------------------------------------------------------

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        return call_key(turn, index)  # Gemini's calls carry no id: pairing is by name

    def render(self, resolved: Resolved, parsed: Parsed) -> Body:
        bare = _bare_envelope(resolved, parsed)
        if bare is not None:
            return Body(dumps(bare), _misbehaviour_notes(resolved.reply))
        if _unsendable(resolved.reply) is not None:
            candidate = _empty_candidate(resolved)
            body = dumps(_envelope(resolved, parsed, candidate, prompt_only=True))
            return Body(body, _notes(resolved))
        candidate = _candidate(_parts(resolved, parsed), _finish(resolved.reply))
        return Body(dumps(_envelope(resolved, parsed, candidate)))

    def render_stream(self, resolved: Resolved, parsed: Parsed) -> Stream:
        bare = _bare_envelope(resolved, parsed)
        if bare is not None:  # one frame, as the API streams a reply with nothing in it
            return Stream([_frame(bare, "tail")], _misbehaviour_notes(resolved.reply))
        if _unsendable(resolved.reply) is not None:
            candidate = _empty_candidate(resolved)
            frame = _frame(_envelope(resolved, parsed, candidate, prompt_only=True), "tail")
            return Stream([frame], _notes(resolved))
        events = []
        for part, tag in _tagged_parts(resolved, parsed):
            data = _frame_bytes(_envelope(resolved, parsed, _candidate([part])))
            inside = _args_offset(data, part) if tag.startswith("call:") else None
            events.append(Event(data, tag, inside, _carried(part)))
        # The API closes with an empty text part that carries the finish reason.
        last = _candidate([{"text": ""}], _finish(resolved.reply))
        events.append(_frame(_envelope(resolved, parsed, last), "tail"))
        return Stream(events)

    def as_sent(self, resolved: Resolved) -> Resolved:
        if _unsendable(resolved.reply) is None:
            return resolved
        return replace(resolved, reply=replace(resolved.reply, text="", tool_calls=()))

    # --- errors ------------------------------------------------------------------------

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        return dumps({"error": _error(error)})

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        message = FAULT_MESSAGES.get(status, f"mockllm fault: HTTP {status}")
        return _status(status), message, None

    def stream_error_events(self, error: RequestError, sent: int) -> list[bytes]:
        return [_frame_bytes({"error": _error(error)})]

    def request_id(self, *parts: object) -> str:
        return fresh("", 23, "gemini-request", *parts)  # never repeats: see Adapter.request_id

    # --- models ------------------------------------------------------------------------

    def models_body(self) -> bytes:
        return dumps({"models": [_model(m) for m in MODELS]})

    def model_body(self, model: str) -> bytes:
        return dumps(_model(model.removeprefix("models/")))


def _status(code: int) -> str:
    return STATUS.get(code, "INTERNAL" if code >= 500 else "INVALID_ARGUMENT")


def _error(error: RequestError) -> dict[str, Any]:
    out: dict[str, Any] = {
        "code": error.status,
        "message": error.message,
        "status": error.error_type or _status(error.status),
    }
    delay = _retry_delay(error.headers)
    if delay is not None:  # what Google's clients read instead of a Retry-After header
        out["details"] = [{"@type": RETRY_INFO, "retryDelay": delay}]
    return out


def _retry_delay(headers: tuple[tuple[str, str], ...]) -> str | None:
    """The fault's retry-after(-ms) header as a google.protobuf.Duration ("0.020s", "26s")."""
    found = {k.lower(): v for k, v in headers}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            seconds = float(found[name]) * scale
        except (KeyError, ValueError):
            continue
        return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"
    return None


def _model(name: str) -> dict[str, Any]:
    return {
        "name": f"models/{name}",
        "version": "001",
        "displayName": name,
        "description": "served by mockllm",
        "inputTokenLimit": 1048576,
        "outputTokenLimit": 65536,
        "supportedGenerationMethods": ["generateContent", "countTokens"],
    }


# --- rendering helpers ---------------------------------------------------------------------


def _unsendable(reply: Reply) -> int | None:
    """The first call whose arguments are not a JSON object: such a reply cannot be sent."""
    for i, call in enumerate(reply.tool_calls):
        if not json_object_text(call.arguments):
            return i
    return None


def _notes(resolved: Resolved) -> tuple[str, ...]:
    """What the log says of a reply `_unsendable` found a call in."""
    index = _unsendable(resolved.reply)
    if index is None:
        return ()
    call = resolved.reply.tool_calls[index]
    sent = _empty_candidate(resolved)["finishReason"]
    return (
        f"call {index} ({call.name}): arguments {call.arguments!r} are not a JSON object, "
        "which a Gemini functionCall cannot carry (args is an object, and calls arrive "
        f"whole): the reply was sent as finishReason {sent} with no content",
    )


def _candidate(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish is not None:
        candidate["finishReason"] = finish
    if finish == "SAFETY":
        candidate["safetyRatings"] = BLOCKED_RATINGS
    candidate["index"] = 0
    return candidate


# A SAFETY stop names the category that blocked it (Candidate.safetyRatings, `blocked`:
# https://ai.google.dev/api/generate-content#candidate); the others as NEGLIGIBLE.
BLOCKED_RATINGS = [
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
]


def _finish(reply: Reply) -> str:
    """A refusal is Gemini's SAFETY stop; a filter names itself (RECITATION, …)."""
    if reply.refusal is not None:
        return "SAFETY"
    if reply.finish == "content_filter":
        return reply.filter or "SAFETY"
    return FINISH[reply.finish]


def _bare_envelope(resolved: Resolved, parsed: Parsed) -> dict[str, Any] | None:
    """The body of a reply with no part at all, or None: a blocked prompt (no candidate,
    promptFeedback.blockReason), a refusal or a filter before any text (a candidate with
    no content, its finishReason and ratings), an empty reply (a candidate whose content
    has no parts, finishReason STOP: what the API sends when the model says nothing)."""
    reply = resolved.reply
    if reply.blocked is not None:
        feedback = {"blockReason": reply.blocked, "safetyRatings": BLOCKED_RATINGS}
        head = {"promptFeedback": feedback, "usageMetadata": _usage(resolved, True)}
        envelope = _envelope(resolved, parsed, {}, prompt_only=True)
        del envelope["candidates"], envelope["usageMetadata"]
        return {**head, **envelope}
    stopped = reply.refusal is not None or reply.finish == "content_filter"
    if stopped and not reply.text and not reply.tool_calls and reply.reasoning is None:
        candidate = _candidate([], _finish(reply))
        del candidate["content"]
        return _envelope(resolved, parsed, candidate, prompt_only=True)
    if reply.empty is not None:
        candidate = {"content": {"role": "model"}, "finishReason": "STOP", "index": 0}
        return _envelope(resolved, parsed, candidate, prompt_only=True)
    return None


def _misbehaviour_notes(reply: Reply) -> tuple[str, ...]:
    if reply.refusal:
        return (f"refusal {reply.refusal!r} not sent: Gemini's refusal is a SAFETY stop, no text",)
    return ()


def _empty_candidate(resolved: Resolved) -> dict[str, Any]:
    """What the API sends for a call the model could not form: no content, only the reason
    (MAX_TOKENS when the scenario cut it with the token limit)."""
    finish = "MAX_TOKENS" if resolved.reply.finish == "length" else "MALFORMED_FUNCTION_CALL"
    return {"finishReason": finish, "index": 0}


def _tagged_parts(resolved: Resolved, parsed: Parsed) -> list[tuple[dict[str, Any], str]]:
    """The reply's parts as streamed, each in its own frame: thought and text in chunks, each
    function call whole."""
    reply, size = resolved.reply, resolved.scenario.stream.text_chunk_chars
    out: list[tuple[dict[str, Any], str]] = []
    if reply.reasoning is not None:
        out += [({"text": p, "thought": True}, "reasoning") for p in chunks(reply.reasoning, size)]
    out += [({"text": p}, "text") for p in chunks(reply.text, size)]
    out += [(_call_part(call), f"call:{i}") for i, call in enumerate(reply.tool_calls)]
    _sign([part for part, _ in out], resolved, parsed)
    return out


def _parts(resolved: Resolved, parsed: Parsed) -> list[dict[str, Any]]:
    reply = resolved.reply
    parts: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        parts.append({"text": reply.reasoning, "thought": True})
    if reply.text_part:
        parts.append({"text": reply.text})
    parts += [_call_part(call) for call in reply.tool_calls]
    _sign(parts, resolved, parsed)
    return parts


def _sign(parts: list[dict[str, Any]], resolved: Resolved, parsed: Parsed) -> None:
    """Gemini 3: the signature rides on the first function call, else on the last part."""
    if not parsed.options.get("signs") or not parts:
        return
    calls = [p for p in parts if "functionCall" in p]
    target = calls[0] if calls else parts[-1]
    target["thoughtSignature"] = signature(resolved.scenario.name, resolved.turn)


def _call_part(call: ScriptedCall) -> dict[str, Any]:
    function: dict[str, Any] = {"name": call.name, "args": call.arguments_object()}
    if call.id is not None:  # only a scripted id: the API itself sends none
        function = {"id": call.id, **function}
    return {"functionCall": function}


def _envelope(
    resolved: Resolved, parsed: Parsed, candidate: dict[str, Any], prompt_only: bool = False
) -> dict[str, Any]:
    return {
        "candidates": [candidate],
        "usageMetadata": _usage(resolved, prompt_only),
        "modelVersion": parsed.conversation.model,
        "responseId": derive("", 23, "gemini", resolved.scenario.name, resolved.id_turn),
    }


def _usage(resolved: Resolved, prompt_only: bool) -> dict[str, Any]:
    prompt = resolved.input_tokens
    if prompt_only:
        return {"promptTokenCount": prompt, "totalTokenCount": prompt}
    thoughts = resolved.reasoning_tokens
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": max(resolved.output_tokens - thoughts, 0),
        "totalTokenCount": prompt + max(resolved.output_tokens, thoughts),
    }
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def _carried(part: dict[str, Any]) -> str:
    """What one streamed part hands the client (Event.carries): a call arrives whole, so
    its frame carries all of its arguments, as the JSON the frame holds."""
    if "functionCall" in part:
        return dumps(part["functionCall"]["args"]).decode()
    return str(part["text"])


def _frame_bytes(payload: dict[str, Any]) -> bytes:
    # The API ends its frames with CRLF pairs (docs/http-api.md, "Gemini specifics").
    return sse_frame(dumps(payload), end=b"\r\n\r\n")


def _frame(payload: dict[str, Any], part: str) -> Event:
    return Event(_frame_bytes(payload), part)


def _args_offset(data: bytes, part: dict[str, Any]) -> int:
    """A byte inside the call's `args` object in its frame: where a cut falls "inside"."""
    args = dumps(part["functionCall"]["args"])
    start = data.find(b'"args":' + args)
    return start + len(b'"args":') + max(1, len(args) // 2) if start >= 0 else len(data) // 2


# --- request parsing helpers ---------------------------------------------------------------


def _system(instruction: Any) -> list[Message]:
    if instruction is None:
        return []
    if isinstance(instruction, str):
        text = instruction
    elif isinstance(instruction, dict):
        text = "\n".join(_texts(instruction.get("parts")))
    else:
        raise bad("Invalid value at 'system_instruction': expected a Content object.")
    return [Message("system", text, at="systemInstruction")] if text else []


def _texts(parts: Any) -> list[str]:
    return [
        p["text"]
        for p in parts or ()
        if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
    ]


def _contents(contents: Any) -> list[Message]:
    if not contents:
        raise bad("* GenerateContentRequest.contents: contents is not specified\n")
    if not isinstance(contents, list):
        raise bad("Invalid value at 'contents': expected a list of Content objects.")
    messages: list[Message] = []
    for i, content in enumerate(contents):
        messages += _content(content, i)
    messages = merge_assistants(messages, sep="")  # one model turn may come as several contents
    return name_calls(messages)


def _content(content: Any, i: int) -> list[Message]:
    if not isinstance(content, dict):
        raise bad(f"Invalid value at 'contents[{i}]': expected a Content object.")
    role = content.get("role") or "user"
    if role not in ROLES:
        raise bad("Please use a valid role: user, model.")
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        raise bad(
            f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.\n"
        )
    where = f"contents[{i}]"
    if role == "model":
        return [_model_message(parts, where)]
    responses = [
        field(p, "functionResponse")
        for p in parts
        if isinstance(p, dict) and field(p, "functionResponse")
    ]
    results = tuple(_response(r) for r in responses if isinstance(r, dict))
    out = [Message("tool", tool_results=results, at=where)] if results else []
    text = "\n".join(_texts(parts))
    if text or not results:
        out.append(Message("user", text, at=where))
    return out


def _model_message(parts: list[Any], where: str) -> Message:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        call = field(part, "functionCall")
        if isinstance(call, dict):
            args = call.get("args")
            arguments = compact_json({} if args is None else args)
            # The id is the client's (a wire id, or none); name_calls gives mockllm's own.
            calls.append(ToolCall(str(call.get("id") or ""), str(call.get("name", "")), arguments))
        elif isinstance(part.get("text"), str):
            (thoughts if part.get("thought") else texts).append(part["text"])
    reasoning = "".join(thoughts) if thoughts else None
    return Message("assistant", "".join(texts), tuple(calls), reasoning=reasoning, at=where)


def _response(response: dict[str, Any]) -> ToolResult:
    """A functionResponse as a result. Its id (if any) and name are kept in `call_id` until
    name_calls pairs it with a call."""
    value = response.get("response")
    only = next(iter(value.values())) if isinstance(value, dict) and len(value) == 1 else None
    content = only if isinstance(only, str) else compact_json(value)
    # The SDK's automatic function calling, and Google's docs, put a failure under "error".
    is_error = isinstance(value, dict) and "error" in value
    wire = WireKey(str(response.get("id") or ""), str(response.get("name", "")))
    return ToolResult(wire.encode(), content, is_error)


# The tools of the few tool lists a client sends again and again (an agent's every
# request), parsed once: keyed by their JSON; bounded in entries and in bytes (the key).
_OFFERS = SizedLru(64)


def _tools(tools: Any) -> tuple[Tool, ...]:
    """The tools declared, remembered by the list's JSON (orjson's: a number too big for it,
    or a lone surrogate, is not remembered)."""
    if tools is None:
        return ()
    if not isinstance(tools, list):
        raise bad("Invalid value at 'tools': expected a list of Tool objects.")
    try:
        key = orjson.dumps(tools)
    except orjson.JSONEncodeError:
        return _declared(tools)
    found: tuple[Tool, ...] | None = _OFFERS.get(key)
    if found is None:
        found = _OFFERS.put(key, _declared(tools), len(key))
    return found


def _declared(tools: list[Any]) -> tuple[Tool, ...]:
    out = []
    for i, tool in enumerate(tools):
        declarations = field(tool, "functionDeclarations") if isinstance(tool, dict) else None
        for j, d in enumerate(declarations if isinstance(declarations, list) else ()):
            if not isinstance(d, dict) or not isinstance(d.get("name"), str):
                where = f"tools[{i}].function_declarations[{j}].name"
                raise bad(f"* GenerateContentRequest.{where}: Name cannot be empty.\n")
            schema = field(d, "parametersJsonSchema")
            if schema is None and field(d, "parameters") is not None:
                schema = json_schema(field(d, "parameters"))
            out.append(Tool(d["name"], schema))
    return tuple(out)


def json_schema(schema: Any) -> Any:
    """Gemini's Schema (OpenAPI 3.0 subset: `type: "OBJECT"`, `nullable`) as JSON Schema, so
    `generate:` and the log read it like any other wire's."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out["type"] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            out["properties"] = {k: json_schema(v) for k, v in value.items()}
        elif key in ("items", "anyOf", "any_of"):
            converted = (
                [json_schema(v) for v in value] if isinstance(value, list) else json_schema(value)
            )
            out["anyOf" if key != "items" else "items"] = converted
        elif key != "nullable":
            out[key] = value
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _tool_choice(config: Any) -> ToolChoice | None:
    calling = field(config, "functionCallingConfig") if isinstance(config, dict) else None
    if not isinstance(calling, dict):
        return None
    mode = str(calling.get("mode") or "AUTO").upper()
    allowed = field(calling, "allowedFunctionNames")
    if mode == "ANY":
        if isinstance(allowed, list) and len(allowed) == 1 and isinstance(allowed[0], str):
            return ToolChoice("tool", allowed[0])
        return ToolChoice("required")
    if mode not in TOOL_CHOICES:
        raise bad(f"Invalid value at 'tool_config.function_calling_config.mode', \"{mode}\"")
    return ToolChoice(TOOL_CHOICES[mode])  # type: ignore[arg-type]
