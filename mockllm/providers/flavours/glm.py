"""GLM on Z.ai / Zhipu (bigmodel.cn), OpenAI-compatible (docs/flavours.md#glm).

A streamed call's arguments arrive whole, in the chunk that names it, unless the request
says `tool_stream: true` (then they stream as OpenAI's do); thinking streams as
`reasoning_content`; usage rides on the last chunk of every stream."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mockllm.core.encoding import dumps
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.errors import RequestError
from mockllm.providers.base import Parsed
from mockllm.providers.flavours.base import (
    Flavour,
    counts,
    cut_inside,
    drop,
    map_chunks,
    request_params,
    thinking_type,
    whole_calls,
)

_FINISH = {"content_filter": "sensitive"}  # GLM's word for a filtered reply


class Glm(Flavour):
    name = "glm"
    # (type, message, code): Zhipu's business codes (docs/flavours.md#glm).
    fault_table: ClassVar[Mapping[int, tuple[str, str, str | None]]] = {
        429: (
            "rate_limit",
            "您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。",
            "1302",
        ),
        500: ("server_error", "服务内部错误，请稍后重试。", "500"),
        503: ("server_error", "服务内部错误，请稍后重试。", "500"),
    }

    def thinking(self, body: Mapping[str, Any]) -> bool:
        return thinking_type(body) != "disabled"  # GLM-4.5 and later think by default

    def body(self, obj: dict[str, Any], resolved: Resolved, parsed: Parsed) -> dict[str, Any]:
        choice = obj["choices"][0]
        drop(choice["message"], "refusal", "annotations")
        drop(choice, "logprobs")
        choice["finish_reason"] = _FINISH.get(choice["finish_reason"], choice["finish_reason"])
        obj["usage"] = {**counts(resolved), "prompt_tokens_details": {"cached_tokens": 0}}
        return drop(obj, "service_tier", "system_fingerprint")

    def stream(self, events: list[Event], resolved: Resolved, parsed: Parsed) -> list[Event]:
        if request_params(parsed).get("tool_stream") is not True:
            events = whole_calls(events)

        def change(obj: dict[str, Any], part: str) -> dict[str, Any] | None:
            if not obj["choices"]:
                return None  # the usage is on the finish chunk
            choice = obj["choices"][0]
            drop(choice["delta"], "refusal")
            drop(choice, "logprobs")
            finish = choice.get("finish_reason")
            if finish is not None:
                choice["finish_reason"] = _FINISH.get(finish, finish)
                obj["usage"] = {**counts(resolved), "prompt_tokens_details": {"cached_tokens": 0}}
            else:
                obj.pop("usage", None)
            return drop(obj, "service_tier", "system_fingerprint")

        return [cut_inside(e) for e in map_chunks(events, change)]

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        _, _, code = self.fault_texts(error.status)
        default = "1214" if error.status == 400 else code or str(error.status)
        return dumps(
            {
                "error": {
                    "code": error.code if _business(error.code) else default,
                    "message": error.message,
                }
            }
        )


def _business(code: str | None) -> bool:
    return code is not None and code.isdigit()
