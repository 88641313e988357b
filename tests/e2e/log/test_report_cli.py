"""`mockllm report` on a real server's --log file, `GET /_mockllm/transcript`, the verdict
on faulted calls, and the small CLI promises (--version, help, pipes, list, bundled)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.e2e.admin.test_cli import mockllm
from tests.support import BUNDLED, ServerProcess, running_server

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
USER = [{"role": "user", "content": "Weather in Paris?"}]


def ask(url: str, scenario: str, session: str, **options: object) -> openai.OpenAI:
    base = f"{url}/s/{scenario}/{session}/v1"
    return openai.OpenAI(base_url=base, api_key="k", max_retries=0, **options)


def weather_loop(client: openai.OpenAI, result: str = "18 °C") -> None:
    messages: list[object] = list(USER)
    for _ in range(3):
        message = (
            client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
            .choices[0]
            .message
        )
        messages.append(message)
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


@pytest.fixture(scope="module")
def logged() -> Iterator[ServerProcess]:
    """A server whose log holds: a clean session, a rate-limited one (429, 429, served),
    an exhausted one, and a stream cut by a fault that the harness gave up on."""
    with running_server("--quiet") as server:
        weather_loop(ask(server.url, "weather-single", "clean"))
        limited = ask(server.url, "rate-limited", "limited")
        for _ in range(2):
            with pytest.raises(openai.RateLimitError):
                weather_loop(limited)
            time.sleep(0.03)  # honour retry-after-ms: 20
        weather_loop(limited)
        with pytest.raises(openai.BadRequestError):
            weather_loop(ask(server.url, "weather-single", "exhausted"), result="sunny")
        with pytest.raises(openai.APIConnectionError):
            stream = ask(server.url, "stream-cut", "cut").chat.completions.create(
                model="m",
                messages=USER,
                tools=TOOLS,
                stream=True,
            )
            list(stream)
        yield server


def test_report_summary_and_the_lines_of_non_200_answers(logged: ServerProcess) -> None:
    result = mockllm("report", str(logged.log_file))
    assert result.returncode == 1, result.stderr
    out = result.stdout.splitlines()
    assert out[0] == "✓ verdict: pass  clean (2 requests)"
    assert out[1] == "✓ verdict: pass  limited (4 requests)"
    assert out[2].startswith("     · #3 turn 0: 429 fault: ")
    assert out[4] == "✗ verdict: FAIL  exhausted (2 requests)"
    assert out[5].startswith(
        "     ! expectations_met: request (log seq 8) (turn 1): 400 expectation_failed: mockllm expectation "
        "failed"
    )
    assert out[6] == "✓ verdict: pass  cut (1 request)"
    assert out[-1] == "1 of 4 sessions failed"


def test_report_session_transcript_and_the_same_over_http(logged: ServerProcess) -> None:
    result = mockllm("report", str(logged.log_file), "--session", "cut", "--transcript")
    assert result.returncode == 0, result.stderr
    # Where the cut fell and what the client had of the call: the server's record of it.
    assert result.stdout.splitlines()[-5:-1] == [
        "     ← assistant (200, tool_calls)",
        "     ~ fault truncate: cut inside the arguments of call 0, then reset",
        "     ✂ truncate cut the reply in call:0",
        '       calls get_weather({"city":"Paris","unit":"celsius"}) id=call_e3x9eljoCLAloSWVUpEzxT8t'
        " — cut by truncate: the client got 11 of 33 bytes",
    ], result.stdout
    over_http = httpx.get(f"{logged.url}/_mockllm/transcript", params={"session": "cut"})
    assert over_http.headers["content-type"].startswith("text/plain")
    assert over_http.text == result.stdout
    missing = mockllm("report", str(logged.log_file), "--session", "clen")
    assert missing.returncode == 2
    assert "no session 'clen'" in missing.stderr and "did you mean 'clean'?" in missing.stderr


def test_the_verdict_blames_neither_a_cut_call_nor_a_429(logged: ServerProcess) -> None:
    cut = logged.http.get("/_mockllm/verdict", params={"session": "cut"}).json()
    answered = next(c for c in cut["checks"] if c["name"] == "calls_answered")
    assert cut["ok"] and answered["ok"]
    assert answered["message"].endswith("was cut by fault (truncate in call:0): not counted")
    limited = logged.requests(session="limited")
    assert [e["response"]["status"] for e in limited] == [429, 429, 200, 200]
    assert limited[0]["response"]["finish"] is None and limited[0]["response"]["tool_calls"] == []


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "no such file"),
        ('{"a": 1}\n', "1: not a mockllm log entry (no 'seq'): is it a --log file?"),
        ("[1, 2]\n", "1: not a mockllm log entry"),
        ("", "empty: no requests were logged"),
        ("not json\n", "1: not a JSON log entry"),
    ],
)
def test_report_on_what_is_not_a_log_says_so_in_one_line(
    tmp_path: Path, content: str | None, said: str
) -> None:
    log = tmp_path / "log.jsonl"
    if content is not None:
        log.write_text(content)
    result = mockllm("report", str(log))
    assert result.returncode == 2
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"mockllm report: {log}") and said in result.stderr


def test_version_and_help_on_every_argument() -> None:
    from mockllm._version import __version__
    from mockllm.cli import _parser

    assert mockllm("--version").stdout == f"mockllm {__version__}\n"
    parser = _parser()
    commands = parser._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        for action in sub._actions:
            assert action.help, f"mockllm {name} {action.option_strings or action.dest}: no help"


def test_a_closed_pipe_ends_quietly() -> None:
    for command in (["schema"], ["list", "--long"]):
        done = subprocess.run(
            f"{sys.executable} -m mockllm {' '.join(command)} | head -1",
            shell=True,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.stderr == "" and len(done.stdout.splitlines()) == 1


def test_list_cuts_lines_to_the_terminal_and_long_shows_all() -> None:
    narrow = subprocess.run(
        [sys.executable, "-m", "mockllm", "list"],
        capture_output=True,
        text=True,
        env={"COLUMNS": "60", "PATH": ""},
        timeout=60,
    )
    lines = narrow.stdout.splitlines()
    assert len(lines) == len(list(BUNDLED.glob("*.yaml")))
    assert max(map(len, lines)) == 60 and lines[0].endswith("…")
    long = mockllm("list", "--long").stdout
    assert re.search(
        r"^hallucinated-tool +2 turn\(s\)  tools: read_file, search  file: ", long, re.M
    )
    assert "    The model calls get_weather with a JSON array" in long


def test_scenarios_are_added_to_the_bundled_library_unless_no_bundled(tmp_path: Path) -> None:
    (tmp_path / "own.yaml").write_text("name: hello\nturns: [{reply: {text: mine}}]\n")
    with running_server("--quiet", scenarios=(tmp_path,)) as server:
        names = {s["name"] for s in server.http.get("/_mockllm/scenarios").json()}
        reply = httpx.post(
            server.openai_url("hello") + "/chat/completions", json={"model": "m", "messages": USER}
        )
    assert "weather-single" in names and reply.json()["choices"][0]["message"]["content"] == "mine"
    with running_server("--quiet", "--no-bundled", scenarios=(tmp_path,)) as server:
        assert [s["name"] for s in server.http.get("/_mockllm/scenarios").json()] == ["hello"]
    assert re.search(r"besides\s+the\s+bundled\s+library", mockllm("serve", "--help").stdout)
