"""Ollama's native API (`POST /api/chat`, `POST /api/generate`): docs/http-api.md, "Ollama
specifics", says what each choice below is based on (ollama/ollama's server/routes.go and
api/types.go, docs/api.md, and the `ollama` Python client).

`stream` is on unless the body says `false`; a stream is newline-delimited JSON. Errors are
`{"error": "..."}`. Ids: Ollama gives each call an `id`, which clients may drop (the
`ollama` Python client's ToolCall has no field for it) and send results back by
`tool_name`; inside mockllm a call is `turnT.callI` (its place in the conversation), as on
Gemini's wire, and a result answers the call whose `id` it names, else the next unanswered
call of its `tool_name`, else the next unanswered call.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from mockllm.core.conversation import Conversation, Message, Tool, ToolCall, ToolResult
from mockllm.core.encoding import compact_json
from mockllm.core.engine import Resolved
from mockllm.core.scenario import Scenario
from mockllm.errors import RequestError
from mockllm.providers import ollama_render as render
from mockllm.providers import output_formats, shapes
from mockllm.providers.base import Adapter, Body, Parsed, Stream, dumps, merge_assistants
from mockllm.providers.result_pairing import WireKey, call_key, name_calls

CHAT, GENERATE = "api/chat", "api/generate"
ROLES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool"}
# What Ollama answers with these statuses (server/sched.go's ErrMaxQueue for 503).
FAULT_MESSAGES = {
    503: "server busy, please try again.  maximum pending requests exceeded",
    500: "an error was encountered while running the model",
}
GO_TYPES = {
    "a string": "string",
    "a boolean": "bool",
    "an object": "map[string]interface {}",
    "an array": "[]interface {}",
    "an array of objects": "[]api.Message",
}


def bad(message: str) -> RequestError:
    return RequestError(400, message)


def unmarshal_error(where: str, value: Any, go_type: str) -> RequestError:
    """Go's encoding/json words for a field of the wrong type (gin's ShouldBindJSON)."""
    found = {str: "string", bool: "bool", int: "number", float: "number", list: "array"}
    kind = found.get(type(value), "object" if isinstance(value, dict) else "null")
    return bad(
        f"json: cannot unmarshal {kind} into Go struct field ChatRequest.{where} of type {go_type}"
    )


class Ollama(Adapter):
    api = "ollama"
    family = "ollama"
    routes = (CHAT, GENERATE)
    route_help = (CHAT, GENERATE)
    models_routes = ()
    # The `ollama` clients' User-Agent (ollama-python/…, ollama-js/…) is no header name:
    # they are told by none, and share no route with another family.
    stream_content_type = b"application/x-ndjson"
    invalid_json_message = "invalid character looking for beginning of value"
    shape = shapes.OLLAMA
    status_aliases = MappingProxyType({529: 503})  # no 529 in Ollama: busy is 503

    # --- parse -------------------------------------------------------------------------

    def parse(self, body: Any) -> Parsed:
        return self.parse_at(body, CHAT)

    def parse_at(self, body: Any, route: str) -> Parsed:
        if not isinstance(body, dict):
            kind = "array" if isinstance(body, list) else "value"
            raise bad(f"json: cannot unmarshal {kind} into Go value of type api.ChatRequest")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise bad("model is required")
        stream = body.get("stream")
        if stream is not None and not isinstance(stream, bool):
            raise unmarshal_error("stream", stream, "bool")
        generate = route == GENERATE
        messages = _prompt(body) if generate else _messages(body.get("messages"))
        conversation = Conversation(
            model=model,
            messages=tuple(messages),
            tools=() if generate else _tools(body.get("tools")),
            stream=stream is not False,  # on unless the body says false
            output=output_formats.ollama(body.get("format")),
        )
        return Parsed(conversation, {"generate": generate}, render_key=(model, generate))

    def type_error(self, path: shapes.Path, expected: str, value: Any) -> RequestError:
        where = ".".join(str(p) for p in path if isinstance(p, str))
        return unmarshal_error(where, value, GO_TYPES.get(expected, "string"))

    # --- render ------------------------------------------------------------------------

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        return call_key(turn, index)  # clients may drop the wire's ids: pairing is by name

    def render(self, resolved: Resolved, parsed: Parsed) -> Body:
        generate = bool(parsed.options.get("generate"))
        sent, notes = render.as_sent(resolved, generate)
        return Body(render.body(sent, parsed.conversation.model, generate), notes)

    def render_stream(self, resolved: Resolved, parsed: Parsed) -> Stream:
        generate = bool(parsed.options.get("generate"))
        sent, notes = render.as_sent(resolved, generate)
        return Stream(render.stream(sent, parsed.conversation.model, generate), notes)

    def as_sent(self, resolved: Resolved) -> Resolved:
        return render.as_sent(resolved, False)[0]

    # --- errors ------------------------------------------------------------------------

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        return dumps({"error": error.message})

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        return "error", FAULT_MESSAGES.get(status, f"mockllm fault: HTTP {status}"), None

    def stream_error_events(self, error: RequestError, sent: int) -> list[bytes]:
        return [render.error_line(error.message)]


# --- request parsing helpers ---------------------------------------------------------------


def _prompt(body: dict[str, Any]) -> list[Message]:
    """/api/generate: `system` and `prompt` (and `suffix`, the text after the answer)."""
    out = []
    system = body.get("system")
    if isinstance(system, str) and system:
        out.append(Message("system", system, at="system"))
    prompt = body.get("prompt")
    out.append(Message("user", prompt if isinstance(prompt, str) else "", at="prompt"))
    return out


def _messages(messages: Any) -> list[Message]:
    if messages is None:
        return []
    if not isinstance(messages, list):
        raise unmarshal_error("messages", messages, "[]api.Message")
    out: list[Message] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise unmarshal_error("messages", m, "api.Message")
        out.append(_message(m, f"messages[{i}]"))
    return name_calls(merge_assistants(out), by_position=True)


def _message(m: dict[str, Any], at: str) -> Message:
    role = str(m.get("role") or "").lower()  # Ollama lowers the role (api.Message)
    content = m.get("content")
    text = content if isinstance(content, str) else ""
    kind = ROLES.get(role, "user")  # any other role is rendered by the model's template
    if kind == "tool":
        wire = WireKey(str(m.get("tool_call_id") or ""), str(m.get("tool_name") or ""))
        return Message("tool", tool_results=(ToolResult(wire.encode(), text),), at=at)
    if kind != "assistant":
        return Message(kind, text, at=at)  # type: ignore[arg-type]
    calls = tuple(_call(c) for c in m.get("tool_calls") or () if isinstance(c, dict))
    thinking = m.get("thinking")
    reasoning = thinking if isinstance(thinking, str) and thinking else None
    return Message("assistant", text, calls, reasoning=reasoning, at=at)


def _call(call: dict[str, Any]) -> ToolCall:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    args = function.get("arguments")
    # An object, as Ollama takes it; a string is kept as sent, for rule O1 to name.
    arguments = args if isinstance(args, str) else compact_json({} if args is None else args)
    return ToolCall(str(call.get("id") or ""), str(function.get("name") or ""), arguments)


def _tools(tools: Any) -> tuple[Tool, ...]:
    out = []
    for tool in tools if isinstance(tools, list) else ():
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            out.append(Tool(function["name"], function.get("parameters")))
    return tuple(out)
