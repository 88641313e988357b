"""A Responses turn over WebSocket sends its frames in one batch where the server offers it
(serving/upgrades.py's SEND_TEXTS, mockllm's own uvicorn protocol) and one ASGI
`websocket.send` per frame where it does not (any other ASGI server): the same frames
either way. And the protocol's own framing is the `websockets` library's, byte for byte."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.frames import Frame, Opcode

from mockllm.loading.loader import load_text
from mockllm.serving.server import build_app
from mockllm.serving.upgrades import SEND_TEXTS, _text_frame
from mockllm.serving.websocket import _data
from tests.unit.asgi import websocket_scope

SCENARIO = "name: hello\nturns:\n  - reply: {text: hi}\n  - reply: {text: again}\n"
CREATE = {"type": "response.create", "model": "gpt-5.5", "input": "hello"}


def _turns(extensions: dict[str, Any]) -> list[Any]:
    """Two turns on one connection to a fresh server; what the app sends after the accept."""
    app = build_app([load_text(SCENARIO)])

    async def run() -> list[Any]:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        sent: list[Any] = []
        for message in (
            {"type": "websocket.connect"},
            {"type": "websocket.receive", "text": json.dumps(CREATE)},
            {"type": "websocket.receive", "text": json.dumps(CREATE)},
            {"type": "websocket.disconnect", "code": 1000},
        ):
            inbox.put_nowait(message)

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        path = "/s/hello/batches/v1/responses"
        scope = websocket_scope(path, extensions)
        await app(scope, inbox.get, send)
        return sent[1:]

    return asyncio.run(run())


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    texts = []
    for message in messages:
        if message["type"] == SEND_TEXTS:
            texts += [text.decode() for text in message["texts"]]
        else:
            texts.append(message["text"])
    return texts


def test_the_batch_carries_the_frames_one_send_per_frame_carries() -> None:
    batched, single = _turns({SEND_TEXTS: {}}), _turns({})
    assert {m["type"] for m in batched} == {SEND_TEXTS}
    assert {m["type"] for m in single} == {"websocket.send"}
    assert len(batched) == 2 and len(single) > 2  # one send per turn, against one per event
    assert _texts(batched) == _texts(single)  # byte for byte
    types = [json.loads(text)["type"] for text in _texts(batched)]
    assert types.count("response.completed") == 2 and "response.output_text.delta" in types


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_a_text_frame_is_framed_as_the_websockets_library_frames_it(size: int) -> None:
    payload = ("é" * size).encode()[:size]  # not always whole characters: framing is bytes
    expected = Frame(Opcode.TEXT, payload).serialize(mask=False, extensions=[])
    assert _text_frame(payload) == expected


@pytest.mark.parametrize(
    ("frame", "data"),
    [
        (b'event: response.created\ndata: {"a": 1}', b'{"a": 1}'),  # what mockllm writes
        (b"event: x\ndata: a\ndata: b", b"a\nb"),  # two data lines: joined by a newline
        (b"data: a\ndata: b", b"a\nb"),
        (b"data: only", b"only"),
        (b"event: x\ndata:  two spaces", b" two spaces"),
        (b": keep-alive", None),  # a comment: no frame
        (b"event: x", None),
    ],
)
def test_an_sse_frames_data_is_what_a_text_frame_carries(frame: bytes, data: bytes | None) -> None:
    assert _data(frame) == data
