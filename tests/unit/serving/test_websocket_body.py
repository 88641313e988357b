"""A WebSocket frame's JSON is parsed once: serving/websocket.py reads it, and hands the
parse to the exchange with the body's bytes (`Exchanges.handle(..., parsed)`), which used
to parse those bytes again. The handed parse must be what those bytes read as, and the
frame is read under `--max-number-digits`, as an HTTP body is."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.core import wirejson
from mockllm.loading.loader import load_text
from mockllm.options import DEFAULTS, ServerOptions
from mockllm.serving.server import build_app
from mockllm.serving.websocket import _ENCODE, request_body
from tests.unit.asgi import websocket_scope

SCENARIO = "name: hello\nturns:\n  - reply: {text: hi}\n  - reply: {text: again}\n"
CREATE = {"type": "response.create", "model": "gpt-5.5", "input": "hello"}


def _connection(frames: list[str], options: ServerOptions = DEFAULTS) -> list[dict[str, Any]]:
    """The frames on one connection to a fresh server; the events it sent back."""
    app = build_app([load_text(SCENARIO)], options)

    async def run() -> list[dict[str, Any]]:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        sent: list[dict[str, Any]] = []
        inbox.put_nowait({"type": "websocket.connect"})
        for text in frames:
            inbox.put_nowait({"type": "websocket.receive", "text": text})
        inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "websocket.send":
                sent.append(json.loads(message["text"]))

        path = "/s/hello/body/v1/responses"
        scope = websocket_scope(path)
        await app(scope, inbox.get, send)
        return sent

    return asyncio.run(run())


def test_each_frame_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[bytes] = []
    loads = wirejson.loads

    def counted(raw: bytes, *args: Any) -> Any:
        parsed.append(raw)
        return loads(raw, *args)

    monkeypatch.setattr(wirejson, "loads", counted)
    second = {**CREATE, "input": "again"}
    events = _connection([json.dumps(CREATE), json.dumps(second)])
    assert [e["type"] for e in events].count("response.completed") == 2
    assert len(parsed) == 2  # the exchange parsing the body again made it 4
    assert [json.loads(raw)["input"] for raw in parsed] == ["hello", "again"]


# JSON values as a frame may hold them (no NaN: wirejson refuses it; integers past 64 bits)
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(
    fields=st.dictionaries(st.text(), _VALUES, max_size=6),
    generate=st.sampled_from([None, True, False]),
)
def test_the_handed_body_is_what_its_bytes_read_as(
    fields: dict[str, Any], generate: bool | None
) -> None:
    frame = {"type": "response.create", **fields}
    if generate is not None:
        frame["generate"] = generate
    text = json.dumps(frame, ensure_ascii=False)
    body, found = request_body(wirejson.loads(text.encode()))
    assert found == generate
    raw = _ENCODE(body).encode()
    again = wirejson.loads(raw)
    assert again == body and list(again) == list(body)  # the same values, in the same order
    assert json.dumps(again) == json.dumps(body)  # and the same types (1 and 1.0 are ==)
    assert "type" not in body and "generate" not in body and body["stream"] is True


def _answered(frame: dict[str, Any], digits: int) -> list[str]:
    text = json.dumps(frame)[:-1] + ', "top_logprobs": ' + TOKEN[digits] + "}"
    options = dataclasses.replace(DEFAULTS, max_number_digits=digits)
    return [e["type"] for e in _connection([text], options)]


# A number token per --max-number-digits: one past the default limit of 1000 digits, and
# one of 3 digits that reads as a float of 17 (1000000000000000.0)
TOKEN = {4300: "7" * 1500, 5: "1e15"}


@pytest.mark.parametrize("digits", sorted(TOKEN))
def test_a_frames_numbers_are_read_under_max_number_digits_as_a_bodys(digits: int) -> None:
    # Read under the default limit, a frame with 1,500 digits went to the exchange whole,
    # `type` and all, and was answered by nothing; 1e15 re-encoded as 17 digits was refused.
    types = _answered(CREATE, digits)
    assert types[0] == "response.created" and types[-1] == "response.completed"
