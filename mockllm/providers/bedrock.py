"""Amazon Bedrock's Converse API (`POST /model/{modelId}/converse`, `/converse-stream`):
docs/http-api.md, "Bedrock specifics", says what each choice below is based on.

Shapes and error names are botocore's service model (`bedrock-runtime` service-2.json);
a streamed answer is AWS's binary event stream (core/eventstream.py), one JSON event per
message. Errors are `{"message": ...}` with the exception's name in `x-amzn-ErrorType`.
SigV4 is not checked: any credentials do.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, ClassVar

from mockllm.core import eventstream
from mockllm.core.conversation import (
    Conversation,
    Message,
    OutputFormat,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
)
from mockllm.core.encoding import compact_json, digest
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.ids import fresh
from mockllm.core.scenario import Scenario, ScriptedCall
from mockllm.errors import RequestError
from mockllm.providers import shapes
from mockllm.providers.anthropic import complete_parameters
from mockllm.providers.base import (
    Adapter,
    Body,
    Parsed,
    Stream,
    chunks,
    dumps,
    fragments,
    json_object_text,
    merge_assistants,
    scripted_id,
)

ROUTE = re.compile(r"model/(?P<model>.+)/(?P<op>converse-stream|converse)")
STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filtered",
}
# The exception each status is sent as (service-2.json's `error.httpStatusCode`); a
# scenario's fault `type:` names another (ModelNotReadyException is a 429 too).
EXCEPTIONS = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
# The stream's own exception members (ConverseStreamOutput), by the exception they carry.
STREAM_EXCEPTIONS = {
    "ValidationException": "validationException",
    "ThrottlingException": "throttlingException",
    "ServiceUnavailableException": "serviceUnavailableException",
    "InternalServerException": "internalServerException",
    "ModelErrorException": "modelStreamErrorException",
    "ModelStreamErrorException": "modelStreamErrorException",
}
# What Bedrock sends with these, as quoted in public reports (docs/http-api.md).
FAULT_MESSAGES = {
    429: "Too many requests, please wait before trying again. You have sent too many "
    "requests. Wait before trying again.",
    503: "Bedrock is unable to process your request.",
    500: "The system encountered an unexpected error during processing. Try your request again.",
}
ERROR_TYPE_SUFFIX = ":http://internal.amazon.com/coral/com.amazon.bedrock/"
TOOL_CHOICES = {"auto": "auto", "any": "required"}
LATENCY_MS = 100  # metrics.latencyMs: fixed, so that answers are byte-identical


def bad(message: str) -> RequestError:
    return RequestError(400, message, error_type="ValidationException")


def exception_name(error: RequestError) -> str:
    """The exception an error is sent as: the scenario's, else the status's."""
    if error.error_type and error.error_type.endswith("Exception"):
        return error.error_type
    return EXCEPTIONS.get(
        error.status, "InternalServerException" if error.status >= 500 else "ValidationException"
    )


def signature(scenario: str, turn: int, reasoning: str) -> str:
    """A deterministic stand-in for the opaque signature of a reasoning block."""
    seed = f"bedrock\x1f{scenario}\x1f{turn}\x1f{reasoning}".encode()
    return base64.b64encode(digest(seed, 48)).decode()


class AwsWire(Adapter):
    """What Bedrock's operations share, whatever their body: errors as `{"message"}` named
    by x-amzn-ErrorType, x-amzn-RequestId, the binary event stream and its exception
    frames (Converse's and InvokeModel's stream unions have the same exception members)."""

    family = "bedrock"
    routes: ClassVar[tuple[str, ...]] = ()
    # botocore signs every request: these mark an AWS SDK for the shared routes (404s).
    family_headers: ClassVar[tuple[bytes, ...]] = (b"x-amz-date", b"amz-sdk-invocation-id")
    request_id_header = "x-amzn-RequestId"
    stream_content_type = eventstream.CONTENT_TYPE
    invalid_json_message = "Could not parse request body into json"
    stream_error_status = 424  # a model stream error: modelStreamErrorException
    status_aliases = MappingProxyType({529: 503})  # no 529 on AWS: overloaded is 503

    def invalid_json(self, detail: str) -> RequestError:
        return RequestError(
            400, self.invalid_json_message, kind="invalid_json", error_type="ValidationException"
        )

    # --- errors ------------------------------------------------------------------------

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        return dumps({"message": error.message})

    def error_headers(self, error: RequestError) -> list[tuple[bytes, bytes]]:
        return [(b"x-amzn-ErrorType", (exception_name(error) + ERROR_TYPE_SUFFIX).encode())]

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        name = EXCEPTIONS.get(
            status, "InternalServerException" if status >= 500 else "ValidationException"
        )
        return name, FAULT_MESSAGES.get(status, f"mockllm fault: HTTP {status}"), None

    def stream_error_events(self, error: RequestError, sent: int) -> list[bytes]:
        name = STREAM_EXCEPTIONS.get(exception_name(error), "modelStreamErrorException")
        return [eventstream.exception(name, dumps({"message": error.message}))]

    def request_id(self, *parts: object) -> str:
        raw = fresh("", 32, "bedrock-request", *parts, alphabet="0123456789abcdef")
        return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"


class Converse(AwsWire):
    api = "bedrock-converse"
    route_pattern = ROUTE
    route_help = ("model/{modelId}/converse", "model/{modelId}/converse-stream")
    shape = shapes.BEDROCK

    # --- parse -------------------------------------------------------------------------

    def parse(self, body: Any) -> Parsed:
        return self.parse_at(body, "model/mockllm/converse")

    def parse_at(self, body: Any, route: str) -> Parsed:
        match = ROUTE.fullmatch(route)
        if match is None:  # the app routes only matching paths here
            raise RequestError(404, f"mockllm: no Bedrock operation at /{route}", kind="not_found")
        if not isinstance(body, dict):
            raise bad("Could not parse request body into json")
        messages = _system(body.get("system")) + _messages(body.get("messages"))
        config = body.get("toolConfig")
        conversation = Conversation(
            model=match["model"],
            messages=tuple(merge_assistants(messages)),
            tools=_tools(config),
            tool_choice=_tool_choice(config),
            stream=match["op"] == "converse-stream",
            output=_output(body.get("outputConfig")),
        )
        return Parsed(conversation, render_key=conversation.model)

    def type_error(self, path: shapes.Path, expected: str, value: Any) -> RequestError:
        where = ".".join(map(str, path))
        return bad(
            f"1 validation error detected: Value at '{where}' failed to satisfy "
            f"constraint: Member must be {expected}"
        )

    # --- render ------------------------------------------------------------------------

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        return scripted_id(scenario, turn, index, "tooluse_", 22, attempt)

    def render(self, resolved: Resolved, parsed: Parsed) -> Body:
        resolved, stop, notes = _formed(resolved)
        reply = resolved.reply
        content: list[dict[str, Any]] = []
        if reply.reasoning is not None:
            text = {"text": reply.reasoning, "signature": _signature(resolved)}
            content.append({"reasoningContent": {"reasoningText": text}})
        if _has_text(resolved):
            content.append({"text": reply.text})
        for i, call in enumerate(reply.tool_calls):
            arguments, note = _input(i, call)
            notes += (note,) if note else ()
            use = {"toolUseId": self._id(resolved, i), "name": call.name, "input": arguments}
            content.append({"toolUse": use})
        body = {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop,
            "usage": _usage(resolved),
            "metrics": {"latencyMs": LATENCY_MS},
        }
        return Body(dumps(body), notes)

    def render_stream(self, resolved: Resolved, parsed: Parsed) -> Stream:
        # Streamed, a cut-off object goes verbatim as input fragments (as Claude's do).
        resolved, stop, notes = _formed(resolved)
        events = [_event("messageStart", {"role": "assistant"}, "head")]
        for index, block in enumerate(self._blocks(resolved)):
            events += block.events(index)
        events.append(_event("messageStop", {"stopReason": stop}, "tail"))
        metadata = {"usage": _usage(resolved), "metrics": {"latencyMs": LATENCY_MS}}
        events.append(_event("metadata", metadata, "done"))
        return Stream(events, notes)

    def as_sent(self, resolved: Resolved) -> Resolved:
        return _formed(resolved)[0]

    def _id(self, resolved: Resolved, index: int) -> str:
        return self.call_id(resolved.scenario, resolved.turn, index, resolved.attempt)

    def _blocks(self, resolved: Resolved) -> list[_Block]:
        reply, size = resolved.reply, resolved.scenario.stream.text_chunk_chars
        blocks: list[_Block] = []
        if reply.reasoning is not None:
            deltas: list[tuple[dict[str, Any], str | None]] = [
                ({"reasoningContent": {"text": p}}, p) for p in chunks(reply.reasoning, size)
            ]
            deltas.append(({"reasoningContent": {"signature": _signature(resolved)}}, None))
            blocks.append(_Block(None, deltas, "reasoning", "reasoning", "reasoning"))
        if _has_text(resolved):
            deltas = [({"text": p}, p) for p in chunks(reply.text, size)]
            blocks.append(_Block(None, deltas, "text", "text", "text"))
        for i, call in enumerate(reply.tool_calls):
            start = {"toolUse": {"toolUseId": self._id(resolved, i), "name": call.name}}
            pieces = fragments(call.arguments, resolved.scenario.stream.argument_fragments)
            # Bedrock opens every toolUse with an empty input fragment: part of its start.
            deltas = [({"toolUse": {"input": ""}}, None)]
            deltas += [({"toolUse": {"input": p}}, p) for p in pieces]
            blocks.append(_Block(start, deltas, f"call:{i}", f"args:{i}", f"done:{i}"))
        return blocks


@dataclass(frozen=True, slots=True)
class _Block:
    """One content block of a streamed message: its start (a toolUse's only), its deltas
    (each with the piece it hands the client), and the parts its events are tagged with."""

    start: dict[str, Any] | None
    deltas: list[tuple[dict[str, Any], str | None]]
    start_part: str
    delta_part: str
    stop_part: str

    def events(self, index: int) -> list[Event]:
        out = []
        if self.start is not None:  # a call begins, with no arguments yet
            payload = {"start": self.start, "contentBlockIndex": index}
            out.append(_event("contentBlockStart", payload, self.start_part, ""))
        for delta, piece in self.deltas:
            part = self.delta_part if piece is not None else self.start_part
            payload = {"delta": delta, "contentBlockIndex": index}
            out.append(_event("contentBlockDelta", payload, part, piece))
        out.append(_event("contentBlockStop", {"contentBlockIndex": index}, self.stop_part))
        return out


def _event(kind: str, payload: dict[str, Any], part: str, carries: str | None = None) -> Event:
    return Event(eventstream.event(kind, dumps(payload)), part, None, carries)


def _signature(resolved: Resolved) -> str:
    return signature(resolved.scenario.name, resolved.turn, resolved.reply.reasoning or "")


def _has_text(resolved: Resolved) -> bool:
    return resolved.reply.text_part  # an empty reply or a refusal: no text block


def _usage(resolved: Resolved) -> dict[str, int]:
    return {
        "inputTokens": resolved.input_tokens,
        "outputTokens": resolved.output_tokens,
        "totalTokens": resolved.input_tokens + resolved.output_tokens,
    }


def _unformed(call: ScriptedCall) -> bool:
    """Arguments no toolUse.input can carry: not a JSON object, nor a cut-off one, nor
    empty (a call with no parameters, which Claude sends as `{}`)."""
    text = call.arguments
    return bool(text.strip()) and not json_object_text(text) and (complete_parameters(text) is None)


def _formed(resolved: Resolved) -> tuple[Resolved, str, tuple[str, ...]]:
    """The reply as Bedrock sends it, its stopReason, and the log's notes. A call whose
    arguments no toolUse can carry is a tool use the model could not form: Bedrock says so
    with stopReason `malformed_tool_use`, and sends no call (the text stays)."""
    reply = resolved.reply
    bad = [i for i, c in enumerate(reply.tool_calls) if _unformed(c)]
    if not bad and reply.refusal is not None:
        # Converse has no refusal stop reason: a model's refusal (Claude's stop_reason
        # refusal) comes as content_filtered, its text not carried.
        note = f"refusal {reply.refusal!r} sent as stopReason content_filtered, no text"
        return resolved, "content_filtered", (note,)
    if not bad:
        return resolved, STOP_REASONS[reply.finish], ()
    notes = tuple(
        f"call {i} ({reply.tool_calls[i].name}): arguments {reply.tool_calls[i].arguments!r} "
        "are not a JSON object, which a toolUse.input cannot carry: the reply was sent with "
        "stopReason malformed_tool_use and no toolUse"
        for i in bad
    )
    sent = replace(resolved, reply=replace(reply, tool_calls=()))
    return sent, "max_tokens" if reply.finish == "length" else "malformed_tool_use", notes


def _input(index: int, call: ScriptedCall) -> tuple[Any, str | None]:
    """toolUse.input of a whole answer is a JSON document: arguments that are a cut-off
    object keep their complete top-level parameters (as Anthropic's models do, whose calls
    are most of Bedrock's). `_formed` has taken out the calls that are neither."""
    whole = call.arguments_object()
    if whole is not None:
        return whole, None
    partial = complete_parameters(call.arguments) or {}
    note = (
        f"call {index}: arguments {call.arguments!r} are not a JSON object; toolUse.input "
        f"sent as {json.dumps(partial, ensure_ascii=False)} (its complete top-level parameters)"
    )
    return partial, note


# --- request parsing helpers ---------------------------------------------------------------


def _system(blocks: Any) -> list[Message]:
    if blocks is None:
        return []
    if not isinstance(blocks, list):
        raise bad(
            "1 validation error detected: Value at 'system' failed to satisfy "
            "constraint: Member must be an array"
        )
    text = "\n".join(
        b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
    )
    return [Message("system", text, at="system")] if text else []


def _messages(messages: Any) -> list[Message]:
    if messages is None:
        return []  # a prompt from Prompt management has none; the rules say what is missing
    if not isinstance(messages, list):
        raise bad(
            "1 validation error detected: Value at 'messages' failed to satisfy "
            "constraint: Member must be an array"
        )
    out: list[Message] = []
    for i, m in enumerate(messages):
        out += _message(m, i)
    return out


def _message(m: Any, i: int) -> list[Message]:
    if not isinstance(m, dict):
        raise bad(
            f"1 validation error detected: Value at 'messages.{i}' failed to satisfy "
            "constraint: Member must be an object"
        )
    role, content = m.get("role"), m.get("content")
    if role not in ("user", "assistant"):
        raise bad(
            f"1 validation error detected: Value '{role}' at 'messages.{i + 1}.member."
            "role' failed to satisfy constraint: Member must satisfy enum value set: "
            "[user, assistant]"
        )
    if not isinstance(content, list):
        raise bad(
            f"1 validation error detected: Value at 'messages.{i}.content' failed to "
            "satisfy constraint: Member must not be null"
        )
    blocks = [b for b in content if isinstance(b, dict)]
    at = f"messages[{i}]"
    if role == "assistant":
        return [_assistant(blocks, at)]
    results = tuple(
        _result(b["toolResult"]) for b in blocks if isinstance(b.get("toolResult"), dict)
    )
    text = "\n".join(b["text"] for b in blocks if isinstance(b.get("text"), str))
    out = [Message("tool", tool_results=results, at=at)] if results else []
    if text or not results:
        out.append(Message("user", text, at=at))
    return out


def _assistant(blocks: list[dict[str, Any]], at: str) -> Message:
    texts, calls, reasoning = [], [], []
    for b in blocks:
        if isinstance(b.get("text"), str):
            texts.append(b["text"])
        use = b.get("toolUse")
        if isinstance(use, dict):
            arguments = compact_json(use.get("input", {}))
            calls.append(
                ToolCall(str(use.get("toolUseId", "")), str(use.get("name", "")), arguments)
            )
        thought = b.get("reasoningContent")
        if isinstance(thought, dict) and isinstance(thought.get("reasoningText"), dict):
            reasoning.append(str(thought["reasoningText"].get("text", "")))
    said = "\n".join(reasoning) if reasoning else None
    return Message("assistant", "\n".join(texts), tuple(calls), reasoning=said, at=at)


def _result(block: dict[str, Any]) -> ToolResult:
    parts = []
    for item in block.get("content") or ():
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif isinstance(item, dict) and "json" in item:
            parts.append(compact_json(item["json"]))
    status = block.get("status")
    return ToolResult(str(block.get("toolUseId", "")), "\n".join(parts), status == "error")


def _tools(config: Any) -> tuple[Tool, ...]:
    if not isinstance(config, dict):
        return ()
    out = []
    for t in config.get("tools") or ():
        spec = t.get("toolSpec") if isinstance(t, dict) else None
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            continue  # a cachePoint or a systemTool: nothing a scenario calls
        schema = spec.get("inputSchema")
        parameters = schema.get("json") if isinstance(schema, dict) else None
        out.append(Tool(spec["name"], parameters, spec.get("strict") is True))
    return tuple(out)


def _tool_choice(config: Any) -> ToolChoice | None:
    choice = config.get("toolChoice") if isinstance(config, dict) else None
    if not isinstance(choice, dict):
        return None
    for key, mode in TOOL_CHOICES.items():
        if key in choice:
            return ToolChoice(mode)  # type: ignore[arg-type]
    forced = choice.get("tool")
    if isinstance(forced, dict) and isinstance(forced.get("name"), str):
        return ToolChoice("tool", forced["name"])
    return None


def _output(config: Any) -> OutputFormat | None:
    """`outputConfig.textFormat`: {type: json_schema, structure: {jsonSchema: {schema, name}}},
    the schema a JSON string."""
    found = config.get("textFormat") if isinstance(config, dict) else None
    structure = found.get("structure") if isinstance(found, dict) else None
    spec = structure.get("jsonSchema") if isinstance(structure, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("schema"), str):
        return None
    try:
        schema = json.loads(spec["schema"])
    except ValueError:
        raise bad(
            "The json schema definition at outputConfig.textFormat.structure.jsonSchema"
            ".schema is not valid JSON"
        ) from None
    name = spec.get("name")
    return OutputFormat("json_schema", schema, name if isinstance(name, str) else None)
