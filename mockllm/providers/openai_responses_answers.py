"""Responses answers read back into neutral terms (`mockllm record`): the response object,
or its stream of events; the response id is kept for `previous_response_id`."""

from __future__ import annotations

from typing import Any

from mockllm.core.heard import Heard, HeardCall, HeardError
from mockllm.core.scenario import Finish
from mockllm.providers.base import Answers
from mockllm.providers.openai_chat_answers import openai_error

INCOMPLETE: dict[str, Finish] = {"max_output_tokens": "length", "content_filter": "content_filter"}


class ResponsesAnswers(Answers):
    def __init__(self) -> None:
        super().__init__()
        self._calls: dict[str, HeardCall] = {}  # by output item id

    def body(self, data: Any) -> None:
        heard = self.heard
        heard.complete = True
        heard.response_id = data.get("id")
        heard.model = data.get("model")
        for item in data.get("output") or ():
            self._item(item)
        if data.get("status") == "incomplete":
            reason = str((data.get("incomplete_details") or {}).get("reason"))
            heard.finish = INCOMPLETE.get(reason)
            if heard.finish is None:
                heard.drop(f"incomplete reason {reason!r} (kept as a normal finish)")
        heard.read_usage(data.get("usage"))

    def on(self, kind: str | None, payload: dict[str, Any]) -> None:
        heard = self.heard
        if kind in ("response.completed", "response.incomplete"):
            self.heard = Heard(dropped=heard.dropped)  # the final object says it all
            self.body(payload.get("response") or {})
        elif kind in ("response.created", "response.in_progress"):
            response = payload.get("response") or {}
            heard.response_id, heard.model = response.get("id"), response.get("model")
        elif kind == "response.failed":
            heard.error = openai_error(payload.get("response") or {})
        elif kind == "error":
            heard.error = HeardError(payload.get("code"), payload.get("message"), None)
        elif kind == "response.output_item.added":
            item = payload.get("item") or {}
            self._item(item, streamed=True)
        elif kind == "response.output_text.delta":
            heard.text += payload.get("delta") or ""
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            heard.reasoning = (heard.reasoning or "") + (payload.get("delta") or "")
        elif kind == "response.function_call_arguments.delta":
            call = self._calls.get(payload.get("item_id", ""))
            if call is not None:
                call.arguments += payload.get("delta") or ""
        elif kind == "response.function_call_arguments.done":
            call = self._calls.get(payload.get("item_id", ""))
            if call is not None and isinstance(payload.get("arguments"), str):
                call.arguments = payload["arguments"]

    def error(self, data: Any) -> HeardError:
        return openai_error(data)

    def _item(self, item: dict[str, Any], streamed: bool = False) -> None:
        """One output item; streamed, only its start (the deltas fill it in)."""
        heard, kind = self.heard, item.get("type")
        if kind == "message":
            for part in item.get("content") or ():
                if part.get("type") == "output_text":
                    heard.text += part.get("text") or ""
                else:
                    heard.drop(f"message content of type {part.get('type')}")
        elif kind == "reasoning":
            summaries = "".join(s.get("text") or "" for s in item.get("summary") or ())
            heard.reasoning = (heard.reasoning or "") + summaries
            if item.get("encrypted_content"):
                heard.drop("encrypted reasoning content")
        elif kind == "function_call":
            arguments = "" if streamed else str(item.get("arguments", ""))
            call = HeardCall(str(item.get("name", "")), arguments, str(item.get("call_id", "")))
            heard.calls.append(call)
            self._calls[str(item.get("id", ""))] = call
        else:
            heard.drop(f"output items of type {kind} (built-in tools)")
