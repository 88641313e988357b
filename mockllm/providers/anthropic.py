"""Anthropic Messages (https://docs.anthropic.com/en/api/messages, streaming:
https://docs.anthropic.com/en/docs/build-with-claude/streaming)."""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, ClassVar

import orjson

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
from mockllm.core.encoding import compact_json, digest, sse_frame
from mockllm.core.engine import FIXED_CREATED, Resolved
from mockllm.core.events import Event
from mockllm.core.ids import derive, fresh
from mockllm.core.scenario import Reply, Scenario, ScriptedCall
from mockllm.errors import RequestError
from mockllm.providers import output_formats, shapes
from mockllm.providers.base import (
    MODELS,
    Adapter,
    Body,
    Parsed,
    Stream,
    chunks,
    dumps,
    fragments,
    merge_assistants,
    scripted_id,
    text_of,
)


def _stop_reason(reply: Reply) -> str:
    return "refusal" if reply.refusal is not None else STOP_REASONS[reply.finish]


STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
# What Anthropic sends with these statuses (https://docs.anthropic.com/en/api/errors;
# the 429 text as seen in public reports, unverified here).
FAULT_MESSAGES = {
    429: "Number of request tokens has exceeded your per-minute rate limit "
    "(https://docs.claude.com/en/api/rate-limits); see the response headers for current usage. "
    "Please reduce the prompt length or the maximum tokens requested, or try again later.",
    500: "Internal server error",
    529: "Overloaded",
}
TOOL_CHOICES = {"auto": "auto", "any": "required", "none": "none"}
CALLER = {"caller": {"type": "direct"}}  # who made a tool_use: the model itself
# A healthy window of each limit, resetting at the fixed clock (deterministic headers).
RATE_LIMITS = {
    "input-tokens": 4000000,
    "output-tokens": 800000,
    "requests": 20000,
    "tokens": 4800000,
}
RESET = "2025-01-01T00:00:00Z"


def signature(scenario: str, turn: int, thinking: str) -> str:
    """A deterministic stand-in for the opaque signature of a thinking block: it signs the
    text, so an edited block no longer matches (rules A6/A7)."""
    seed = f"{scenario}\x1f{turn}\x1f{thinking}".encode()
    return base64.b64encode(digest(seed, 64)).decode()


def _signature(resolved: Resolved) -> str:
    return signature(resolved.scenario.name, resolved.turn, resolved.reply.reasoning or "")


def _reasoning(resolved: Resolved, parsed: Parsed) -> str | None:
    """The thinking block's text. With thinking on, a tool-use turn scripted without
    `reasoning:` still starts with one, empty and signed, as the API never serves a tool_use
    without it there (and refuses the echo of one that lacks it: rule A5)."""
    reply = resolved.reply
    if reply.reasoning is None and reply.tool_calls and parsed.options.get("thinking"):
        return ""
    return reply.reasoning


# `{"role": "system"}` inside `messages` (a system message mid-conversation): Claude Opus
# 4.8 and later take it without a beta, others with this beta; the texts are the API's.
# https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages
MID_CONVERSATION_SYSTEM = "mid-conversation-system-2026-04-07"
_OPUS = re.compile(r"claude-opus-(\d+)(?:-(\d{1,2}))?(?![\d])")
SYSTEM_UNSUPPORTED = "role 'system' is not supported on this model"
_DIRECTIVE = "the directive-only form (content: [] with output_config) is accepted at any position"


def takes_system_messages(model: str, betas: str) -> bool:
    if MID_CONVERSATION_SYSTEM in (b.strip() for b in betas.split(",")):
        return True
    found = _OPUS.search(model)  # Bedrock and Vertex ids carry more: us.anthropic.claude-…
    return found is not None and (int(found[1]), int(found[2] or 0)) >= (4, 8)


def system_message_refusal(body: dict[str, Any], betas: str) -> RequestError | None:
    """The API's 400 for a system message inside `messages` it does not take here."""
    messages = body["messages"]
    placed = [i for i, m in enumerate(messages) if isinstance(m, dict) and m["role"] == "system"]
    if not placed:
        return None
    if not takes_system_messages(str(body["model"]), betas):
        return bad(SYSTEM_UNSUPPORTED)
    for i in placed:
        if messages[i].get("content") == []:
            continue  # a directive alone goes anywhere
        if i == 0:
            return bad(
                f"messages.0: use the top-level 'system' parameter for the initial system "
                f"prompt; {_DIRECTIVE}"
            )
        after = messages[i + 1] if i + 1 < len(messages) else None
        if isinstance(after, dict) and after.get("role") != "assistant":
            return bad(
                f"messages.{i}: role 'system' must precede an 'assistant' message or end the "
                f"array; {_DIRECTIVE}"
            )
    return None


def bad(message: str) -> RequestError:
    return RequestError(400, message)


# The words of the API's validation errors ("messages.1.content.0.id: Input should be a
# valid string"), by the shape expected.
_PYDANTIC_NOUNS = {
    "a string": "string",
    "an integer": "integer",
    "a boolean": "boolean",
    "an object": "dictionary",
    "an array": "list",
    "an array of objects": "list",
    "a number": "number",
}


class Messages(Adapter):
    api = "anthropic"
    family = "anthropic"
    routes: ClassVar[tuple[str, ...]] = ("v1/messages",)
    family_headers: ClassVar[tuple[bytes, ...]] = (b"anthropic-version",)
    request_id_header = "request-id"
    message_id_prefix: ClassVar[str] = "msg_01"  # the platform's own on Vertex (msg_vrtx_01)
    invalid_json_message = "The request body is not valid JSON"
    shape = shapes.ANTHROPIC

    def invalid_json(self, detail: str) -> RequestError:
        return RequestError(400, f"{self.invalid_json_message}: {detail}", kind="invalid_json")

    def type_error(self, path: shapes.Path, expected: str, value: Any) -> RequestError:
        noun = _PYDANTIC_NOUNS.get(expected.removeprefix("one of ").split(" or ")[0], "value")
        return bad(f"{shapes.anthropic_param(path)}: Input should be a valid {noun}")

    stream_error_status = 529  # the API's mid-stream error is overloaded_error

    # --- parse -------------------------------------------------------------------------

    parse_headers = (b"anthropic-beta",)

    def parse_headed(self, body: Any, route: str, headers: Mapping[bytes, str]) -> Parsed:
        parsed = self.parse(body)
        refused = system_message_refusal(body, headers.get(b"anthropic-beta", ""))
        if refused is not None:
            raise refused
        return parsed

    def parse(self, body: Any) -> Parsed:
        if not isinstance(body, dict):
            raise bad("Input should be a valid dictionary")
        for key in ("model", "messages"):
            if key not in body:
                raise bad(f"{key}: Field required")
        if not isinstance(body["messages"], list):
            raise bad("messages: Input should be a valid list")
        system = text_of(body.get("system"))
        messages = [Message("system", system, at="system")] if system else []
        for i, m in enumerate(body["messages"]):
            messages += _message(m, i)
        offered, deferred, search = _tools(body.get("tools"), body["messages"])
        conversation = Conversation(
            model=str(body["model"]),
            messages=tuple(merge_assistants(messages)),
            tools=offered,
            tool_search=search,
            deferred=deferred,
            tool_choice=_tool_choice(body.get("tool_choice")),
            stream=body.get("stream") is True,
            output=output_formats.anthropic(body),
            parallel_tool_calls=not _one_call(body.get("tool_choice")),
        )
        thinking = body.get("thinking")
        on = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
        shown = (conversation.model, on)
        return Parsed(conversation, {"thinking": True} if on else {}, render_key=shown)

    # --- render ------------------------------------------------------------------------

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        return scripted_id(scenario, turn, index, "toolu_01", 22, attempt)

    def render(self, resolved: Resolved, parsed: Parsed) -> Body:
        content: list[dict[str, Any]] = []
        reply = resolved.reply
        reasoning = _reasoning(resolved, parsed)
        if reasoning is not None:
            content.append(
                {"type": "thinking", "thinking": reasoning, "signature": _signature(resolved)}
            )
        content += _search_blocks(resolved, parsed)
        if _has_text_block(resolved):
            content.append({"type": "text", "text": reply.text})
        for i, call in enumerate(reply.tool_calls):
            tool_use = {
                "type": "tool_use",
                "id": self.call_id(resolved.scenario, resolved.turn, i, resolved.attempt),
                "name": call.name,
            }
            content.append({**tool_use, "input": _input_object(resolved, i, call), **CALLER})
        message = _message_head(resolved, parsed, content, self.message_id_prefix)
        message["stop_reason"] = _stop_reason(reply)
        message["usage"] = _usage(resolved)
        return Body(dumps(message), _notes(resolved) + _refusal_note(reply))

    def wire_headers(self, status: int, retry_after: float | None) -> list[tuple[bytes, bytes]]:
        return _rate_headers(retry_after) if status == 429 else _HEADERS

    def render_stream(self, resolved: Resolved, parsed: Parsed) -> Stream:
        # No notes: streamed, the arguments go out verbatim as input_json_delta fragments.
        reply = resolved.reply
        start = _message_head(resolved, parsed, [], self.message_id_prefix)
        start["stop_reason"] = None
        start["usage"] = {**_usage(resolved), "output_tokens": 1}
        events = [_event("message_start", {"message": start}, "head")]
        for index, block in enumerate(self._blocks(resolved, parsed)):
            events += block.events(index)
            if index == 0:  # the API pings right after the first block starts
                events.insert(2, _event("ping", {}, block.start_part))
        stop = {
            "stop_reason": _stop_reason(reply),
            "stop_sequence": None,
            "stop_details": None,
        }
        usage = {
            "input_tokens": resolved.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": resolved.output_tokens,
        }
        events.append(_event("message_delta", {"delta": stop, "usage": usage}, "tail"))
        events.append(_event("message_stop", {}, "done"))
        return Stream(events, _refusal_note(reply))

    def _blocks(self, resolved: Resolved, parsed: Parsed) -> list[_Block]:
        reply, size = resolved.reply, resolved.scenario.stream.text_chunk_chars
        blocks: list[_Block] = []
        reasoning = _reasoning(resolved, parsed)
        if reasoning is not None:
            deltas: list[dict[str, Any]] = [
                {"type": "thinking_delta", "thinking": p} for p in chunks(reasoning, size)
            ]
            deltas.append({"type": "signature_delta", "signature": _signature(resolved)})
            thinking = {"type": "thinking", "thinking": "", "signature": ""}
            blocks.append(_Block(thinking, deltas, "reasoning", "reasoning", "reasoning"))
        blocks += _search_stream_blocks(resolved, parsed)
        if _has_text_block(resolved):
            deltas = [{"type": "text_delta", "text": p} for p in chunks(reply.text, size)]
            blocks.append(_Block({"type": "text", "text": ""}, deltas, "text", "text", "text"))
        for i, call in enumerate(reply.tool_calls):
            call_id = self.call_id(resolved.scenario, resolved.turn, i, resolved.attempt)
            tool_use: dict[str, Any] = {
                "type": "tool_use",
                "id": call_id,
                "name": call.name,
                "input": {},
                **CALLER,
            }
            pieces = fragments(call.arguments, resolved.scenario.stream.argument_fragments)
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
            # The API opens every tool_use with an empty fragment: part of the call's start.
            opening = [{"type": "input_json_delta", "partial_json": ""}]
            blocks.append(_Block(tool_use, deltas, f"call:{i}", f"args:{i}", f"done:{i}", opening))
        return blocks

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        error_type = error.error_type or ERROR_TYPES.get(error.status, "api_error")
        return dumps(
            {
                "type": "error",
                "error": {"type": error_type, "message": error.message},
                "request_id": request_id,
            }
        )

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        return (
            ERROR_TYPES.get(status, "api_error"),
            FAULT_MESSAGES.get(status, f"mockllm fault: HTTP {status}"),
            None,
        )

    def stream_error_events(self, error: RequestError, sent: int) -> list[bytes]:
        error_type = error.error_type or ERROR_TYPES.get(error.status, "api_error")
        return [
            _event("error", {"error": {"type": error_type, "message": error.message}}, "tail").data
        ]

    def request_id(self, *parts: object) -> str:
        return fresh("req_011C", 20, *parts)  # never repeats: see Adapter.request_id

    def models_body(self) -> bytes:
        data = [
            {"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
            for m in MODELS
            if m.startswith("claude")
        ]
        return dumps(
            {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}
        )


def _refusal_note(reply: Reply) -> tuple[str, ...]:
    if not reply.refusal:
        return ()
    return (f"refusal {reply.refusal!r} not sent: Anthropic's refusal is its stop reason",)


def _notes(resolved: Resolved) -> tuple[str, ...]:
    """A JSON body's tool_use.input is an object: what was sent for arguments that are not."""
    return tuple(
        f"call {i}: arguments {call.arguments!r} are not a JSON object; tool_use.input "
        f"sent as {json.dumps(_input_object(resolved, i, call), ensure_ascii=False)} (the "
        "complete top-level parameters only, as the API does for a tool_use cut short)"
        for i, call in enumerate(resolved.reply.tool_calls)
        if call.arguments_object() is None
    )


@dataclass(frozen=True, slots=True)
class _Block:
    """One content block of a streamed message, and the event parts it is tagged with."""

    start: dict[str, Any]
    deltas: list[dict[str, Any]]
    start_part: str
    delta_part: str
    stop_part: str
    opening: list[dict[str, Any]] = field(default_factory=list)

    def events(self, index: int) -> list[Event]:
        out = [
            _event(
                "content_block_start",
                {"index": index, "content_block": self.start},
                self.start_part,
            )
        ]
        out += [
            _event("content_block_delta", {"index": index, "delta": d}, self.start_part)
            for d in self.opening
        ]
        out += [
            _event("content_block_delta", {"index": index, "delta": d}, self.delta_part, _piece(d))
            for d in self.deltas
        ]
        if self.start_part.startswith("call:"):  # the call begins, with no arguments yet
            out[0] = out[0]._replace(carries="")
        return [*out, _event("content_block_stop", {"index": index}, self.stop_part)]


def _piece(delta: dict[str, Any]) -> str | None:
    """What a delta hands the client (Event.carries); a signature hands it nothing."""
    for key in ("text", "thinking", "partial_json"):
        if key in delta:
            return str(delta[key])
    return None


def _event(kind: str, payload: dict[str, Any], part: str, carries: str | None = None) -> Event:
    data = dumps({"type": kind, **payload})
    return Event(sse_frame(data, kind), part, None, carries)


def _message_head(
    resolved: Resolved, parsed: Parsed, content: list[dict[str, Any]], prefix: str
) -> dict[str, Any]:
    return {
        "model": parsed.conversation.model,
        "id": derive(prefix, 22, resolved.scenario.name, resolved.id_turn),
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": None,
        "stop_sequence": None,
        "stop_details": None,
    }


def _has_text_block(resolved: Resolved) -> bool:
    """A refusal's text is not Anthropic's: its refusal is the stop reason after whatever
    text came before (https://docs.claude.com/en/docs/test-and-evaluate/strengthen-guardrails/
    handle-streaming-refusals); an empty reply is an empty content list."""
    return resolved.reply.text_part


def _search_blocks(resolved: Resolved, parsed: Parsed) -> list[dict[str, Any]]:
    """A server-side tool search (`tool_search_tool_regex`/`_bm25`, beta
    `advanced-tool-use-2025-11-20`): its `server_tool_use` and the
    `tool_search_tool_result` naming the deferred tools found, as the API puts both in the
    assistant's content before what the model says and calls next."""
    reply, search = resolved.reply, parsed.conversation.tool_search
    if reply.search is None or search is None:
        return []
    use_id = derive("srvtoolu_01", 22, resolved.scenario.name, resolved.id_turn, "search")
    use = {
        "type": "server_tool_use",
        "id": use_id,
        "name": search.name,
        "input": {search.query_key: reply.search},
        **CALLER,
    }
    references = [{"type": "tool_reference", "tool_name": name} for name in reply.found]
    found = {"type": "tool_search_tool_search_result", "tool_references": references}
    return [use, {"type": "tool_search_tool_result", "tool_use_id": use_id, "content": found}]


def _search_stream_blocks(resolved: Resolved, parsed: Parsed) -> list[_Block]:
    """The search's blocks streamed: the server_tool_use's input as one input_json_delta,
    the result whole in its content_block_start (as the API streams server tool results)."""
    blocks = _search_blocks(resolved, parsed)
    if not blocks:
        return []
    use, found = blocks
    delta = {"type": "input_json_delta", "partial_json": compact_json(use["input"])}
    return [
        _Block({**use, "input": {}}, [delta], "search", "search", "search"),
        _Block(found, [], "search", "search", "search"),
    ]


def _usage(resolved: Resolved) -> dict[str, Any]:
    return {
        "input_tokens": resolved.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": resolved.output_tokens,
        "service_tier": "standard",
        "inference_geo": "not_available",
    }


def _rate_headers(retry_after: float | None) -> list[tuple[bytes, bytes]]:
    """anthropic-ratelimit-* as the API sends them; given a retry-after (a 429), the
    requests window is spent and resets that many seconds after the fixed clock."""
    headers = []
    for kind, limit in RATE_LIMITS.items():
        remaining, reset = str(limit - (kind == "requests")), RESET
        if retry_after is not None and kind == "requests":
            when = datetime.fromtimestamp(FIXED_CREATED + math.ceil(retry_after), timezone.utc)
            remaining, reset = "0", when.strftime("%Y-%m-%dT%H:%M:%SZ")
        headers += [
            (f"anthropic-ratelimit-{kind}-limit".encode(), str(limit).encode()),
            (f"anthropic-ratelimit-{kind}-remaining".encode(), remaining.encode()),
            (f"anthropic-ratelimit-{kind}-reset".encode(), reset.encode()),
        ]
    return headers


_HEADERS = _rate_headers(None)  # built once: every answer sends them


def _input_object(resolved: Resolved, index: int, call: ScriptedCall) -> dict[str, Any]:
    """`input` must be an object on this wire. Arguments that are a cut-off JSON object keep
    their complete top-level parameters — the API buffers each parameter until it is
    complete, so a tool_use cut short carries only those. Anything else cannot be said."""
    whole = call.arguments_object()
    if whole is not None:
        return whole
    partial = complete_parameters(call.arguments)
    if partial is None:
        message = (
            f"mockllm: scenario {resolved.scenario.name!r} turn {resolved.turn} call {index} "
            f"({call.name}) has arguments {call.arguments!r}, which are not a JSON object nor a "
            "cut-off one; a non-streamed Anthropic tool_use.input must be an object, so this reply "
            "cannot be expressed here. Request it with stream=true (the text is then sent verbatim "
            "as input_json_delta fragments), or use an OpenAI API."
        )
        raise RequestError(400, message, kind="unrepresentable_reply", code="unrepresentable_reply")
    return partial


def complete_parameters(text: str) -> dict[str, Any] | None:
    """The top-level parameters completed before `text` was cut off, or None if `text` is
    not the beginning of a JSON object."""
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return None
    depth, in_string, escaped, last_comma = 0, False, False, None
    for i, ch in enumerate(stripped):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 1:
            last_comma = i
    candidate = stripped[:last_comma] + "}" if last_comma is not None else "{}"
    try:
        value = json.loads(candidate)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# --- request parsing helpers ---------------------------------------------------------------


def _message(m: Any, i: int) -> list[Message]:
    if not isinstance(m, dict):
        raise bad(f"messages.{i}: Input should be a valid dictionary")
    role = m.get("role")
    if role not in ("user", "assistant", "system"):
        raise bad(f"messages.{i}.role: Input should be 'user' or 'assistant'")
    if "content" not in m:
        raise bad(f"messages.{i}.content: Field required")
    content = m["content"]
    at = f"messages[{i}]"
    if isinstance(content, str) and role == "user":  # one text block: the user speaking
        return [Message("user", content, at=at)]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        raise bad(f"messages.{i}.content: Input should be a valid list")
    if role == "system":  # accepted only where the model or a beta allows (parse_headed)
        return [Message("system", text_of(blocks), at=at)]
    if role == "assistant":
        return [_assistant(blocks, i, at)]
    results = tuple(
        _result(b) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"
    )
    text = text_of([b for b in blocks if isinstance(b, dict) and b.get("type") == "text"])
    out = [Message("tool", tool_results=results, at=at)] if results else []
    if text or not results:  # text after the results is the user speaking again
        out.append(Message("user", text, at=at))
    return out


def _assistant(blocks: list[Any], i: int, at: str) -> Message:
    calls, texts, thinking = [], [], []
    for j, b in enumerate(blocks):
        if not isinstance(b, dict):
            raise bad(f"messages.{i}.content.{j}: Input should be a valid dictionary")
        kind = b.get("type")
        if kind == "text":
            texts.append(str(b.get("text", "")))
        elif kind == "tool_use":  # a server_tool_use the API ran itself: no call to answer
            arguments = compact_json(b.get("input", {}))
            calls.append(ToolCall(str(b.get("id", "")), str(b.get("name", "")), arguments))
        elif kind == "thinking":
            thinking.append(str(b.get("thinking", "")))
    reasoning = "\n".join(thinking) if thinking else None
    return Message("assistant", "\n".join(texts), tuple(calls), reasoning=reasoning, at=at)


def _result(block: dict[str, Any]) -> ToolResult:
    return ToolResult(
        str(block.get("tool_use_id", "")),
        _result_text(block.get("content")),
        bool(block.get("is_error", False)),
    )


def _result_text(content: Any) -> str:
    """The result's text, and each tool it hands over: a tool search's result (Claude
    Code's `ToolSearch`, beta `advanced-tool-use-2025-11-20`) is `tool_reference` blocks
    only, which read `tool_reference: NAME`, in the log and for `expect: tool_results`
    (they were an empty result)."""
    text = text_of(content)
    if not isinstance(content, list):
        return text
    found = [
        f"tool_reference: {part['tool_name']}"
        for part in content
        if isinstance(part, dict)
        and part.get("type") == "tool_reference"
        and isinstance(part.get("tool_name"), str)
    ]
    return "\n".join([text, *found] if text else found)


# The server-side tool searches (beta advanced-tool-use-2025-11-20) and what each takes.
_SERVER_SEARCHES = {"tool_search_tool_regex": "pattern", "tool_search_tool_bm25": "query"}
# Claude Code's client-side search: a plain tool, answered with tool_reference blocks.
CLIENT_SEARCH = "ToolSearch"


Offer = tuple[tuple[Tool, ...], tuple[Tool, ...], ToolSearch | None]

# The tools of the few tool lists a client sends again and again (an agent's every
# request), parsed once: keyed by their JSON; bounded in entries and in bytes (the key).
_OFFERS = SizedLru(64)


def _tools(tools: Any, messages: Any) -> Offer:
    """The tools offered, those deferred and not found yet, and the tool search offered.
    A tool sent with `defer_loading: true` is offered once a search in the history handed
    it over (a `tool_reference`): the model cannot call it before (Claude Code sends its
    MCP tools that way from the search on). Without such a tool the history plays no part:
    remembered by the list's JSON (orjson's: a number too big for it, or a lone surrogate,
    is not remembered)."""
    if tools is None:
        return (), (), None
    if not isinstance(tools, list):
        raise bad("tools: Input should be a valid list")
    try:
        key: bytes | None = orjson.dumps(tools)
    except orjson.JSONEncodeError:
        key = None
    found: Offer | None = _OFFERS.get(key) if key is not None else None
    if found is not None:
        return found
    made, later = _tools_of(tools, messages)
    if key is not None and not later:
        _OFFERS.put(key, made, len(key))
    return made


def _tools_of(tools: list[Any], messages: Any) -> tuple[Offer, bool]:
    """`_tools`, and whether a tool is deferred (the history then plays a part)."""
    offered: list[Tool] = []
    deferred: list[Tool] = []
    server: ToolSearch | None = None
    # The history is searched for tool_references only when a tool is deferred.
    later = any(isinstance(t, dict) and t.get("defer_loading") is True for t in tools)
    found = _found(messages) if later else set()
    for i, t in enumerate(tools):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise bad(f"tools.{i}.name: Field required")
        description = t.get("description")
        tool = Tool(
            t["name"],
            t.get("input_schema"),
            t.get("strict") is True,
            description=description if isinstance(description, str) else "",
        )
        kind = t.get("type")  # none for a client tool (or "custom"): not a server search
        variant = _server_search(str(kind)) if kind is not None and server is None else None
        if variant is not None:
            server = ToolSearch("server", t["name"], _SERVER_SEARCHES[variant])
        if t.get("defer_loading") is True and t["name"] not in found:
            deferred.append(tool)
        else:
            offered.append(tool)
    client = any(t.name == CLIENT_SEARCH for t in offered)
    search = server or (ToolSearch("client", CLIENT_SEARCH) if client else None)
    return (tuple(offered), tuple(deferred), search), later


def _server_search(kind: str) -> str | None:
    """The server-side tool search a tool's `type` names (its dated variants too)."""
    for variant in _SERVER_SEARCHES:
        if kind.startswith(variant):
            return variant
    return None


def _found(messages: Any) -> set[str]:
    """The tools a search in the history handed over: the `tool_reference` blocks of tool
    results (a client-side search) and of server-side `tool_search_tool_result` blocks."""
    names: set[str] = set()
    if not isinstance(messages, list):
        return names
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            inner = block.get("content")
            if block.get("type") == "tool_search_tool_result" and isinstance(inner, dict):
                inner = inner.get("tool_references")
            if block.get("type") in ("tool_result", "tool_search_tool_result"):
                names.update(_reference_names(inner))
    return names


def _reference_names(blocks: Any) -> list[str]:
    if not isinstance(blocks, list):
        return []
    return [
        b["tool_name"]
        for b in blocks
        if isinstance(b, dict)
        and b.get("type") == "tool_reference"
        and isinstance(b.get("tool_name"), str)
    ]


def _one_call(choice: Any) -> bool:
    """`disable_parallel_tool_use: true`: at most one tool_use block per reply."""
    return isinstance(choice, dict) and choice.get("disable_parallel_tool_use") is True


def _tool_choice(choice: Any) -> ToolChoice | None:
    if choice is None:
        return None
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind in TOOL_CHOICES:
        return ToolChoice(TOOL_CHOICES[kind])  # type: ignore[arg-type]
    if kind == "tool" and isinstance(choice.get("name"), str):
        return ToolChoice("tool", choice["name"])
    raise bad(
        "tool_choice: Input tag does not match any of the expected tags: "
        "'auto', 'any', 'tool', 'none'"
    )
