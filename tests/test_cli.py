"""The command line, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import jsonschema

from .support import BUNDLED, running_server


def mockllm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mockllm", *args], capture_output=True, text=True, timeout=60
    )


def test_schema_is_a_valid_json_schema_that_accepts_the_library() -> None:
    result = mockllm("schema")
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    import yaml

    for file in BUNDLED.glob("*.yaml"):
        jsonschema.validate(yaml.safe_load(file.read_text()), schema)


def test_validate_ok_and_broken(tmp_path: Path) -> None:
    ok = mockllm("validate", str(BUNDLED))
    assert ok.returncode == 0 and ok.stdout.startswith("ok: ")
    bad = tmp_path / "broken.yaml"
    bad.write_text("name: broken\nturns:\n  - reply:\n      text: hi\n      finsh: stop\n")
    result = mockllm("validate", str(BUNDLED), str(bad))
    assert result.returncode == 1
    files = len(list(BUNDLED.glob("*.yaml")))
    assert result.stderr.splitlines() == [
        f"{bad}:5:7: turns[0].reply.finsh: unknown key 'finsh' "
        "(allowed here: text, reasoning, tool_calls, finish, usage); did you mean 'finish'?",
        f"1 problem in 1 file; {files} files ok",
    ]
    assert ok.stdout == f"ok: {files} scenarios in {files} files\n"


def test_list_shows_names_turns_descriptions() -> None:
    result = mockllm("list")
    assert result.returncode == 0
    line = next(x for x in result.stdout.splitlines() if x.startswith("weather-parallel"))
    assert "2 turn(s)" in line and "Two cities" in line


def test_serve_refuses_broken_scenarios_and_never_half_loads(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text("turns: [{reply: {text: hi}}]")
    (tmp_path / "bad.yaml").write_text("turns: [{reply: {text: 1}}]")
    result = mockllm("serve", "--port", "0", "--scenarios", str(tmp_path))
    assert result.returncode == 1
    assert (
        "bad.yaml:1:24: turns[0].reply.text: expected a string, got the number 1" in result.stderr
    )


def test_serve_port_zero_prints_and_writes_the_real_url() -> None:
    with running_server() as server:
        assert server.url.startswith("http://127.0.0.1:") and not server.url.endswith(":0")
        assert httpx.get(f"{server.url}/_mockllm/health").json()["status"] == "ok"
        out = server.console()
    assert f"scenarios on {server.url}\n" in out
    assert f'OpenAI(base_url="{server.url}/s/SCENARIO/v1"' in out


def test_no_command_prints_help() -> None:
    result = mockllm()
    assert result.returncode == 2 and "serve" in result.stderr
