"""Run an agent CLI against `mockllm serve` in a network namespace with only loopback.

`run(...)` writes a spec for `inside.py`, runs it under `unshare -n` (as root, as the
suite runs here) or `unshare -rn` (an unprivileged user namespace), and returns what
happened: the CLI's exit code and output, and the server's request log as parsed entries.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BIN = HERE / "node_modules" / ".bin"
# Where the Python CLIs (aider, llm) are: their own virtualenv (Makefile, requirements.txt).
AGENTS_VENV = ROOT / ".venv-agents" / "bin"


@functools.cache
def unshare() -> list[str] | None:
    """The unshare prefix that works here, or None (then the group is skipped)."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return None
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
        probe = [*prefix, "sh", "-c", "ip link set lo up"]
        if subprocess.run(probe, capture_output=True, timeout=10).returncode == 0:
            return prefix
    return None


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool
    url: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    log: Path | None = None

    def model_requests(self) -> list[dict[str, Any]]:
        """The model requests (not the MCP messages, `api: "mcp"`, logged beside them)."""
        return [e for e in self.entries if e.get("api") not in (None, "mcp")]

    def describe(self) -> str:
        lines = [f"exit {self.returncode} after {self.seconds}s (timed out: {self.timed_out})"]
        lines += ["--- stdout", self.stdout[-3000:], "--- stderr", self.stderr[-3000:]]
        for e in self.entries:
            resp = e.get("response") or {}
            lines.append(
                f"- {e.get('method', 'POST')} {e.get('path')} -> {resp.get('status')} "
                f"turn={e.get('turn')} {(e.get('error') or {}).get('message', '')[:300]}"
            )
        return "\n".join(lines)


def base_env(home: Path) -> dict[str, str]:
    """A clean environment: no proxy, no user config, a throwaway HOME."""
    return {
        "PATH": f"{BIN}:{AGENTS_VENV}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "PYTHONPATH": str(ROOT),
    }


def run(
    tmp: Path,
    argv: list[str],
    env: dict[str, str],
    scenarios: list[str] | None = None,
    files: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
    serve_args: list[str] | None = None,
) -> Run:
    prefix = unshare()
    assert prefix is not None, "no network namespace here"
    tmp.mkdir(parents=True, exist_ok=True)
    work = cwd or tmp / "work"
    work.mkdir(parents=True, exist_ok=True)
    log, result = tmp / "requests.jsonl", tmp / "result.json"
    spec = {
        "cwd": str(work),
        "log": str(log),
        "result": str(result),
        "argv": argv,
        "env": env,
        "scenarios": scenarios or [],
        "files": files or {},
        "timeout": timeout,
        "serve_args": ["--quiet", *(serve_args or [])],
    }
    spec_file = tmp / "spec.json"
    spec_file.write_text(json.dumps(spec))
    script = 'ip link set lo up && exec "$0" "$@"'
    command = [*prefix, "sh", "-c", script, sys.executable, str(HERE / "inside.py"), str(spec_file)]
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, timeout=timeout + 60, env=environ)
    if not result.exists():
        raise AssertionError(
            f"the namespace run failed (exit {done.returncode}): {done.stderr.decode()[-3000:]}"
        )
    data = json.loads(result.read_text())
    entries = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return Run(**data, entries=entries, log=log)
