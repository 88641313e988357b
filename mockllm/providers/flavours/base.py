"""What a Chat Completions flavour may change, and the helpers the flavours share.

A flavour is a thin layer over the OpenAI rendering (providers/openai_chat.py): it reshapes
the JSON the Chat adapter rendered (ids, key order, usage, reasoning fields) and each
stream chunk, and owns its error envelope. The defaults change nothing (`openai`).
docs/flavours.md says what each provider differs in, and where each fact comes from.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

from mockllm.core.encoding import compact_json, dumps, sse_frame
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.ids import HEX, derive
from mockllm.core.scenario import Scenario
from mockllm.errors import RequestError
from mockllm.providers.base import Parsed
from mockllm.providers.openai_chat import openai_error_body, openai_fault_texts

# The request parameters the flavours read, kept by the Chat adapter's parse whatever the
# flavour (the parse is cached across flavours): name → the types it takes.
PARAMS: Mapping[str, tuple[type, ...]] = {
    "enable_thinking": (bool,),  # Qwen (DashScope)
    "tool_stream": (bool,),  # GLM (Z.ai / Zhipu)
    "reasoning_split": (bool,),  # MiniMax
    "thinking": (dict,),  # DeepSeek, Kimi, GLM, Doubao: {"type": "enabled" | "disabled" | …}
}


def request_params(parsed: Parsed) -> dict[str, Any]:
    """The model and the flavour parameters of a parsed request (see PARAMS)."""
    params: dict[str, Any] = parsed.options.get("params") or {}
    return {"model": parsed.conversation.model, **params}


def thinking_type(body: Mapping[str, Any]) -> str | None:
    """`thinking.type` as the request says it (DeepSeek, Kimi, GLM, Doubao), else None."""
    thinking = body.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    return kind if isinstance(kind, str) else None


class Flavour:
    """The OpenAI shape: every hook returns what it was given."""

    name: ClassVar[str] = "openai"
    # What the provider writes in `error.type` etc. for a status (type, message, code).
    fault_table: ClassVar[Mapping[int, tuple[str, str, str | None]]] = {}

    def thinking(self, body: Mapping[str, Any]) -> bool:
        """Whether the request runs in the provider's thinking mode (for its rules)."""
        return False

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str | None:
        """The id of call `index` of `turn` at `attempt`; None: the Chat adapter's own."""
        return None

    def completion_id(self, resolved: Resolved) -> str | None:
        """The completion's `id` (body and every chunk); None: OpenAI's `chatcmpl-…`. Set
        here, not by `body`/`stream`: a rendering whose attempt ids all stand in its bytes
        is reused for the next attempt (serving/rendered.py), and OpenAI's id made and then
        overwritten would stand nowhere."""
        return None

    def shows_reasoning(self, parsed: Parsed) -> bool:
        """Whether a scripted `reasoning:` is sent to this request at all."""
        return True

    def body(self, obj: dict[str, Any], resolved: Resolved, parsed: Parsed) -> dict[str, Any]:
        """The non-streamed body, as the Chat adapter rendered it, reshaped."""
        return obj

    def stream(self, events: list[Event], resolved: Resolved, parsed: Parsed) -> list[Event]:
        """The stream's frames, as the Chat adapter rendered them, reshaped."""
        return events

    def request_id(self, *parts: object) -> str | None:
        """The provider's request id; None: OpenAI's `req_…`."""
        return None

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        return openai_error_body(error)

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        found = self.fault_table.get(status)
        return found if found is not None else openai_fault_texts(status)

    def stream_error_events(self, error: RequestError, request_id: str) -> list[bytes]:
        """The frame that ends a stream in error: its error body as one `data:` chunk."""
        return [sse_frame(self.error_body(error, request_id))]


# --- helpers for the flavour modules -----------------------------------------------------


def reorder(obj: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    """`obj` with the keys of `order` first, in that order (missing ones skipped)."""
    out = {k: obj[k] for k in order if k in obj}
    out.update((k, v) for k, v in obj.items() if k not in out)
    return out


def drop(obj: dict[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        obj.pop(key, None)
    return obj


def uuid_of(*parts: object) -> str:
    """A deterministic UUID (version 4 layout) from `parts`."""
    return str(uuid.UUID(derive("", 32, *parts, alphabet=HEX), version=4))


def frame_json(event: Event) -> dict[str, Any] | None:
    """The JSON object of one `data:` frame; None for `[DONE]`."""
    payload = event.data[len(b"data: ") : -2]
    return None if payload == b"[DONE]" else json.loads(payload)


def reframe(obj: dict[str, Any], part: str, inside: int | None = None) -> Event:
    return Event(sse_frame(dumps(obj)), part, inside)


def map_chunks(events: list[Event], change: Any) -> list[Event]:
    """Each JSON frame through `change(obj, part) -> obj | None` (None drops the frame)."""
    out = []
    for event in events:
        obj = frame_json(event)
        if obj is None:
            out.append(event)
            continue
        changed = change(obj, event.part)
        if changed is not None:  # the same piece of the part: a flavour reshapes frames only
            out.append(event._replace(data=sse_frame(dumps(changed))))
    return out


def counts(resolved: Resolved) -> dict[str, int]:
    return {
        "prompt_tokens": resolved.input_tokens,
        "completion_tokens": resolved.output_tokens,
        "total_tokens": resolved.input_tokens + resolved.output_tokens,
    }


def explicit_id(scenario: Scenario, turn: int, index: int) -> str | None:
    """The id the scenario scripted for call `index` of `turn`, if any."""
    served = scenario.turn(turn)
    calls = served.reply.tool_calls if served else ()
    return calls[index].id if index < len(calls) else None


def whole_calls(events: list[Event]) -> list[Event]:
    """Each call in one chunk (GLM, Mistral): its arguments joined into the chunk that names it."""
    out: list[Event] = []
    started: dict[int, tuple[int, dict[str, Any]]] = {}  # call index → (position, chunk)
    for event in events:
        if event.part.startswith("args:"):
            i = int(event.part[5:])
            obj = frame_json(event)
            if i in started and obj is not None:
                at, head = started[i]
                piece = obj["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
                head["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] += piece
                continue
        if event.part.startswith("call:"):
            obj = frame_json(event)
            if obj is not None:
                started[int(event.part[5:])] = (len(out), obj)
        out.append(event)
    for at, obj in started.values():  # the call's frame now carries all of its arguments
        whole = obj["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        out[at] = reframe(obj, out[at].part)._replace(carries=whole)
    return out


def cut_inside(event: Event) -> Event:
    """A whole call's frame, marked where a cut falls inside its arguments (as Gemini's)."""
    obj = frame_json(event) if event.part.startswith("call:") else None
    if obj is None:
        return event
    arguments = obj["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
    encoded = compact_json(arguments).encode()
    start = event.data.find(encoded)
    return event._replace(inside=start + len(encoded) // 2 if arguments and start >= 0 else None)
