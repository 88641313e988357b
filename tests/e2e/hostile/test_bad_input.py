"""Bad requests get a provider-shaped error, are logged, and the server keeps serving."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from tests.support import ServerProcess
from tests.support.clients import ChatFactory

HI = [{"role": "user", "content": "hi"}]


def _post(
    server: ServerProcess, session: str, content: bytes, content_type: str = "application/json"
) -> httpx.Response:
    url = f"{server.openai_url('hello', session)}/chat/completions"
    return httpx.post(url, content=content, headers={"content-type": content_type})


def _still_serving(chat: ChatFactory) -> None:
    reply = chat("hello").chat.completions.create(model="m", messages=HI)
    assert (
        reply.choices[0].message.content
        == "Hello! I am mockllm, a deterministic fake model. How can I help?"
    )


def test_invalid_json(server: ServerProcess, session: str, chat: ChatFactory) -> None:
    r = _post(server, session, b'{"model": "m", "messages": [')
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["message"].startswith("We could not parse the JSON body of your request.")
    assert r.content == (  # the rendered error body, byte for byte: OpenAI's own words
        b'{"error":{"message":"We could not parse the JSON body of your request. (HINT: This '
        b"likely means you aren't using your HTTP library correctly. The OpenAI API expects a "
        b"JSON payload, but what was sent was not valid JSON. If you have trouble figuring out "
        b'how to fix this, please contact us through our help center at help.openai.com.)",'
        b'"type":"invalid_request_error","param":null,"code":null}}'
    )
    assert (error["type"], error["param"], error["code"]) == ("invalid_request_error", None, None)
    entry = server.last(session)
    assert entry["request"] == '{"model": "m", "messages": ['
    assert (
        entry["response"]["status"] == 400 and entry["response"]["error"]["kind"] == "invalid_json"
    )
    _still_serving(chat)


def test_wrong_content_type(server: ServerProcess, session: str, chat: ChatFactory) -> None:
    r = _post(server, session, b"model=m", "application/x-www-form-urlencoded")
    assert r.status_code == 400
    assert (
        "unsupported Content-Type 'application/x-www-form-urlencoded'"
        in r.json()["error"]["message"]
    )
    assert server.last(session)["response"]["error"]["kind"] == "bad_content_type"
    _still_serving(chat)


def test_body_over_max_body_is_413(server: ServerProcess, session: str, chat: ChatFactory) -> None:
    """The session server runs with --max-body 1MB."""
    huge = (
        b'{"model": "m", "messages": [{"role": "user", "content": "'
        + b"x" * (1024 * 1024)
        + b'"}]}'
    )
    r = _post(server, session, huge)
    assert r.status_code == 413
    assert "exceeds the server's limit of 1048576 bytes" in r.json()["error"]["message"]
    assert server.last(session)["response"]["status"] == 413
    _still_serving(chat)


REQUESTS: list[tuple[str, dict[str, Any], str, str | None]] = [
    ("missing messages", {"model": "m"}, "Missing required parameter: 'messages'.", "messages"),
    (
        "messages not a list",
        {"model": "m", "messages": "hi"},
        "Invalid type for 'messages': expected an array of objects, but got a string instead.",
        "messages",
    ),
    (
        "empty messages",
        {"model": "m", "messages": []},
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        "messages",
    ),
    ("missing model", {"messages": HI}, "you must provide a model parameter", None),
    (
        "missing role",
        {"model": "m", "messages": [{"content": "x"}]},
        "Missing required parameter: 'messages[0].role'.",
        "messages[0].role",
    ),
    (
        "bad role",
        {"model": "m", "messages": [{"role": "robot", "content": "x"}]},
        "Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
        "messages[0].role",
    ),
    (
        "tool without id",
        {"model": "m", "messages": [*HI, {"role": "tool", "content": "x"}]},
        "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
        "messages[1].tool_call_id",
    ),
]


@pytest.mark.parametrize(
    ("label", "body", "message", "param"), REQUESTS, ids=[r[0] for r in REQUESTS]
)
def test_malformed_requests_are_openai_shaped(
    chat: ChatFactory,
    server: ServerProcess,
    session: str,
    label: str,
    body: dict[str, Any],
    message: str,
    param: str | None,
) -> None:
    client = chat("hello")
    with pytest.raises(openai.BadRequestError) as caught:
        client.post("/chat/completions", body=body, cast_to=object)
    assert caught.value.body["message"] == message
    assert caught.value.param == param
    entry = server.last(session)
    assert entry["request"] == body and entry["response"]["status"] == 400
    _still_serving(chat)


def test_unknown_route_is_a_404(server: ServerProcess) -> None:
    r = httpx.post(f"{server.url}/v1/images/generations", json={})
    assert r.status_code == 404
    assert "no route POST /v1/images/generations" in r.json()["error"]["message"]
