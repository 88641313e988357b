"""Each hostile request issue 10 found, answered as the real API answers it, logged, and the
server still serving — through real HTTP and the official SDKs."""

from __future__ import annotations

import json
import os
import stat
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.support import ServerProcess, running_server
from tests.support.clients import ChatFactory

ROUTES: dict[str, dict[str, Any]] = {
    "v1/chat/completions": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    "v1/responses": {"model": "m", "input": "hi"},
    "v1/messages": {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
}


def strict(line: str) -> Any:
    """json.loads that refuses NaN and Infinity, as every other JSON parser does."""
    return json.loads(line, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


def post(server: ServerProcess, session: str, route: str, body: bytes) -> httpx.Response:
    url = f"{server.url}/s/hello/{session}/{route}"
    return httpx.post(url, content=body, headers={"content-type": "application/json"})


def assert_still_serving(server: ServerProcess, session: str) -> None:
    log = server.http.get("/_mockllm/requests", params={"session": session})
    assert log.status_code == 200
    for entry in log.json():
        assert entry["server_error"] is None
    good = post(
        server,
        session + "-after",
        "v1/chat/completions",
        json.dumps(ROUTES["v1/chat/completions"]).encode(),
    )
    assert good.json()["choices"][0]["message"]["content"].startswith("Hello!")


@pytest.mark.parametrize("route", ROUTES)
def test_ten_thousand_nested_arrays_are_invalid_json(
    server: ServerProcess, session: str, route: str
) -> None:
    r = post(server, session, route, b"[" * 10_000 + b"]" * 10_000)
    assert r.status_code == 400 and r.headers["content-type"] == "application/json"
    if route == "v1/messages":
        assert r.json()["error"]["message"].startswith("The request body is not valid JSON:")
    else:
        assert r.json()["error"]["message"].startswith("We could not parse the JSON body")
    (entry,) = server.requests(session=session)
    assert entry["response"]["error"]["kind"] == "invalid_json"
    assert_still_serving(server, session)


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("v1/chat/completions", {"model": "m", "messages": [{"role": "\ud800", "content": "x"}]}),
        (
            "v1/chat/completions",
            {"model": "m", "messages": [{"role": "user", "content": "a\udfff"}]},
        ),
        ("v1/responses", {"model": "m", "input": "\ud800"}),
        (
            "v1/responses",
            {"model": "m", "input": "hi", "tools": [{"type": "function", "name": "\ud800"}]},
        ),
        (
            "v1/messages",
            {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "\ud800"}]},
        ),
    ],
)
def test_a_lone_surrogate_anywhere_is_invalid_json(
    server: ServerProcess, session: str, route: str, body: dict[str, Any]
) -> None:
    r = post(server, session, route, json.dumps(body).encode())  # ensure_ascii: "\ud800" escapes
    assert r.status_code == 400 and r.headers["content-type"] == "application/json"
    if route == "v1/messages":  # Anthropic's own words, with the place
        assert "not valid JSON: " in r.json()["error"]["message"]
        assert "surrogate in string: line 1 column" in r.json()["error"]["message"]
    (entry,) = server.requests(session=session)
    assert isinstance(entry["request"], str) and entry["response"]["status"] == 400
    assert_still_serving(server, session)


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_invalid_json(
    chat: ChatFactory, server: ServerProcess, session: str, literal: bytes
) -> None:
    body = b'{"model":"m","temperature":%s,"messages":[{"role":"user","content":"hi"}]}' % literal
    r = post(server, session, "v1/chat/completions", body)
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    (entry,) = server.requests(session=session)
    assert entry["request"] == body.decode()  # as text: the log never holds a bare NaN
    assert_still_serving(server, session)


def test_wrong_types_at_depth_name_the_parameter_like_openai(chat: ChatFactory) -> None:
    client = chat("hello")
    history: Any = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": 7},
        {"role": "user", "content": "and?"},
    ]
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="m", messages=history)
    error = caught.value.body
    assert isinstance(error, dict)
    assert error["param"] == "messages[1].tool_calls" and error["code"] == "invalid_type"
    assert error["message"] == (
        "Invalid type for 'messages[1].tool_calls': expected an array of objects, "
        "but got a number instead."
    )
    tools: Any = [{"type": []}]
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], tools=tools
        )
    assert isinstance(caught.value.body, dict) and caught.value.body["param"] == "tools[0].type"


def test_wrong_types_at_depth_name_the_field_like_anthropic(
    server: ServerProcess, session: str
) -> None:
    client = anthropic.Anthropic(
        base_url=f"{server.url}/s/hello/{session}", api_key="test", max_retries=0
    )
    messages: Any = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": [1], "name": "x", "input": {}}],
        },
        {"role": "user", "content": "and?"},
    ]
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model="m", max_tokens=5, messages=messages)
    error = caught.value.body
    assert isinstance(error, dict) and error["error"]["type"] == "invalid_request_error"
    assert error["error"]["message"] == "messages.1.content.0.id: Input should be a valid string"
    client.close()
    assert_still_serving(server, session)


def test_control_characters_in_a_session_name_are_refused(server: ServerProcess) -> None:
    body = json.dumps(ROUTES["v1/chat/completions"]).encode()
    for name in ("a%0d%0ab", "a%00b", "tab%09"):
        r = httpx.post(
            f"{server.url}/s/hello/{name}/v1/chat/completions",
            content=body,
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_path"
    (entry,) = server.requests(session="a\r\nb")  # refused, and logged
    assert entry["response"]["error"]["kind"] == "bad_path"
    models = httpx.get(f"{server.url}/s/hello/a%00b/v1/models")
    assert models.status_code == 400 and models.json()["error"]["code"] == "invalid_path"
    ok = httpx.post(f"{server.url}/s/hello/caf%C3%A9/v1/chat/completions", content=body)
    assert ok.status_code == 200  # any other character is fine


def test_credentials_are_redacted_by_name_with_a_hash_to_tell_them_apart(
    server: ServerProcess, session: str
) -> None:
    secrets = {
        "authorization": "Bearer sk-one",
        "proxy-authorization": "Basic c2VjcmV0",
        "x-auth-token": "tok-123",
        "x-custom-api-key": "key-456",
        "x-client-secret": "shh",
        "cookie": "sid=789",
    }
    body = json.dumps(ROUTES["v1/chat/completions"]).encode()
    url = f"{server.url}/s/hello/{session}/v1/chat/completions"
    for token in ("sk-one", "sk-two"):
        headers = {**secrets, "authorization": f"Bearer {token}", "x-trace": "kept"}
        httpx.post(url, content=body, headers={**headers, "content-type": "application/json"})
    first, second = server.requests(session=session)
    shown = json.dumps([first, second])
    for value in [*secrets.values(), "sk-two"]:
        assert value not in shown
    assert set(secrets) <= set(first["headers"]) and first["headers"]["x-trace"] == "kept"
    assert first["headers"]["authorization"] != second["headers"]["authorization"]
    assert first["headers"]["cookie"] == second["headers"]["cookie"]  # same value, same hash


def test_the_log_file_is_created_private_and_parses_strictly() -> None:
    with running_server(scenarios=()) as server:
        mode = stat.S_IMODE(os.stat(server.log_file).st_mode)
        for route, body in ROUTES.items():
            nasty = json.dumps({**body, "model": "\u2028\x1c\x85"}).encode()
            httpx.post(f"{server.url}/s/hello/x/{route}", content=nasty)
        lines = server.log_file.read_text("utf-8").splitlines()  # the pickiest line split
    assert mode == 0o600
    assert [strict(line)["path"] for line in lines] == [f"/s/hello/x/{r}" for r in ROUTES]
