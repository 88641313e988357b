"""One session name used twice (a rerun under one run id), in a real headless Chromium: the
live viewer, watching as the name is reset and used again, and the static report of the
server's --log file show the same two sessions, each with its own verdict, the earlier
one as `NAME#EPOCH`, the rerun named so, as `mockllm report` says it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from mockllm.testing.client import Client
from tests.support import ServerProcess, running_server
from tests.support.browser import Viewer, chromium, missing

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def server() -> Iterator[ServerProcess]:
    with running_server() as server:
        yield server


def weather(url: str, answer: bool) -> None:
    client = openai.OpenAI(base_url=url, api_key="k", max_retries=0)
    messages: list[object] = [{"role": "user", "content": "Weather in Paris?"}]
    reply = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
    message = reply.choices[0].message
    if answer and message.tool_calls:
        messages += [
            message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "18 °C"},
        ]
        client.chat.completions.create(model="m", messages=messages, tools=TOOLS)


def labels(viewer: Viewer) -> dict[str, str]:
    return {
        str(b.get_attribute("data-session")): b.find_element(By.CLASS_NAME, "badges").text
        for b in viewer.sessions()
    }


def test_a_name_used_twice_is_two_sessions_live_and_in_the_report(
    server: ServerProcess, browser: WebDriver, tmp_path: Path
) -> None:
    name = "test_weather-0-a3b2ec68~ci-42"
    client = Client(server.url)
    session = client.session(name)
    session.reset()
    first = client.epochs[name]  # the use this reset began
    weather(session.url("weather-single"), answer=False)  # the run that forgot the result
    viewer = Viewer(browser).open(f"{server.url}/_mockllm/ui")
    viewer.wait(lambda d: "✗ verdict: FAIL" in labels(viewer).get(name, ""))

    session.reset()  # the rerun, under the same run id: the server forgets the first use
    weather(session.url("weather-single"), answer=True)
    earlier = f"{name}#{first}"
    viewer.wait(lambda d: "✓ verdict: pass" in labels(viewer).get(name, ""))
    live = labels(viewer)
    assert viewer.names() == [earlier, name]  # the failing use first
    assert "✗ verdict: FAIL" in live[earlier]
    detail = viewer.pick(name)
    assert "run 2 of 2 (a rerun)" in detail.find_element(By.CLASS_NAME, "meta").text

    page = tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "mockllm", "report", str(server.log_file), "--html", str(page)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stdout
    assert f"✗ verdict: FAIL  {name} (1 request) · run 1 of 2" in done.stdout
    assert f"✓ verdict: pass  {name} (2 requests) · run 2 of 2 (a rerun)" in done.stdout
    static = Viewer(browser).open(page.as_uri())
    assert static.names() == [earlier, name]
    assert labels(static) == live  # the live viewer and the report agree
    assert "run 2 of 2 (a rerun)" in static.pick(name).find_element(By.CLASS_NAME, "meta").text
