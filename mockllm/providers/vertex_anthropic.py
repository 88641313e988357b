"""Claude on Vertex AI: `rawPredict` and `streamRawPredict` under
`projects/{p}/locations/{l}/publishers/anthropic/models/{m}`, and token counting at
`…/models/count-tokens:rawPredict`, as `anthropic`'s AnthropicVertex and Claude Code send
them. docs/http-api.md, "Vertex AI specifics".

The body is Anthropic's without `model` (the path has it), with `stream` kept and an
`anthropic_version` of the client's choosing (Google documents `vertex-2023-10-16`;
AnthropicVertex sets its own dated value): any string is taken, none is refused. Betas
stay in the `anthropic-beta` header. The answer and the stream are Anthropic's, message
ids `msg_vrtx_01…` and call ids `toolu_vrtx_01…`. Errors: Claude's own refusals in
Anthropic's shape; what Vertex refuses itself (the quota 429) in Google's envelope.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockllm.core.scenario import Scenario
from mockllm.core.validation import RuleContext, Violation
from mockllm.errors import RequestError
from mockllm.providers import vertex
from mockllm.providers.anthropic import Messages, bad, system_message_refusal
from mockllm.providers.base import Parsed, scripted_id

# `count-tokens` is no model: its rawPredict is token counting (side_routes.py).
ROUTE = vertex.publisher_route(
    "anthropic", "(?!count-tokens:)[^/:]+", "rawPredict|streamRawPredict", place_optional=False
)
COUNT = vertex.publisher_route("anthropic", "count-tokens", "rawPredict", place_optional=False)
NO_VERSION = "anthropic_version: Field required"  # mockllm's words: Vertex's are unquoted


class VertexAnthropic(Messages):
    api = "vertex-anthropic"
    routes = ()
    route_pattern = ROUTE
    route_help = vertex.route_help("anthropic", "rawPredict", "streamRawPredict")
    models_routes = ()
    request_id_header = "x-mockllm-request-id"  # Vertex's own is not known
    message_id_prefix = "msg_vrtx_01"  # as Vertex's answers carry (OmniRoute PR #8909)

    def parse(self, body: Any) -> Parsed:
        """A body read without its path (the log, token counting): its own `model` if it
        has one, as count-tokens sends."""
        if not isinstance(body, dict):
            return Messages.parse(self, body)
        return self._read(body, str(body.get("model") or "mockllm"), bool(body.get("stream")))

    def parse_at(self, body: Any, route: str) -> Parsed:
        match = ROUTE.fullmatch(route)
        if match is None:  # the app routes only matching paths here
            raise RequestError(404, f"mockllm: no Vertex AI method at /{route}", kind="not_found")
        return self._read(body, match["model"], match["method"] == "streamRawPredict")

    def parse_headed(self, body: Any, route: str, headers: Mapping[bytes, str]) -> Parsed:
        parsed = self.parse_at(body, route)
        named = {**body, "model": parsed.conversation.model}
        refused = system_message_refusal(named, headers.get(b"anthropic-beta", ""))
        if refused is not None:
            raise refused
        return parsed

    def _read(self, body: Any, model: str, stream: bool) -> Parsed:
        if not isinstance(body, dict):
            raise bad("Input should be a valid dictionary")
        if not isinstance(body.get("anthropic_version"), str):
            raise bad(NO_VERSION)
        return Messages.parse(self, {**body, "model": model, "stream": stream})

    def validate(self, body: dict[str, Any], ctx: RuleContext) -> list[Violation]:
        """The rules read the model from the path, as Anthropic's id (Vertex's
        `claude-3-5-sonnet@20240620` is the API's `claude-3-5-sonnet-20240620`)."""
        model = ctx.conversation.model.replace("@", "-")
        return self.rules.run({**body, "model": model}, ctx)

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        return scripted_id(scenario, turn, index, "toolu_vrtx_01", 22, attempt)

    def wire_headers(self, status: int, retry_after: float | None) -> list[tuple[bytes, bytes]]:
        return []  # Vertex sends none of Anthropic's rate-limit headers

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        if error.status == 429:  # Vertex's quota, not Claude's: Google's envelope
            return vertex.google_error(error)
        return Messages.error_body(self, error, request_id)

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        if status == 429:
            return "RESOURCE_EXHAUSTED", vertex.QUOTA_MESSAGE, None
        return Messages.fault_texts(self, status)
