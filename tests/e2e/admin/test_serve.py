"""`mockllm.serve()`: a real server on a background thread, for unittest and scripts."""

from __future__ import annotations

import socket
import unittest
from pathlib import Path

import openai
import pytest

import mockllm
from mockllm import RunningServer, ServerOptions, load_mapping
from tests.support import TEST_SCENARIOS


def test_serve_answers_and_stops_cleanly(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    extra = load_mapping({"name": "inline", "turns": [{"reply": {"text": "built in Python"}}]})
    with mockllm.serve(
        [TEST_SCENARIOS, extra], ServerOptions(log=str(log), default="inline")
    ) as server:
        assert server.client.health()["scenarios"] == len(list(TEST_SCENARIOS.glob("*.yaml"))) + 1
        with openai.OpenAI(base_url=f"{server.url}/v1", api_key="t") as sdk:
            reply = sdk.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}]
            )
        assert reply.choices[0].message.content == "built in Python"
        assert server.client.requests()[0].scenario == "inline"
        port = int(server.url.rsplit(":", 1)[1])
    assert '"scenario": "inline"' in log.read_text()
    with pytest.raises(OSError):  # nothing listens any more
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_serve_defaults_to_the_bundled_library() -> None:
    server = mockllm.serve()  # without `with`: stop() by hand
    try:
        names = {s.name for s in server.client.scenarios()}
        assert {"hello", "weather-single", "weather-parallel"} <= names
    finally:
        server.stop()


def test_serve_refuses_an_unknown_default_before_starting() -> None:
    with pytest.raises(ValueError, match="default 'nope' is not a loaded scenario"):
        mockllm.serve(options=ServerOptions(default="nope"))


class UnittestUsage(unittest.TestCase):
    """What a unittest suite writes: one server for the class, a session per test."""

    server: RunningServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = mockllm.serve()
        cls.addClassCleanup(cls.server.stop)

    def test_a_session_per_test(self) -> None:
        mock = self.server.client.session(self.id())
        with openai.OpenAI(base_url=mock.url("hello"), api_key="t") as sdk:
            sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        mock.assert_model_calls(exactly=1)
        self.assertEqual(mock.requests()[0].session, self.id())


def test_an_unknown_option_is_refused() -> None:
    import pytest

    with pytest.raises(TypeError, match="nonsense"):
        ServerOptions(nonsense=True)  # type: ignore[call-arg]
