"""A Responses turn over WebSocket takes its frames' data as slices of the stream's body,
where the template it was rendered from has them (serving/websocket.py's `_sliced`), not
by splitting the body at each blank line and reading each frame's `data:` line: the same
bytes either way, on every turn; and a template whose frames or ids could
make them differ is split as before."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import mockllm.serving.websocket as websocket
from mockllm.core.events import Event
from mockllm.loading.loader import load_paths, load_text
from mockllm.serving.rendered import Rendered
from mockllm.serving.server import build_app
from mockllm.serving.upgrades import SEND_TEXTS
from mockllm.serving.websocket import _data, _sliced
from tests.unit.asgi import websocket_scope

LOOP = Path(__file__).parents[3] / "bench" / "scenarios" / "bench-tool-loop.yaml"
SCENARIO = """\
name: many
turns:
  - reply:
      reasoning: "thinking\\nof it"
      text: "line one\\nline two, café ☕ \\"quoted\\""
  - reply:
      tool_calls:
        - {name: search, arguments: {q: "flights\\nto Paris"}}
        - {name: search, arguments: {q: "trains"}}
  - reply: {text: ""}
"""


def split(body: bytes) -> list[bytes]:
    """What the WebSocket route sent before: the body split at each blank line, each
    frame's data (`_data`)."""
    *frames, rest = body.split(b"\n\n")
    assert rest == b""
    return [data for data in map(_data, frames) if data is not None]


def _run(app: Any, path: str, frames: list[dict[str, Any]]) -> list[bytes]:
    """The frames sent on one connection, in-process, each turn's texts batched."""

    async def run() -> list[bytes]:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for message in (
            {"type": "websocket.connect"},
            *({"type": "websocket.receive", "text": json.dumps(f)} for f in frames),
            {"type": "websocket.disconnect", "code": 1000},
        ):
            inbox.put_nowait(message)
        sent: list[bytes] = []

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == SEND_TEXTS:
                sent.extend(message["texts"])

        await app(websocket_scope(path, {SEND_TEXTS: {}}), inbox.get, send)
        return sent

    return asyncio.run(run())


@pytest.fixture
def sliced(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, bytes]]:
    """Each stream body the route sent, whether it was sliced, each checked against the
    split of the same bytes."""
    seen: list[tuple[bool, bytes]] = []

    def checked(rendered: Any, body: bytes) -> list[bytes] | None:
        texts = _sliced(rendered, body)
        assert texts is None or texts == split(body)
        seen.append((texts is not None, body))
        return texts

    monkeypatch.setattr(websocket, "_sliced", checked)
    return seen


def test_every_turn_of_the_benchs_loop_is_sliced_to_the_same_bytes(
    sliced: list[tuple[bool, bytes]],
) -> None:
    app = build_app(load_paths([LOOP]))
    body: dict[str, Any] = {"model": "gpt-5.5", "input": "find cheap flights"}
    frames = [{"type": "response.create", **body} for _ in range(4)]
    for loop in range(2):
        sent = _run(app, f"/s/bench-tool-loop/slices{loop}/v1/responses", frames)
        assert sent == [text for _, b in sliced[-4:] for text in split(b)]
    # once each turn's reply has its template (the first loop made them), all are sliced
    assert [s for s, _ in sliced[4:]] == [True] * 4


def test_text_reasoning_and_calls_of_every_session_are_sliced_to_the_same_bytes(
    sliced: list[tuple[bool, bytes]],
) -> None:
    app = build_app([load_text(SCENARIO)])
    create = {"type": "response.create", "model": "gpt-5.5", "input": "hi"}
    for session in ("one", "two", "three"):
        sent = _run(app, f"/s/many/{session}/v1/responses", [create] * 3)
        assert sent == [text for _, b in sliced[-3:] for text in split(b)]
    assert [s for s, _ in sliced[3:]] == [True] * 6
    assert len({b for _, b in sliced}) == 3  # three replies: each session's ids the same


def _template(events: list[bytes], ids: tuple[bytes, ...] = ()) -> Rendered:
    """A template of these frames, with these attempt ids (as `_plans` records them)."""
    made = Rendered(None, b"".join(events), [Event(e, "text") for e in events])
    made.plans = tuple(
        (i, b"%d" % n, b"resp_", len(i) - 5, None, len(i) - 5, (b"", b""))
        for n, i in enumerate(ids)
    )
    attempt = Rendered(None, made.body)
    attempt.template = made
    return attempt


def test_frames_not_as_mockllm_writes_them_are_split_as_before() -> None:
    good = [b'event: a\ndata: {"id":"resp_1"}\n\n', b"event: b\ndata: {}\n\n"]
    attempt = _template(good, (b"resp_1",))
    assert _sliced(attempt, attempt.body) == split(attempt.body) == [b'{"id":"resp_1"}', b"{}"]
    for events, ids in [
        ([b"event: a\ndata: 1\ndata: 2\n\n"], ()),  # two data lines: `_data` joins them
        ([b"data: 1\n\n"], ()),  # no event line
        ([b"event: a\n\ndata: 1\n\n"], ()),  # a blank line inside
        ([b"event: a\ndata: 1\n\n", b"\nevent: b\ndata: 2\n\n"], ()),  # a newline between
        ([b": comment\n\n", b"event: a\ndata: 1\n\n"], ()),  # a frame without data
        ([b"event: resp_1\ndata: {}\n\n"], (b"resp_1",)),  # an id in a head
        ([b"event: a\ndata: {}\n\n"], (b"resp\n1",)),  # an id with a newline
    ]:
        attempt = _template(events, ids)
        assert _sliced(attempt, attempt.body) is None, events
    longer = _template(good, (b"resp_1",))
    assert _sliced(longer, longer.body + b"x") is None  # not this template's length
    assert _sliced(None, longer.body) is None  # no Rendered handed: a paced delivery
