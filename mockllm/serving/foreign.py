"""The error shape of SDKs whose API has no adapter here, for the 404 that tells them so.

A request no route serves is answered in the asking SDK's error shape (`MockLLM.family_of`
picks an adapter by its marker headers), so that the SDK shows the message. botocore (AWS
Bedrock: strands' default model) reads neither OpenAI's `{"error": {...}}` nor
Anthropic's: it takes the error code from the `x-amzn-ErrorType` header and the message
from the body's `message`, and showed an empty one. Vertex AI's clients read Gemini's
shape, which the Gemini adapter already answers in (`x-goog-api-client`).
"""

from __future__ import annotations

import json
from typing import Any

from mockllm.errors import RequestError
from mockllm.providers import Adapter
from mockllm.serving.asgi import Scope

# What every AWS SDK sends (SigV4 signing or a Bedrock API key alike): an invocation id.
_AWS_HEADERS = (b"amz-sdk-invocation-id", b"x-amz-date")


def is_aws(scope: Scope) -> bool:
    sent = {k for k, _ in scope["headers"]}
    return any(h in sent for h in _AWS_HEADERS)


class AwsShaped:
    """`adapter` answering in the AWS REST-JSON error shape: `{"message": …}` and the code in
    `x-amzn-ErrorType` (a route not found is AWS's `UnknownOperationException`)."""

    request_id_header = "x-amzn-requestid"

    def __init__(self, adapter: Adapter) -> None:
        self._adapter = adapter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        return json.dumps({"message": error.message}).encode()

    def wire_headers(self, status: int, retry_after: float | None) -> list[tuple[bytes, bytes]]:
        kind = b"UnknownOperationException" if status == 404 else b"ValidationException"
        return [(b"x-amzn-errortype", kind)]
