"""Doubao on Volcengine Ark (`/api/v3`), OpenAI-compatible (docs/flavours.md#doubao).

Ark's error envelope names the HTTP status in a word (`type: "BadRequest"`), a code such as
`InvalidParameter`, an empty `param`, and ends its message with `Request id: …`; a stream
that fails midway ends with that envelope as one `data:` chunk."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mockllm.core.encoding import dumps
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.ids import HEX, derive
from mockllm.errors import RequestError
from mockllm.providers.base import Parsed
from mockllm.providers.flavours.base import Flavour, counts, drop, map_chunks, reorder

_TOP = ("choices", "created", "id", "model", "service_tier", "object", "usage")
# HTTP status → the word Ark writes in `type`, and its usual code.
STATUS = {
    400: ("BadRequest", "InvalidParameter"),
    401: ("Unauthorized", "AuthenticationError"),
    403: ("Forbidden", "AccessDenied"),
    404: ("NotFound", "InvalidEndpointOrModel.NotFound"),
    413: ("RequestEntityTooLarge", "RequestEntityTooLarge"),
    429: ("TooManyRequests", "RateLimitExceeded.EndpointRPMExceeded"),
    500: ("InternalServerError", "InternalServiceError"),
    503: ("ServiceUnavailable", "ServerOverloaded"),
}


class Doubao(Flavour):
    name = "doubao"
    fault_table: ClassVar[Mapping[int, tuple[str, str, str | None]]] = {
        429: (
            "TooManyRequests",
            "The request has exceeded the rate limit of requests per minute (RPM) for this "
            "endpoint. Please try again later.",
            "RateLimitExceeded.EndpointRPMExceeded",
        ),
        500: (
            "InternalServerError",
            "The service encountered an unexpected internal error.",
            "InternalServiceError",
        ),
        503: (
            "ServiceUnavailable",
            "The service is currently unable to handle additional requests due to server overload.",
            "ServerOverloaded",
        ),
    }

    def completion_id(self, resolved: Resolved) -> str:
        return _id(resolved)

    def body(self, obj: dict[str, Any], resolved: Resolved, parsed: Parsed) -> dict[str, Any]:
        drop(obj["choices"][0]["message"], "refusal", "annotations")
        obj["usage"] = _usage(resolved)
        return reorder(drop(obj, "system_fingerprint"), _TOP)

    def stream(self, events: list[Event], resolved: Resolved, parsed: Parsed) -> list[Event]:
        def change(obj: dict[str, Any], part: str) -> dict[str, Any]:
            for choice in obj["choices"]:
                drop(choice["delta"], "refusal")
            if obj.get("usage"):
                obj["usage"] = _usage(resolved)
            return reorder(drop(obj, "system_fingerprint"), _TOP)

        return map_chunks(events, change)

    def request_id(self, *parts: object) -> str:
        # As Ark's: "02", a millisecond clock, then hex (a fixed clock: deterministic).
        return "021764547200000" + derive("", 38, "ark", *parts, alphabet=HEX)

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        word, code = STATUS.get(error.status, ("InternalServerError", "InternalServiceError"))
        ark_code = error.code if error.code and error.code[:1].isupper() else code
        message = error.message.rstrip()
        if "Request id:" not in message:  # from the error alone: a recording replays it
            message += " Request id: " + self.request_id(error.status, error.message)
        kind = error.error_type if error.error_type and error.error_type[:1].isupper() else word
        return dumps({"error": {"code": ark_code, "message": message, "param": "", "type": kind}})


def _id(resolved: Resolved) -> str:
    return "021764547200000" + derive(
        "", 38, "ark-id", resolved.scenario.name, resolved.turn, alphabet=HEX
    )


def _usage(resolved: Resolved) -> dict[str, Any]:
    return {
        **counts(resolved),
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": resolved.reasoning_tokens},
    }
