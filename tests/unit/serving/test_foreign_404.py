"""A route no adapter serves, asked by an AWS SDK, answers in the AWS REST-JSON error shape
botocore reads (`message`, `x-amzn-ErrorType`: the Bedrock wire claims every AWS SDK's
request); any path, any AWS header, never a 5xx; the others keep their SDK's shape (tests/e2e/wires/test_unknown_routes.py drives
boto3, google-genai on Vertex, anthropic and openai over HTTP)."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mockllm.loading.loader import load_text
from mockllm.serving.server import build_app

APP = build_app([load_text("name: hello\nturns:\n  - reply: {text: hi}\n")])


def run(
    app: Any, path: str, headers: list[tuple[bytes, bytes]]
) -> tuple[int, dict[bytes, bytes], bytes]:
    scope = {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(),
             "query_string": b"", "headers": [(b"content-type", b"application/json"), *headers],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8000)}  # fmt: skip
    sent: list[bytes] = []
    start: dict[str, Any] = {}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        else:
            sent.append(message.get("body", b""))

    with contextlib.suppress(StopIteration):  # it never suspends: done in one step
        app(scope, receive, send).send(None)
    return start["status"], dict(start["headers"]), b"".join(sent)


AWS = [(b"amz-sdk-invocation-id", b"1"), (b"x-amz-date", b"20260101T000000Z")]


def test_an_aws_sdk_gets_message_and_error_type() -> None:
    status, headers, body = run(APP, "/model/m/no-such-operation", AWS[:1])
    assert status == 404
    assert headers[b"x-amzn-ErrorType"].startswith(b"ResourceNotFoundException")
    message = json.loads(body)["message"]
    assert message.startswith("mockllm: no route POST /model/m/no-such-operation; APIs served: ")
    assert b"x-amzn-RequestId" in headers


def test_other_sdks_keep_their_shape() -> None:
    _, _, body = run(APP, "/model/m/no-such-operation", [])
    assert json.loads(body)["error"]["code"] == "route_not_found"
    _, _, body = run(APP, "/model/m/no-such-operation", [(b"anthropic-version", b"2023-06-01")])
    assert json.loads(body)["error"]["type"] == "not_found_error"


@given(
    path=st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=40),
    headers=st.lists(st.sampled_from(AWS), max_size=2),
)
def test_any_unknown_path_from_aws_is_a_readable_4xx(
    path: str, headers: list[tuple[bytes, bytes]]
) -> None:
    status, sent, body = run(APP, "/model/" + path, headers)
    assert 400 <= status < 500
    if status == 404 and headers:
        assert json.loads(body)["message"] and sent[b"x-amzn-ErrorType"]
