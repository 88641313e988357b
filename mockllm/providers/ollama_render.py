"""Ollama's answers (`/api/chat`, `/api/generate`): one JSON object, or newline-delimited JSON
objects (`application/x-ndjson`), the last with `done: true`, `done_reason` and the counts.

Shapes are Ollama's `api.ChatResponse` / `api.GenerateResponse` (api/types.go), in its key
order; the server emits each parsed tool call in a chunk of its own (server/routes.go,
ChatHandler) and builds the unstreamed answer from the last chunk with the content and
thinking joined (writeChatResponse). docs/http-api.md, "Ollama specifics", cites them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mockllm.core.encoding import compact_json
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.ids import LOWER_ALNUM, derive
from mockllm.core.scenario import Reply, Scenario, ScriptedCall
from mockllm.providers.base import chunks, dumps

# Fixed, so that answers are byte-identical: Go's RFC 3339 time as Ollama marshals it.
CREATED_AT = "2025-01-01T00:00:00Z"
DONE_REASONS = {"stop": "stop", "tool_calls": "stop", "length": "length", "content_filter": "stop"}
# Durations in nanoseconds, derived from the token counts (fixed: deterministic answers).
LOAD_NS = 1_000_000
PROMPT_NS_PER_TOKEN = 100_000
EVAL_NS_PER_TOKEN = 10_000_000


def wire_id(scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
    """The id Ollama gives a parsed call: `call_` and 8 of [a-z0-9] (server/routes.go,
    toolCallId), drawn from the call's place instead of at random; fresh per attempt."""
    served = scenario.turn(turn) if turn >= 0 else None
    calls = served.reply.tool_calls if served else ()
    explicit = calls[index].id if index < len(calls) else None
    if explicit is not None:
        return explicit
    parts: tuple[object, ...] = (scenario.name, turn, index)
    if attempt != 1:  # attempt 0 too: a template's ids are marked (serving/rendered.py)
        parts += (f"attempt {attempt}",)
    return derive("call_", 8, *parts, alphabet=LOWER_ALNUM)


def unparsed(reply: Reply) -> list[int]:
    """Calls whose arguments are not a JSON object: no `arguments` object carries them."""
    return [
        i
        for i, c in enumerate(reply.tool_calls)
        if c.arguments.strip() and c.arguments_object() is None
    ]


def as_sent(resolved: Resolved, generate: bool) -> tuple[Resolved, tuple[str, ...]]:
    """The reply as Ollama can send it, and the log's notes. A call whose arguments do not
    parse is what Ollama's tool parser hands back as content when a model's call does not
    parse (ollama/ollama#12017): the call's text follows the reply's text, and no call goes.
    `/api/generate` takes no tools: every call goes as that text."""
    reply = resolved.reply
    refused: tuple[str, ...] = ()
    if reply.refusal is not None and not reply.text:
        # Ollama has no refusal field: a local model refuses in words, as its content.
        reply = replace(reply, text=reply.refusal)
        resolved = replace(resolved, reply=reply)
        refused = ("a refusal: Ollama has no refusal field, so its text is the message content",)
    bad = list(range(len(reply.tool_calls))) if generate else unparsed(reply)
    if not bad:
        return resolved, refused
    texts = [_call_text(reply.tool_calls[i]) for i in bad]
    kept = tuple(c for i, c in enumerate(reply.tool_calls) if i not in bad)
    why = (
        "/api/generate has no tool calls"
        if generate
        else "arguments that are not a JSON object, which Ollama's tool_calls cannot carry"
    )
    notes = tuple(
        f"call {i} ({reply.tool_calls[i].name}): {why}; sent as message content "
        f"{t!r}, as Ollama sends a model's call that does not parse"
        for i, t in zip(bad, texts, strict=True)
    )
    text = "".join([reply.text, *texts])
    finish = reply.finish if kept or reply.finish == "length" else "stop"
    sent = replace(reply, text=text, tool_calls=kept, finish=finish)
    return replace(resolved, reply=sent), refused + notes


def _call_text(call: ScriptedCall) -> str:
    """The call as a model writes it before Ollama parses it: name and raw arguments."""
    return '{"name": ' + dumps(call.name).decode() + ', "arguments": ' + call.arguments + "}"


def arguments(call: ScriptedCall) -> Any:
    found = call.arguments_object()
    return {} if found is None else found


def tool_call(resolved: Resolved, index: int) -> dict[str, Any]:
    call = resolved.reply.tool_calls[index]
    ident = wire_id(resolved.scenario, resolved.turn, index, resolved.attempt)
    function = {"index": index, "name": call.name, "arguments": arguments(call)}
    return {"id": ident, "function": function}


def metrics(resolved: Resolved) -> dict[str, int]:
    """The final object's counts and durations (Go's omitempty: no zero goes)."""
    prompt, output = resolved.input_tokens, resolved.output_tokens
    prompt_ns, eval_ns = prompt * PROMPT_NS_PER_TOKEN, max(output, 1) * EVAL_NS_PER_TOKEN
    found = {
        "total_duration": LOAD_NS + prompt_ns + eval_ns,
        "load_duration": LOAD_NS,
        "prompt_eval_count": prompt,
        "prompt_eval_duration": prompt_ns,
        "eval_count": output,
        "eval_duration": eval_ns,
    }
    return {k: v for k, v in found.items() if v}


def _message(content: str, thinking: str | None = None, calls: list[Any] | None = None) -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking:
        message["thinking"] = thinking
    if calls:
        message["tool_calls"] = calls
    return message


def _object(model: str, generate: bool, said: dict[str, Any], done: bool) -> dict[str, Any]:
    """One answer object: `message` for chat, `response` (and `thinking`) for generate."""
    out: dict[str, Any] = {"model": model, "created_at": CREATED_AT}
    if generate:
        out["response"] = said.get("content", "")
        if said.get("thinking"):
            out["thinking"] = said["thinking"]
    else:
        out["message"] = _message(said.get("content", ""), said.get("thinking"), said.get("calls"))
    out["done"] = done
    return out


def body(resolved: Resolved, model: str, generate: bool) -> bytes:
    reply = resolved.reply
    calls = [tool_call(resolved, i) for i in range(len(reply.tool_calls))]
    said = {"content": reply.text, "thinking": reply.reasoning, "calls": calls}
    out = _object(model, generate, said, True)
    out["done_reason"] = DONE_REASONS[reply.finish]
    out.update(metrics(resolved))
    return dumps(out)


def line(payload: dict[str, Any]) -> bytes:
    return dumps(payload) + b"\n"


def stream(resolved: Resolved, model: str, generate: bool) -> list[Event]:
    """The reply as NDJSON lines: thinking and text in chunks, each call whole in a line of
    its own, then the final object (empty content, the reason and the counts)."""
    reply, size = resolved.reply, resolved.scenario.stream.text_chunk_chars
    events = [
        Event(line(_object(model, generate, {"thinking": p}, False)), "reasoning", None, p)
        for p in chunks(reply.reasoning or "", size)
    ]
    events += [
        Event(line(_object(model, generate, {"content": p}, False)), "text", None, p)
        for p in chunks(reply.text, size)
    ]
    for i in range(len(reply.tool_calls)):
        call = tool_call(resolved, i)
        data = line(_object(model, generate, {"calls": [call]}, False))
        carried = compact_json(call["function"]["arguments"])
        events.append(Event(data, f"call:{i}", _inside(data, carried), carried))
    last = _object(model, generate, {}, True)
    last["done_reason"] = DONE_REASONS[reply.finish]
    last.update(metrics(resolved))
    events.append(Event(line(last), "done"))
    return events


def _inside(data: bytes, carried: str) -> int:
    """A byte inside the call's `arguments` object in its line: where a cut goes."""
    args = b'"arguments":' + carried.encode()
    start = data.find(args)
    if start < 0:
        return len(data) // 2
    return start + len(b'"arguments":') + max(1, len(carried.encode()) // 2)


def error_line(message: str) -> bytes:
    """An error after the stream began: one more line, `{"error": ...}` (docs/api/errors.mdx)."""
    return line({"error": message})
