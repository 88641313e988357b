"""Test helpers: a real `mockllm serve` process, session names, and the texts and messages
that the walker in drivers.py sends."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import httpx

from mockllm.core.scenario import TextMatch

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "scenarios"
TEST_SCENARIOS = ROOT / "tests" / "scenarios"


@dataclass
class ServerProcess:
    url: str
    process: subprocess.Popen[str]
    console: Path  # what it printed
    log_file: Path | None = None  # serve's --log

    @cached_property
    def http(self) -> httpx.Client:
        """One client for the admin routes: a new one per call costs a TLS context load."""
        return httpx.Client(base_url=self.url)

    def requests(self, **filters: Any) -> list[dict[str, Any]]:
        r = self.http.get("/_mockllm/requests", params=filters)
        r.raise_for_status()
        result: list[dict[str, Any]] = r.json()
        return result

    def last(self, session: str) -> dict[str, Any]:
        return self.requests(session=session)[-1]

    def printed(self) -> str:
        """Stop the process and return everything it printed."""
        self.process.terminate()
        self.process.wait(10)
        return self.console.read_text()

    def openai_url(self, scenario: str, session: str | None = None) -> str:
        return f"{self.url}/s/{scenario}/{session}/v1" if session else f"{self.url}/s/{scenario}/v1"


@contextmanager
def running_server(
    *args: str, scenarios: tuple[Path, ...] = (BUNDLED, TEST_SCENARIOS)
) -> Iterator[ServerProcess]:
    """Start `python -m mockllm serve --port 0` and wait for its ready file."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.jsonl"
        more = ["--scenarios", *map(str, scenarios)] if scenarios else []
        with running_command("serve", "--log", str(log), *args, *more) as server:
            server.log_file = log
            yield server
        assert_log_declared(log)


ENTRY_SCHEMA = ROOT / "mockllm" / "log" / "entry.schema.json"


def log_problems(log: Path) -> list[str]:
    """Where the entries of a `--log` file break the entry's one declaration
    (mockllm/log/entry.schema.json): a field the writer added and the schema lacks, a type
    that changed. Empty when every entry is declared."""
    import jsonschema  # deferred: only a server's teardown needs it

    validator = _entry_validator(jsonschema)
    problems = []
    for line in log.read_text().splitlines() if log.exists() else ():
        entry = json.loads(line)
        for error in validator.iter_errors(entry):
            where = "/".join(map(str, error.absolute_path)) or "the entry"
            problems.append(f"seq {entry.get('seq')}: {where}: {error.message[:300]}")
    return problems


def assert_log_declared(log: Path) -> None:
    problems = log_problems(log)
    assert not problems, (
        f"{len(problems)} problem(s) with the server's log against {ENTRY_SCHEMA.name}:\n"
        + "\n".join(problems[:10])
    )


_VALIDATOR: list[Any] = []


def _entry_validator(jsonschema: Any) -> Any:
    if not _VALIDATOR:
        schema = json.loads(ENTRY_SCHEMA.read_text())
        _VALIDATOR.append(jsonschema.Draft202012Validator(schema))
    return _VALIDATOR[0]


@contextmanager
def running_command(command: str, *args: str, cwd: Path | None = None) -> Iterator[ServerProcess]:
    """Start `python -m mockllm COMMAND --port 0 ...` (serve, record) and wait until it
    listens; its console goes to a file (`console`), so a chatty one never blocks on a pipe."""
    with tempfile.TemporaryDirectory() as tmp:
        ready, console = Path(tmp) / "ready", Path(tmp) / "console.txt"
        argv = [sys.executable, "-m", "mockllm", command, "--port", "0", "--ready-file", str(ready)]
        with console.open("w") as output:
            process = subprocess.Popen(
                [*argv, *args],
                stdout=output,
                stderr=subprocess.STDOUT,
                text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                cwd=cwd,
            )
        server = None
        try:
            server = ServerProcess(_wait_ready(ready, process, console), process, console)
            yield server
        finally:
            if server is not None and "http" in vars(server):
                server.http.close()
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(ready: Path, process: subprocess.Popen[str], console: Path) -> str:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if ready.exists():
            return ready.read_text().strip()
        if process.poll() is not None:
            out = console.read_text()
            raise RuntimeError(f"mockllm exited with {process.returncode}:\n{out}")
        time.sleep(0.02)
    raise RuntimeError("mockllm serve did not become ready in 20 s")


def session_id(nodeid: str) -> str:
    return "t" + hashlib.blake2b(nodeid.encode(), digest_size=6).hexdigest()


# --- driving a scenario ----------------------------------------------------------------------


def sample_text(match: TextMatch | None, default: str) -> str:
    """A text that satisfies `match` (regex expectations are not used in walkable scenarios)."""
    if match is None:
        return default
    if match.how == "regex":
        raise ValueError(f"cannot synthesise text matching /{match.value}/")
    return match.value


TOOL_PARAMETERS: dict[str, object] = {"type": "object", "properties": {"city": {"type": "string"}}}


def assistant_message(message: Any) -> dict[str, Any]:
    """An SDK ChatCompletionMessage as the dict a client sends back in the history."""
    out: dict[str, Any] = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in message.tool_calls
        ]
    reasoning = (message.model_extra or {}).get("reasoning_content")
    if reasoning is not None:
        out["reasoning_content"] = reasoning
    return out


def dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)


# --- Node test suites ------------------------------------------------------------------------


def run_node(cwd: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run a Node command whose servers, if it starts any, come from this Python: the Node
    client spawns `$MOCKLLM_PYTHON -m mockllm serve`."""
    env = {**os.environ, "MOCKLLM_PYTHON": sys.executable, "NO_COLOR": "1", "FORCE_COLOR": "0"}
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def run_node_tests(cwd: Path, *command: str) -> str:
    """Run a Node test suite (`node --test`, vitest); fails with its output."""
    done = run_node(cwd, *command)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    return output


def run_node_snippet(
    cwd: Path, code: str, *command: str, suffix: str = ".mjs"
) -> subprocess.CompletedProcess[str]:
    """Run `code` (a doc's block) as a file inside `cwd`, so that its imports resolve to
    that project's packages; `command` goes before the file name (default: `node`)."""
    script = cwd / f".snippet-{uuid.uuid4().hex}{suffix}"
    script.write_text(code)
    try:
        return run_node(cwd, *(command or ("node",)), script.name)
    finally:
        script.unlink()


def node_test_counts(output: str) -> tuple[int, int]:
    """(passed, failed) from the Node test runner's TAP summary."""
    passed = re.search(r"^# pass (\d+)$", output, re.M)
    failed = re.search(r"^# fail (\d+)$", output, re.M)
    assert passed and failed, output
    return int(passed[1]), int(failed[1])


# --- hostile input: a valid document with parts replaced ---------------------------------


def json_paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON-like document, the document itself first."""
    found = [at]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += json_paths(inner, (*at, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found += json_paths(inner, (*at, i))
    return found


def replaced(doc: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of `doc` with the value at `path` replaced by `new`."""
    if not path:
        return new
    copy = dict(doc) if isinstance(doc, dict) else list(doc)
    copy[path[0]] = replaced(doc[path[0]], path[1:], new)
    return copy
