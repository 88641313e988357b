"""The command line: `cli.main(argv)` in-process where a process adds nothing (validate, list,
schema, report, flags), and a real subprocess for what only a process shows (`python -m
mockllm`, a listening server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml

from mockllm import cli
from mockllm.core.scenario import Chaos
from mockllm.loading.loader import schema
from mockllm.options import ServerOptions
from mockllm.serving import server as serving
from tests.support import BUNDLED, running_server


def mockllm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mockllm", *args], capture_output=True, text=True, timeout=60
    )


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`mockllm ARGV` in this process: (exit code, stdout, stderr)."""
    try:
        code = cli.main(list(argv))
    except SystemExit as exit:  # argparse refuses bad flags this way
        code = exit.code if isinstance(exit.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


# --- validate, list, schema --------------------------------------------------------------------


def test_schema_is_a_valid_json_schema_that_accepts_the_library(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "schema")
    assert code == 0 and out == json.dumps(schema(), indent=2) + "\n"
    printed = json.loads(out)
    jsonschema.Draft202012Validator.check_schema(printed)
    for file in BUNDLED.glob("*.yaml"):
        jsonschema.validate(yaml.safe_load(file.read_text()), printed)


def test_validate_ok_and_broken(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    files = len(list(BUNDLED.glob("*.yaml")))
    assert run(capsys, "validate", str(BUNDLED)) == (
        0,
        f"ok: {files} scenarios in {files} files\n",
        "",
    )
    bad = tmp_path / "broken.yaml"
    bad.write_text("name: broken\nturns:\n  - reply:\n      text: hi\n      finsh: stop\n")
    assert run(capsys, "validate", str(BUNDLED), str(bad)) == (
        1,
        "",
        f"{bad}:5:7: turns[0].reply.finsh: unknown key 'finsh' "
        "(allowed here: text, reasoning, tool_calls, finish, usage, json, refusal, empty, filter, blocked, search_tools); did you mean 'finish'?\n"
        f"1 problem in 1 file; {files} files ok\n",
    )


def test_validate_names_a_missing_path(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    assert run(capsys, "validate", str(missing)) == (
        1,
        "",
        f"{missing}: no such file or folder\n1 problem in 1 file; 0 files ok\n",
    )


def test_list_shows_names_turns_descriptions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("weather-parallel"))
    assert "2 turn(s)" in line and "Two cities" in line
    assert len(out.splitlines()) == len(list(BUNDLED.glob("*.yaml")))


def test_list_aligns_sorted_names_and_shows_first_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "b.yaml").write_text(
        "name: zeta\ndescription: |\n  First line.\n  Second line.\nturns: [{reply: {text: hi}}]\n"
    )
    turns = ", ".join(["{reply: {text: hi}}"] * 12)
    (tmp_path / "a.yaml").write_text(f"name: a-longer-name\nturns: [{turns}]\n")
    assert run(capsys, "list", str(tmp_path)) == (
        0,
        "a-longer-name  12 turn(s)\nzeta            1 turn(s)  First line.\n",
        "",
    )


# --- report ------------------------------------------------------------------------------------


def logged(
    seq: int, session: str, calls: tuple[str, ...] = (), answers: tuple[str, ...] = ()
) -> str:
    """One --log line, as far as the verdict reads it."""
    entry: dict[str, Any] = {
        "seq": seq,
        "session": session,
        "scenario": "weather",
        "turn": 1 if answers else 0,
        "conversation": [
            {
                "role": "assistant",
                "tool_calls": [{"id": a, "name": "get_weather", "arguments": "{}"}],
            }
            for a in answers
        ]
        + [{"role": "tool", "tool_results": [{"call_id": a, "content": "18"}]} for a in answers],
        "response": {
            "status": 200,
            "tool_calls": [{"id": c, "name": "get_weather", "arguments": "{}"} for c in calls],
        },
    }
    return json.dumps(entry) + "\n"


def test_report_passes_clean_sessions_and_names_what_failed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "run.jsonl"
    log.write_text(
        logged(1, "clean", calls=("call_a",))
        + logged(2, "dirty", calls=("call_b",))
        + logged(3, "clean", answers=("call_a",))
    )
    assert run(capsys, "report", str(log)) == (
        1,
        "✓ verdict: pass  clean (2 requests)\n"
        "✗ verdict: FAIL  dirty (1 request)\n"
        "     ! calls_answered: call_b (get_weather, turn 0, request (log seq 2)) was never answered\n"
        "1 of 2 sessions failed\n",
        "",
    )
    assert run(capsys, "report", "--max-calls", "1", str(log))[1].splitlines()[:2] == [
        "✗ verdict: FAIL  clean (2 requests)",
        "     ! no_tool_loop: 2 model calls in one session (more than 1): a tool loop that never ends?",
    ]


def mcp_logged(seq: int, status: int | None, method: str, **extra: Any) -> str:
    """One MCP message's --log line (docs/mcp.md), as far as the report reads it."""
    entry = {
        "seq": seq,
        "session": "s",
        "scenario": "orders",
        "api": "mcp",
        "method": "POST",
        "path": "/s/orders/s/mcp/orders",
        "response": {"status": status, "error": None},
        "mcp": {"server": "orders", "transport": "streamable-http", "method": method},
        **extra,
    }
    return json.dumps(entry) + "\n"


def test_report_passes_an_accepted_notification_and_a_client_that_hung_up(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A notification is answered 202 Accepted; a client that hangs up before its request
    # is read (Claude Code's `server/discover` probe) has no status. Neither is a refusal:
    # a report that failed them failed every correct Claude Code or Codex run with MCP.
    log = tmp_path / "run.jsonl"
    log.write_text(
        mcp_logged(1, None, "server/discover", client_disconnected=True)
        + mcp_logged(2, 200, "initialize")
        + mcp_logged(3, 202, "notifications/initialized")
    )
    code, out, _ = run(capsys, "report", str(log))
    assert (code, out.splitlines()[0]) == (0, "✓ verdict: pass  s (3 requests)"), out
    # A status the client did get, which is not a 2xx, still fails the session.
    log.write_text(mcp_logged(1, 500, "initialize") + mcp_logged(2, 202, "notifications/x"))
    code, out, _ = run(capsys, "report", str(log))
    assert code == 1 and out.splitlines()[:2] == [
        "✗ verdict: FAIL  s (2 requests)",
        "     ! requests_accepted: request (log seq 1) was refused: 500",
    ], out


def test_report_of_an_empty_log_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "empty.jsonl"
    log.write_text("")
    code, out, err = run(capsys, "report", str(log))
    assert (code, out) == (2, "") and err.startswith(f"mockllm report: {log}")


def test_report_names_a_broken_log_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "broken.jsonl"
    log.write_text('{"seq": 1, "session": "a"}\nnot json\n')
    assert run(capsys, "report", str(log)) == (
        2,
        "",
        f"mockllm report: {log}:2: not a JSON log entry: Expecting value: line 1 column 1 (char 0)\n",
    )


def test_report_names_a_missing_log_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "report", str(tmp_path / "nope.jsonl"))
    assert code == 2 and err.startswith("mockllm report: ") and "nope.jsonl" in err


def test_report_names_a_line_that_is_not_an_object(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "list.jsonl"
    log.write_text("[1]\n")
    code, _, err = run(capsys, "report", str(log))
    assert code == 2 and err == (
        f"mockllm report: {log}:1: not a mockllm log entry (no 'seq'): is it a --log file?\n"
    )


# --- serve's flags (the server itself is not started here) --------------------------------------


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """What `mockllm serve` would run: (app, host, port, ready file, banner) per call."""
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(serving, "run", lambda *args: calls.append(args))
    return calls


def test_serve_defaults(capsys: pytest.CaptureFixture[str], started: list[tuple[Any, ...]]) -> None:
    assert run(capsys, "serve") == (0, "", "")
    ((app, host, port, ready_file, banner),) = started
    assert (app.options, host, port, ready_file) == (ServerOptions(), "127.0.0.1", 8000, None)
    assert len(app.engine.scenarios) == len(list(BUNDLED.glob("*.yaml")))
    assert banner == (
        f"mockllm: serving {len(app.engine.scenarios)} scenarios on {{url}}\n"
        '  OpenAI SDK:    OpenAI(base_url="{url}/s/SCENARIO/v1", api_key="test")\n'
        '  Anthropic SDK: Anthropic(base_url="{url}/s/SCENARIO", api_key="test")\n'
        '  Gemini SDK:    genai.Client(api_key="test", '
        'http_options={{"base_url": "{url}/s/SCENARIO"}})\n'
        '  Bedrock:       boto3.client("bedrock-runtime", endpoint_url="{url}/s/SCENARIO", ...)'
        "  (any credentials)\n"
        '  Vertex Gemini: genai.Client(vertexai=True, project="p", location="us-central1", '
        'http_options={{"base_url": "{url}/s/SCENARIO"}}, credentials=Credentials(token="test"))'
        "  (google.oauth2.credentials)\n"
        '  Vertex Claude: AnthropicVertex(base_url="{url}/s/SCENARIO/v1", region="us-east5", '
        'project_id="p", access_token="test")\n'
        '  Azure OpenAI:  AzureOpenAI(azure_endpoint="{url}/s/SCENARIO", '
        'api_version="2024-10-21", api_key="test")\n'
        '  Mistral SDK:   Mistral(server_url="{url}/f/mistral/s/SCENARIO", api_key="test")\n'
        "  scenarios:     {url}/_mockllm/scenarios    request log: {url}/_mockllm/requests\n"
        "  viewer:        {url}/_mockllm/ui    (the log live, each session's verdict)"
    )
    # What it prints, once serve has its URL: a line to copy, for every wire.
    printed = banner.format(url="http://127.0.0.1:8000")
    assert 'http_options={"base_url": "http://127.0.0.1:8000/s/SCENARIO"})' in printed
    assert 'azure_endpoint="http://127.0.0.1:8000/s/SCENARIO"' in printed


def test_serve_flags_become_the_server_options(
    capsys: pytest.CaptureFixture[str], started: list[tuple[Any, ...]], tmp_path: Path
) -> None:
    log, ready = tmp_path / "run.jsonl", tmp_path / "ready"
    argv = [
        "serve",
        "--host", "::1",
        "--port", "0",
        "--default", "hello",
        "--validation", "warn",
        "--flavor", "deepseek",
        "--log", str(log),
        "--log-limit", "5",
        "--log-body-cap", "64KB",
        "--max-body", "10 mb",
        "--chaos", "truncate=0.05, 429=0.1,",
        "--seed", "7",
        "--max-stall", "2.5",
        "--max-number-digits", "50",
        "--ready-file", str(ready),
        "--real-time",
        "--no-websocket",
    ]  # fmt: skip
    assert run(capsys, *argv) == (0, "", "")
    ((app, host, port, ready_file, banner),) = started
    assert app.options == ServerOptions(
        default="hello",
        validation="warn",
        flavor="deepseek",
        chaos=Chaos((("429", 0.1), ("truncate", 0.05))),  # the draw's fixed order
        seed=7,
        real_time=True,
        log=str(log),
        log_limit=5,
        log_body_cap=65536,
        max_body=10 * 1024 * 1024,
        max_stall=2.5,
        websocket=False,
        max_number_digits=50,
    )
    assert (host, port, ready_file) == ("::1", 0, str(ready))
    assert 'OpenAI(base_url="{url}/s/hello/v1"' in banner
    app.journal.shutdown()


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["serve", "--chaos", "429=2"],
            "mockllm serve: error: argument --chaos: '429=2': expected KIND=RATE with KIND one "
            "of 429, 500, 503, 529, truncate, stream_error, delay, refusal, "
            "content_filter, empty, reasoning_only and RATE in 0..1",
        ),
        (
            ["serve", "--chaos", "boom=0.1"],
            "mockllm serve: error: argument --chaos: 'boom=0.1': expected KIND=RATE with KIND "
            "one of 429, 500, 503, 529, truncate, stream_error, delay, refusal, "
            "content_filter, empty, reasoning_only and RATE in 0..1",
        ),
        (
            ["serve", "--chaos", "429=0.6,500=0.6"],
            "mockllm serve: error: argument --chaos: the rates add up to more than 1",
        ),
        (
            ["serve", "--max-body", "10XB"],
            "mockllm serve: error: argument --max-body: not a size: '10XB' (try 65536, 64KB or 10MB)",
        ),
    ],
)
def test_bad_values_exit_2_with_mockllm_s_reason(
    capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out, err.splitlines()[-1]) == (2, "", line)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["serve", "--validation", "loose"],
            "mockllm serve: error: argument --validation: invalid choice: 'loose'",
        ),
        (
            ["serve", "--port", "http"],
            "mockllm serve: error: argument --port: invalid int value: 'http'",
        ),
        (["report"], "mockllm report: error: the following arguments are required: LOGFILE"),
        (["validate"], "mockllm validate: error: the following arguments are required: PATH"),
        (["frobnicate"], "mockllm: error: argument COMMAND: invalid choice: 'frobnicate'"),
    ],
)
def test_bad_flags_exit_2_with_argparse_s_reason(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """argparse words these itself (its wording varies across Python versions)."""
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "") and message in err


def test_no_command_prints_help_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert (code, out) == (2, "") and err.startswith("usage: mockllm [-h] [--version] COMMAND ...")


def test_serve_refuses_a_default_it_did_not_load(
    capsys: pytest.CaptureFixture[str], started: list[tuple[Any, ...]]
) -> None:
    assert run(capsys, "serve", "--default", "nope") == (
        2,
        "",
        "mockllm: --default 'nope' is not a loaded scenario\n",
    )
    assert started == []


def test_serve_refuses_a_ready_file_that_is_a_folder(
    capsys: pytest.CaptureFixture[str], started: list[tuple[Any, ...]], tmp_path: Path
) -> None:
    assert run(capsys, "serve", "--ready-file", str(tmp_path)) == (
        2,
        "",
        f"mockllm: --ready-file {str(tmp_path)!r} is a folder\n",
    )
    assert started == []


def test_serve_refuses_broken_scenarios_and_never_half_loads(
    capsys: pytest.CaptureFixture[str], started: list[tuple[Any, ...]], tmp_path: Path
) -> None:
    (tmp_path / "good.yaml").write_text("turns: [{reply: {text: hi}}]")
    (tmp_path / "bad.yaml").write_text("turns: [{reply: {text: 1}}]")
    assert run(capsys, "serve", "--port", "0", "--scenarios", str(tmp_path)) == (
        1,
        "",
        f"{tmp_path / 'bad.yaml'}:1:24: turns[0].reply.text: expected a string, got the number 1\n",
    )
    assert started == []


# --- real processes ----------------------------------------------------------------------------


def test_serve_port_zero_prints_and_writes_the_real_url() -> None:
    with running_server() as server:
        assert server.url.startswith("http://127.0.0.1:") and not server.url.endswith(":0")
        assert httpx.get(f"{server.url}/_mockllm/health").json()["status"] == "ok"
        out = server.printed()
    assert f"scenarios on {server.url}\n" in out
    assert f'OpenAI(base_url="{server.url}/s/SCENARIO/v1"' in out


def test_no_command_prints_help() -> None:
    """`python -m mockllm` is wired to `main` and exits with its code."""
    result = mockllm()
    assert result.returncode == 2 and "serve" in result.stderr
    assert result.stderr.startswith("usage: mockllm [-h] [--version] COMMAND ...")


def test_a_scenario_error_exits_1_from_the_process(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns: [{reply: {text: 1}}]")
    result = mockllm("validate", str(bad))
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"{bad}:1:24: turns[0].reply.text: expected a string, got the number 1\n"
        "1 problem in 1 file; 0 files ok\n"
    )
