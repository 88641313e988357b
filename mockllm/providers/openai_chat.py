"""OpenAI Chat Completions (https://platform.openai.com/docs/api-reference/chat), and its
DeepSeek flavour (https://api-docs.deepseek.com/api/create-chat-completion)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable
from operator import attrgetter
from typing import Any, ClassVar

from mockllm.core.cache import SizedLru
from mockllm.core.conversation import (
    SERVED_CALLS,
    Conversation,
    Message,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
)
from mockllm.core.encoding import sse_frame
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
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
from mockllm.providers.openai_chat_rules import TOOLS_TEXT, WALK, Walk

# The dated snapshot the API names in its answer for an alias (as recorded; others echo).
SNAPSHOTS = {
    "gpt-4o": "gpt-4o-2024-08-06",
    "gpt-4o-mini": "gpt-4o-mini-2024-07-18",
    "gpt-4.1": "gpt-4.1-2025-04-14",
    "gpt-4.1-mini": "gpt-4.1-mini-2025-04-14",
    "gpt-4.1-nano": "gpt-4.1-nano-2025-04-14",
    "gpt-5": "gpt-5-2025-08-07",
    "gpt-5-mini": "gpt-5-mini-2025-08-07",
    "gpt-5-nano": "gpt-5-nano-2025-08-07",
    "gpt-5.5": "gpt-5.5-2026-04-23",
    "o3": "o3-2025-04-16",
    "o3-mini": "o3-mini-2025-01-31",
    "o4-mini": "o4-mini-2025-04-16",
}
# Rate-limit headers of a healthy answer, as a tier-5 key sees them (deterministic).
OPENAI_LIMITS = {"requests": ("30000", "29999", "2ms"), "tokens": ("150000000", "149999000", "0s")}
INVALID_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was "
    "sent was not valid JSON. If you have trouble figuring out how to fix this, please contact "
    "us through our help center at help.openai.com.)"
)
_ROLE_LIST = "'system', 'assistant', 'user', 'function', 'tool', and 'developer'"


def openai_error_type(status: int) -> str:
    if status == 429:
        return "requests"
    return "server_error" if status >= 500 else "invalid_request_error"


def openai_error_body(error: RequestError) -> bytes:
    return dumps(
        {
            "error": {
                "message": error.message,
                "type": error.error_type or openai_error_type(error.status),
                "param": error.param,
                "code": error.code,
            }
        }
    )


# What OpenAI sends with these statuses
# (https://platform.openai.com/docs/guides/error-codes; 503 and 529 wordings unverified).
OPENAI_FAULT_TEXTS: dict[int, tuple[str, str, str | None]] = {
    429: (
        "requests",
        "Rate limit reached for requests per min (RPM) in organization org-mockllm: Limit 3, "
        "Used 3, Requested 1. Please try again in 1s. Visit "
        "https://platform.openai.com/account/rate-limits to learn more.",
        "rate_limit_exceeded",
    ),
    500: (
        "server_error",
        "The server had an error while processing your request. Sorry about that!",
        None,
    ),
    503: ("server_error", "The server is overloaded or not ready yet.", None),
    529: ("server_error", "The server is overloaded or not ready yet.", None),
}


def openai_fault_texts(status: int) -> tuple[str, str, str | None]:
    return OPENAI_FAULT_TEXTS.get(
        status, (openai_error_type(status), f"mockllm fault: HTTP {status}", None)
    )


def openai_error_frame(error: RequestError) -> bytes:
    """The `data: {"error": …}` frame that ends a Chat Completions stream in error."""
    return sse_frame(openai_error_body(error))


def snapshot(model: str) -> str:
    return SNAPSHOTS.get(model, model)


def reasoning_model(model: str) -> bool:
    """The reasoning families, whose choices carry no `logprobs` key at all."""
    return model.startswith(("gpt-5", "o1", "o3", "o4", "gpt-4.5"))


def fingerprint(model: str) -> str | None:
    """`fp_` + 10 hex, one per model; the gpt-5 family sends null."""
    return None if model.startswith("gpt-5") else derive("fp_", 10, model, alphabet=HEX)


def openai_headers(status: int, retry_after: float | None) -> list[tuple[bytes, bytes]]:
    """openai-version, openai-processing-ms and x-ratelimit-*: on a 429 the requests
    window is spent and resets when its retry-after says."""
    return _rate_headers(429, retry_after) if status == 429 else _OPENAI_HEADERS


def _rate_headers(status: int, retry_after: float | None) -> list[tuple[bytes, bytes]]:
    headers = [(b"openai-version", b"2020-10-01"), (b"openai-processing-ms", b"42")]
    for kind, (limit, remaining, reset) in OPENAI_LIMITS.items():
        if status == 429 and kind == "requests":
            remaining, reset = "0", _duration(retry_after or 0)
        headers += [
            (f"x-ratelimit-limit-{kind}".encode(), limit.encode()),
            (f"x-ratelimit-remaining-{kind}".encode(), remaining.encode()),
            (f"x-ratelimit-reset-{kind}".encode(), reset.encode()),
        ]
    return headers


def _duration(seconds: float) -> str:
    """As the x-ratelimit-reset-* headers write it: 20ms, 1s, 6m0s."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:g}s" if minutes else f"{rest:g}s"


_OPENAI_HEADERS = _rate_headers(200, None)  # built once: every answer sends them


def bad(message: str, param: str | None, code: str | None = None) -> RequestError:
    return RequestError(400, message, param=param, code=code)


def missing(param: str) -> RequestError:
    return bad(f"Missing required parameter: '{param}'.", param, "missing_required_parameter")


def wrong_type(param: str, expected: str, value: object) -> RequestError:
    got = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else "null"
    )
    return bad(
        f"Invalid type for '{param}': expected {expected}, but got {got} instead.",
        param,
        "invalid_type",
    )


class ChatCompletions(Adapter):
    api = "openai-chat"
    family = "openai"
    routes: ClassVar[tuple[str, ...]] = ("v1/chat/completions", "chat/completions")
    request_id_header = "x-request-id"
    invalid_json_message = INVALID_JSON
    shape = shapes.CHAT

    def type_error(self, path: shapes.Path, expected: str, value: Any) -> RequestError:
        return wrong_type(shapes.openai_param(path), expected, value)

    # --- parse -------------------------------------------------------------------------

    def parse(self, body: Any) -> Parsed:
        if not isinstance(body, dict):
            raise wrong_type("body", "an object", body)
        if not body.get("model"):
            raise bad("you must provide a model parameter", None)
        messages = body.get("messages")
        if messages is None:
            raise missing("messages")
        if not isinstance(messages, list):
            raise wrong_type("messages", "an array of objects", messages)
        if not messages:
            raise bad(
                "Invalid 'messages': empty array. Expected an array with minimum length 1, "
                "but got an empty array instead.",
                "messages",
                "empty_array",
            )
        history, walk = _history(messages)
        tools = body.get("tools")
        tools_text = None if tools is None else repr(tools)  # the rules key by it too
        conversation = Conversation(
            model=str(body["model"]),
            messages=history,
            tools=_tools(tools, tools_text),
            tool_choice=_tool_choice(body.get("tool_choice")),
            stream=body.get("stream") is True,
            output=output_formats.openai_chat(body.get("response_format")),
            parallel_tool_calls=body.get("parallel_tool_calls") is not False,
        )
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        own = (conversation.model, include_usage)
        flavoured, key = self._with_flavour(body, {"include_usage": include_usage}, own)
        views = {WALK: walk, TOOLS_TEXT: tools_text}
        return Parsed(conversation, flavoured, render_key=key, views=views)

    def _with_flavour(
        self, body: dict[str, Any], options: dict[str, Any], key: Hashable
    ) -> tuple[dict[str, Any], Hashable]:
        """The render options and key, with what a flavour reads (flavoured_chat.py)."""
        return options, key

    # --- render ------------------------------------------------------------------------

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        if self._deepseek(scenario):  # call_00_…, call_01_…: the index shows in the id
            return scripted_id(scenario, turn, index, f"call_{index:02d}_", 24, attempt)
        return scripted_id(scenario, turn, index, "call_", 24, attempt)

    def _deepseek(self, scenario: Scenario) -> bool:
        return (scenario.flavor or self.flavor) == "deepseek"

    def completion_id(self, resolved: Resolved) -> str:
        """The body's (and every chunk's) `id`."""
        return derive("chatcmpl-", 29, resolved.scenario.name, resolved.id_turn)

    def render(self, resolved: Resolved, parsed: Parsed) -> Body:
        reply = resolved.reply
        deepseek = self._deepseek(resolved.scenario)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text or (None if reply.tool_calls and not deepseek else ""),
        }
        if reply.refusal is not None or reply.empty == "null":  # declined, or nothing at all
            message["content"] = None
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        if not deepseek:
            message["refusal"] = reply.refusal
            message["annotations"] = []
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    **({"index": i} if deepseek else {}),
                    "id": self.call_id(resolved.scenario, resolved.turn, i, resolved.attempt),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for i, call in enumerate(reply.tool_calls)
            ]
        choice: dict[str, Any] = {"index": 0, "message": message, **_logprobs(parsed, deepseek)}
        choice["finish_reason"] = reply.finish
        head = _head(resolved, parsed, "chat.completion", deepseek, self.completion_id)
        body = {**head, "choices": [choice], "usage": _usage(resolved, deepseek)}
        if not deepseek:  # OpenAI sends these two last, DeepSeek its fingerprint in the head
            body["service_tier"] = body.pop("service_tier")
            body["system_fingerprint"] = body.pop("system_fingerprint")
        return Body(dumps(body))

    def render_stream(self, resolved: Resolved, parsed: Parsed) -> Stream:
        include_usage = bool(parsed.options.get("include_usage"))
        deepseek = self._deepseek(resolved.scenario)
        head = _head(resolved, parsed, "chat.completion.chunk", deepseek, self.completion_id)
        logprobs = _logprobs(parsed, deepseek)

        def frame(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> bytes:
            chunk: dict[str, Any] = {
                **head,
                "choices": [{"index": 0, "delta": delta, **logprobs, "finish_reason": finish}],
            }
            if include_usage:
                chunk["usage"] = usage
            return sse_frame(dumps(chunk))

        deltas = _deltas(self, resolved, deepseek)
        events = [Event(frame(d), part, None, piece) for d, part, piece in deltas]
        if deepseek:  # usage rides on the finish chunk; there is no separate usage chunk
            last = {"content": "", "reasoning_content": None}
            usage = _usage(resolved, True) if include_usage else None
            events.append(Event(frame(last, resolved.reply.finish, usage), "tail"))
        else:
            events.append(Event(frame({}, resolved.reply.finish), "tail"))
            if include_usage:
                final = {**head, "choices": [], "usage": _usage(resolved, False)}
                events.append(Event(sse_frame(dumps(final)), "tail"))
        events.append(Event(sse_frame(b"[DONE]"), "done"))
        return Stream(events)

    def wire_headers(self, status: int, retry_after: float | None) -> list[tuple[bytes, bytes]]:
        return openai_headers(status, retry_after)

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        return openai_error_body(error)

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        return openai_fault_texts(status)

    def stream_error_events(self, error: RequestError, sent: int) -> list[bytes]:
        return [openai_error_frame(error)]


def _deltas(
    adapter: ChatCompletions, resolved: Resolved, deepseek: bool
) -> list[tuple[dict[str, Any], str, str | None]]:
    """The stream's deltas in order, each with its part and the piece it carries (Event);
    the role rides on the first, as OpenAI sends it.
    DeepSeek opens a thinking reply with `reasoning_content: ""` and marks every later text
    delta `reasoning_content: null`."""
    reply = resolved.reply
    size = resolved.scenario.stream.text_chunk_chars
    out: list[tuple[dict[str, Any], str, str | None]] = []
    thinking = reply.reasoning is not None
    if thinking:
        if deepseek:
            out.append(({"content": None, "reasoning_content": ""}, "head", None))
        out += [
            ({"content": None, "reasoning_content": p}, "reasoning", p)
            for p in chunks(reply.reasoning or "", size)
        ]
    if reply.refusal is not None:  # as OpenAI streams one: content null, refusal deltas
        out.append(({"content": None, "refusal": ""}, "head", None))
        out += [({"refusal": p}, "text", None) for p in chunks(reply.refusal, size)]
    elif not out and (reply.text or not reply.tool_calls):
        content = None if reply.empty == "null" else ""  # an empty reply: null or ""
        out.append(({"content": content, "refusal": None}, "head", None))
    after = {"reasoning_content": None} if deepseek and thinking else {}
    out += [({"content": p, **after}, "text", p) for p in chunks(reply.text, size)]
    for i, call in enumerate(reply.tool_calls):
        start = {
            "index": i,
            "id": adapter.call_id(resolved.scenario, resolved.turn, i, resolved.attempt),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        out.append(({"tool_calls": [start]}, f"call:{i}", ""))
        pieces = fragments(call.arguments, resolved.scenario.stream.argument_fragments)
        out += [
            ({"tool_calls": [{"index": i, "function": {"arguments": p}}]}, f"args:{i}", p)
            for p in pieces
        ]
    first, part, carried = out[0]
    if "content" not in first:
        first = {"content": None, "refusal": None, **first}
    out[0] = ({"role": "assistant", **first}, part, carried)
    return out


def _head(
    resolved: Resolved,
    parsed: Parsed,
    kind: str,
    deepseek: bool,
    completion_id: Callable[[Resolved], str],
) -> dict[str, Any]:
    """The fields every body and chunk opens with (OpenAI: service_tier on every chunk)."""
    model = parsed.conversation.model
    if deepseek:
        return {
            "id": str(
                uuid.UUID(
                    derive(
                        "", 32, "deepseek", resolved.scenario.name, resolved.id_turn, alphabet=HEX
                    ),
                    version=4,
                )
            ),
            "object": kind,
            "created": resolved.created,
            "model": model,
            "system_fingerprint": derive("fp_", 10, model, alphabet=HEX) + "_prod0820_fp8_kvcache",
        }
    return {
        "id": completion_id(resolved),
        "object": kind,
        "created": resolved.created,
        "model": snapshot(model),
        "service_tier": "default",
        "system_fingerprint": fingerprint(model),
    }


def _logprobs(parsed: Parsed, deepseek: bool) -> dict[str, None]:
    return {} if not deepseek and reasoning_model(parsed.conversation.model) else {"logprobs": None}


def _usage(resolved: Resolved, deepseek: bool) -> dict[str, Any]:
    counts = {
        "prompt_tokens": resolved.input_tokens,
        "completion_tokens": resolved.output_tokens,
        "total_tokens": resolved.input_tokens + resolved.output_tokens,
    }
    if deepseek:  # a cold cache: every prompt token a miss
        return {
            **counts,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": resolved.reasoning_tokens},
            "prompt_cache_hit_tokens": 0,
            "prompt_cache_miss_tokens": resolved.input_tokens,
        }
    return {
        **counts,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": resolved.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


# --- request parsing helpers ---------------------------------------------------------------


def _history(messages: list[Any]) -> tuple[tuple[Message, ...], Walk]:
    """The messages, and what the history rules C1-C3 find in them (openai_chat_rules.Walk),
    in one loop: it runs per message of a history, so the usual tool result (text content)
    is built here and every other message by `_message`. The rules read the raw roles: a
    legacy `function` message is no tool message to them, though parsed as one."""
    out = []
    orphan: int | None = None
    unknown: tuple[int, str] | None = None
    walk = Walk()
    opened = -1  # the assistant message whose tool_calls the tool messages now answer
    calls: list[str] = []
    answered: list[str] = []
    answering = False  # the last message other than a tool result made tool calls
    for i, m in enumerate(messages):
        role = m.get("role") if type(m) is dict else None
        if role == "tool":
            call_id, text = m.get("tool_call_id"), m.get("content")
            if type(call_id) is str and type(text) is str:
                result = (ToolResult(call_id, text),)
                out.append(Message("tool", "", (), result, None, f"messages[{i}]"))
            else:
                out.append(_message(m, i))  # refuses a missing id; a content of parts
            if not answering and orphan is None:
                orphan = i
            if opened >= 0:
                if unknown is None and call_id not in calls:
                    unknown = (i, call_id)
                answered.append(call_id)
            continue
        message = _message(m, i)
        out.append(message)
        if opened >= 0:
            if answered != calls:  # the usual case: answered one by one, in order
                walk.close(opened, calls, answered)
            opened = -1
        answering = bool(message.tool_calls)
        if answering:
            calls = list(map(_ID, message.tool_calls))
            opened, answered = i, []
    if opened >= 0:
        walk.close(opened, calls, answered)
    walk.orphan, walk.unknown = orphan, unknown
    return tuple(out), walk


_ID = attrgetter("id")


def _message(m: Any, i: int) -> Message:
    """One message; the usual roles first, with positional fields: it runs per message."""
    where = f"messages[{i}]"
    if not isinstance(m, dict):
        raise wrong_type(where, "an object", m)
    role = m.get("role")
    content = m.get("content")
    text = content if isinstance(content, str) else "" if content is None else text_of(content)
    if role == "tool":
        call_id = m.get("tool_call_id")
        if not isinstance(call_id, str):
            message = "messages with role 'tool' must have a 'tool_call_id'."
            raise bad(f"Missing parameter 'tool_call_id': {message}", f"{where}.tool_call_id")
        return Message("tool", "", (), (ToolResult(call_id, text),), None, where)
    if role == "assistant":
        calls = m.get("tool_calls")
        reasoning = m.get("reasoning_content")
        return Message(
            "assistant",
            text,
            _calls(calls, where) if calls else (),
            (),
            reasoning if isinstance(reasoning, str) else None,
            where,
        )
    if role == "user":
        return Message("user", text, (), (), None, where)
    if role == "system" or role == "developer":
        return Message("system", text, (), (), None, where)
    if role == "function":  # legacy: answers by function name
        result = ToolResult(str(m.get("name", "")), text)
        return Message("tool", tool_results=(result,), at=where)
    if role is None:
        raise missing(f"{where}.role")
    raise bad(
        f"Invalid value: '{role}'. Supported values are: {_ROLE_LIST}.",
        f"{where}.role",
        "invalid_value",
    )


def _calls(calls: Any, at: str) -> tuple[ToolCall, ...]:
    """An assistant message's tool_calls, in one loop (it runs per message of a history)."""
    out = []
    for c in calls:
        try:  # the usual call, echoed as served: found by its three strings (only str == str)
            function = c["function"]
            found = SERVED_CALLS.get((c["id"], function["name"], function["arguments"]))
        except (KeyError, TypeError):  # not an object, a key missing, an unhashable value
            found = None
        if found is not None:
            out.append(found)
            continue
        function = c.get("function") if isinstance(c, dict) else None
        if isinstance(function, dict):
            call_id, name, arguments = c.get("id"), function.get("name"), function.get("arguments")
            if isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, str):
                out.append(ToolCall(call_id, name, arguments))
                continue
        raise _call_error(c, f"{at}.tool_calls[{len(out)}]")
    return tuple(out)


def _call_error(c: Any, where: str) -> RequestError:
    """What is wrong with a tool call, in the order the API checks."""
    if not isinstance(c, dict):
        return wrong_type(where, "an object", c)
    function = c.get("function")
    if not isinstance(function, dict):
        return missing(f"{where}.function")
    for key in ("name", "arguments"):
        if not isinstance(function.get(key), str):
            return missing(f"{where}.function.{key}")
    return missing(f"{where}.id")


def _tools(tools: Any, text: str | None) -> tuple[Tool, ...]:
    """The tools offered. A harness sends the same list with every request: parsed once,
    by its text (repr: exact for JSON values)."""
    if tools is None or text is None:
        return ()
    found: tuple[Tool, ...] | None = _TOOL_LISTS.get(text)
    if found is None:
        # weighed as twice its text: the key, and the parsed schemas the tools hold
        found = _TOOL_LISTS.put(text, _tools_now(tools), 2 * len(text))
    return found


_TOOL_LISTS = SizedLru(256)  # keyed by a client's tools list text: bounded in bytes too


def _tools_now(tools: Any) -> tuple[Tool, ...]:
    if not isinstance(tools, list):
        raise wrong_type("tools", "an array of objects", tools)
    out = []
    for i, t in enumerate(tools):
        if not isinstance(t, dict):
            raise wrong_type(f"tools[{i}]", "an object", t)
        kind = t.get("type", "function")
        spec = t.get(kind)
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise missing(f"tools[{i}].{kind}.name")
        out.append(Tool(spec["name"], spec.get("parameters"), spec.get("strict") is True))
    return tuple(out)


def _tool_choice(choice: Any) -> ToolChoice | None:
    if choice is None:
        return None
    if choice in ("auto", "none", "required"):
        return ToolChoice(choice)
    if isinstance(choice, dict):
        if choice.get("type") == "allowed_tools":
            mode = (choice.get("allowed_tools") or {}).get("mode", "auto")
            return ToolChoice("required" if mode == "required" else "auto")
        named = choice.get(choice.get("type", "function"))
        if isinstance(named, dict) and isinstance(named.get("name"), str):
            return ToolChoice("tool", named["name"])
    raise bad(
        f"Invalid value for 'tool_choice': {choice!r}. Expected 'none', 'auto', 'required', "
        "or an object naming a function.",
        "tool_choice",
        "invalid_value",
    )
