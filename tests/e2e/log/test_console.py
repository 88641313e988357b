"""The server console of a real `mockllm serve`: one line per request (unknown routes
included), JSON for machines, colour only on a terminal and never under NO_COLOR."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from tests.support import BUNDLED, ROOT, running_server

USER = [{"role": "user", "content": "hi"}]
UNANSWERED = [
    {"role": "user", "content": "hi"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    {"role": "user", "content": "and?"},
]


def traffic(url: str) -> None:
    """A served reply, a strict-rule refusal, an exhausted scenario and a wrong base URL."""
    chat = openai.OpenAI(base_url=f"{url}/s/hello/c1/v1", api_key="k", max_retries=0)
    chat.chat.completions.create(model="m", messages=USER)
    with pytest.raises(openai.BadRequestError):
        chat.chat.completions.create(model="m", messages=UNANSWERED)
    wrong = anthropic.Anthropic(base_url=f"{url}/s/hello/c1/v1", api_key="k", max_retries=0)
    with pytest.raises(anthropic.NotFoundError):  # session "c1", then /v1/v1/messages
        wrong.messages.create(model="m", max_tokens=5, messages=USER)


def test_one_text_line_per_request_unknown_routes_included() -> None:
    with running_server() as server:
        traffic(server.url)
        log = server.requests(session="c1")
        out = server.printed()
    lines = [line for line in out.splitlines() if line.startswith("#")]
    assert [e["path"] for e in log] == [
        "/s/hello/c1/v1/chat/completions",
        "/s/hello/c1/v1/chat/completions",
        "/s/hello/c1/v1/v1/messages",
    ]
    assert log[2]["response"]["status"] == 404 and log[2]["method"] == "POST"
    assert (
        lines[0]
        == "#1 POST /s/hello/c1/v1/chat/completions  session=c1 scenario=hello turn=0  200 stop"
    )
    assert lines[1].startswith(
        "#2 POST /s/hello/c1/v1/chat/completions  session=c1 scenario=hello turn=1  "
        "400 chat.tool_call_unanswered  ! chat.tool_call_unanswered: An assistant message"
    )
    assert lines[2].startswith(
        "#3 POST /s/hello/c1/v1/v1/messages  session=c1 scenario=hello  404 route_not_found  "
        "note: The Anthropic SDK adds /v1 itself: give it base_url="
    )
    assert "\033[" not in out  # piped: no colour


def test_json_lines_for_machines_and_quiet_prints_none() -> None:
    with running_server("--log-format", "json") as server:
        traffic(server.url)
        out = server.printed()
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [(r["seq"], r["status"], r["error"]) for r in records] == [
        (1, 200, None),
        (2, 400, "chat.tool_call_unanswered"),
        (3, 404, "route_not_found"),
    ]
    assert records[0]["finish"] == "stop" and records[0]["turn"] == 0
    doc = (ROOT / "docs" / "debugging.md").read_text()
    listed = doc.split("with the\nkeys ", 1)[1].split(".", 1)[0]
    assert set(records[0]) == set(re.findall(r"`(\w+)`", listed))  # as the docs list them
    assert records[1]["problem"].startswith("chat.tool_call_unanswered: An assistant message")
    with running_server("--quiet") as server:
        traffic(server.url)
        out = server.printed()
    assert out.startswith("mockllm: serving") and "#1" not in out


@pytest.mark.parametrize("no_color", [None, "1"])
def test_colour_on_a_terminal_unless_no_color(no_color: str | None) -> None:
    main, child = pty.openpty()
    with tempfile.TemporaryDirectory() as tmp:
        ready = Path(tmp) / "ready"
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        env.update({"NO_COLOR": no_color} if no_color else {})
        command = [sys.executable, "-m", "mockllm", "serve", "--port", "0"]
        command += ["--ready-file", str(ready), "--scenarios", str(BUNDLED)]
        process = subprocess.Popen(command, stdout=child, stderr=child, env=env)
        os.close(child)
        try:
            deadline = time.monotonic() + 20
            while not ready.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            url = ready.read_text().strip()
            httpx.post(f"{url}/s/hello/v1/chat/completions", json={"model": "m", "messages": USER})
            httpx.post(f"{url}/s/nope/v1/chat/completions", json={"model": "m", "messages": USER})
            out = b""
            while out.count(b"\n#") < 2 and time.monotonic() < deadline:
                out += os.read(main, 65536)
        finally:
            process.terminate()
            process.wait(10)
            os.close(main)
    text = out.decode()
    if no_color:
        assert "\033[" not in text and "  200 stop" in text
    else:
        assert "\033[32m200 stop\033[0m" in text and "\033[33m404 scenario_not_found\033[0m" in text
        assert re.search(r"\033\[31m! mockllm: no scenario named 'nope'", text)
