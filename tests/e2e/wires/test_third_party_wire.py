"""A wire from outside mockllm, declared in the `mockllm.wires` entry-point group
(docs/wires.md): a tiny package and its dist-info on the server's path, served through
real HTTP by `mockllm serve`, plain and streamed. Without the dist-info the route is not
there; an entry point that cannot load stops the start, naming it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support import running_server

WIRE = '''
from typing import Any

from mockllm.core.conversation import Conversation, Message
from mockllm.core.encoding import dumps, sse_frame
from mockllm.core.events import Event
from mockllm.errors import RequestError
from mockllm.providers import Adapter, Body, Parsed, Stream, register


class Echo(Adapter):
    api = "echo"
    family = "echo"
    routes = ("v1/echo",)

    def parse(self, body: Any) -> Parsed:
        if not isinstance(body, dict) or not isinstance(body.get("say"), str):
            raise RequestError(400, "say: a string, please")
        stream = bool(body.get("stream"))
        return Parsed(Conversation("echo-1", (Message("user", body["say"]),), stream=stream))

    def render(self, resolved: Any, parsed: Parsed) -> Body:
        return Body(dumps({"text": resolved.reply.text}))

    def render_stream(self, resolved: Any, parsed: Parsed) -> Stream:
        return Stream([Event(sse_frame(dumps({"text": resolved.reply.text})), "text")])

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        return dumps({"oops": error.message})


class Shout(Echo):
    """Declared by its class: registered as it is."""

    api = "shout"
    routes = ("v1/shout",)

    def render(self, resolved: Any, parsed: Parsed) -> Body:
        return Body(dumps({"text": resolved.reply.text.upper()}))


register(Echo)  # declared by its module: its import registers it, as a built-in's does
'''

SCENARIO = "name: echo\nturns:\n  - repeat: true\n    reply:\n      text: hello\n"


def installed(root: Path, points: str | None) -> Path:
    """A package and its dist-info in `root`, as pip would leave them in site-packages
    (`points` None: the module alone, declaring nothing)."""
    (root / "mockllm_echo_wire.py").write_text(WIRE)
    if points is None:
        return root
    info = root / "mockllm_echo_wire-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mockllm-echo-wire\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[mockllm.wires]\n{points}")
    return root


@pytest.fixture
def scenarios(tmp_path: Path) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "echo.yaml").write_text(SCENARIO)
    return folder


def on_path(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """The server's subprocess gets `folder` on its sys.path (the tests' own path kept)."""
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])
    )


def test_a_wire_declared_by_an_installed_package_is_served(
    tmp_path: Path, scenarios: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    installed(site, "echo = mockllm_echo_wire\nshout = mockllm_echo_wire:Shout\n")
    on_path(monkeypatch, site)
    with running_server(scenarios=(scenarios,)) as server:
        http = httpx.Client(base_url=server.url)
        plain = http.post("/s/echo/t1/v1/echo", json={"say": "hi"})
        assert (plain.status_code, plain.json()) == (200, {"text": "hello"})
        streamed = http.post("/s/echo/t1/v1/echo", json={"say": "hi", "stream": True})
        assert (streamed.status_code, streamed.text) == (200, 'data: {"text":"hello"}\n\n')
        refused = http.post("/s/echo/t1/v1/echo", json={"say": 1})
        assert (refused.status_code, refused.json()) == (400, {"oops": "say: a string, please"})
        shout = http.post("/s/echo/t2/v1/shout", json={"say": "hi"})
        assert (shout.status_code, shout.json()) == (200, {"text": "HELLO"})
        logged = [(e["api"], e["turn"], e["response"]["status"]) for e in server.requests()]
        assert logged == [
            ("echo", 0, 200),
            ("echo", 0, 200),
            ("echo", None, 400),
            ("shout", 0, 200),
        ]
        http.close()


def test_without_its_dist_info_the_wire_is_not_there(
    tmp_path: Path, scenarios: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = installed(tmp_path, None)
    on_path(monkeypatch, site)
    with running_server(scenarios=(scenarios,)) as server:
        answer = httpx.post(f"{server.url}/s/echo/t1/v1/echo", json={"say": "hi"})
        assert answer.status_code == 404


def test_a_wire_that_cannot_load_stops_the_start_naming_it(
    tmp_path: Path, scenarios: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = installed(tmp_path, "broken = mockllm_no_such_wire\n")
    on_path(monkeypatch, site)
    argv = [sys.executable, "-m", "mockllm", "serve", "--port", "0", "--scenarios", str(scenarios)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == (
        "mockllm: the wire 'broken' (mockllm.wires: mockllm_no_such_wire) failed to load: "
        "ModuleNotFoundError: No module named 'mockllm_no_such_wire'"
    )
    assert done.stdout == ""


def test_a_start_with_no_wire_declared_does_not_scan_every_distribution() -> None:
    """importlib.metadata (and its parse of every installed package's entry points) only
    when a distribution names the group: none on this path does."""
    probe = "import sys, mockllm.providers as p; print(p.THIRD_PARTY, 'importlib.metadata' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout == "[] False\n", done.stderr
