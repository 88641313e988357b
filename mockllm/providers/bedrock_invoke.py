"""Amazon Bedrock's InvokeModel and InvokeModelWithResponseStream (`POST
/model/{modelId}/invoke`, `/invoke-with-response-stream`) with Anthropic Messages bodies,
as `anthropic`'s `AnthropicBedrock` and Claude Code send them: docs/http-api.md, "Bedrock
specifics".

The body is Anthropic's without `model` (the path has it) and without `stream` (the
operation says it), with an `anthropic_version` of the client's choosing (AWS documents
`bedrock-2023-05-31`; the SDKs send their own): any string is taken. The answer is
Anthropic's message; streamed, each Anthropic SSE event's JSON rides base64-encoded in one
`chunk` event of the binary event stream, the last (message_stop) with Bedrock's
`amazon-bedrock-invocationMetrics`. Errors are Bedrock's (bedrock.AwsWire).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import Any

from mockllm.core import eventstream
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.core.scenario import Scenario
from mockllm.errors import RequestError
from mockllm.providers.anthropic import Messages, system_message_refusal
from mockllm.providers.base import Body, Parsed, Stream, dumps, scripted_id
from mockllm.providers.bedrock import LATENCY_MS, AwsWire, bad

ROUTE = re.compile(r"model/(?P<model>.+)/(?P<op>invoke-with-response-stream|invoke)")
NO_VERSION = (
    "Malformed input request: #: required key [anthropic_version] not found, please reformat "
    "your input and try again."
)
_HEADERS = [(b"x-amzn-bedrock-content-type", b"application/json")]


class Invoke(AwsWire, Messages):
    api = "bedrock-invoke"
    family = "bedrock"
    route_pattern = ROUTE
    route_help = ("model/{modelId}/invoke", "model/{modelId}/invoke-with-response-stream")
    request_id_header = AwsWire.request_id_header

    def parse(self, body: Any) -> Parsed:
        return self.parse_at(body, "model/mockllm/invoke")

    def parse_headed(self, body: Any, route: str, headers: Mapping[bytes, str]) -> Parsed:
        """The path's model and operation; betas come in the body (`anthropic_beta`), as
        AnthropicBedrock moves them there from the anthropic-beta header."""
        parsed = self.parse_at(body, route)
        betas = body.get("anthropic_beta")
        named = ",".join(b for b in betas if isinstance(b, str)) if isinstance(betas, list) else ""
        refused = system_message_refusal({**body, "model": parsed.conversation.model}, named)
        if refused is not None:
            raise bad(refused.message)
        return parsed

    def parse_at(self, body: Any, route: str) -> Parsed:
        match = ROUTE.fullmatch(route)
        if match is None:  # the app routes only matching paths here
            raise RequestError(404, f"mockllm: no Bedrock operation at /{route}", kind="not_found")
        if not isinstance(body, dict):
            raise bad("Could not parse request body into json")
        if not isinstance(body.get("anthropic_version"), str):
            raise bad(NO_VERSION)
        stream = match["op"] == "invoke-with-response-stream"
        return Messages.parse(self, {**body, "model": match["model"], "stream": stream})

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        return scripted_id(scenario, turn, index, "toolu_bdrk_01", 22, attempt)

    def wire_headers(self, status: int, retry_after: float | None) -> list[tuple[bytes, bytes]]:
        return _HEADERS

    def render(self, resolved: Resolved, parsed: Parsed) -> Body:
        return Messages.render(self, resolved, parsed)

    def render_stream(self, resolved: Resolved, parsed: Parsed) -> Stream:
        events, notes = Messages.render_stream(self, resolved, parsed)
        return Stream([_chunk(e, resolved) for e in events], notes)


def _chunk(sse: Event, resolved: Resolved) -> Event:
    """One Anthropic SSE event as the `chunk` event Bedrock carries it in."""
    data = sse.data.split(b"data: ", 1)[1].rstrip(b"\n")
    payload = json.loads(data)
    if payload.get("type") == "message_stop":
        payload["amazon-bedrock-invocationMetrics"] = {
            "inputTokenCount": resolved.input_tokens,
            "outputTokenCount": resolved.output_tokens,
            "invocationLatency": LATENCY_MS,
            "firstByteLatency": LATENCY_MS,
        }
        data = dumps(payload)
    chunk = dumps({"bytes": base64.b64encode(data).decode()})
    return sse._replace(data=eventstream.event("chunk", chunk))
