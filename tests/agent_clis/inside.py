"""One agent CLI run against `mockllm serve`, both inside the same network namespace.

Run by `tests/agent_clis/cli_run.py` as `unshare -n sh -c 'ip link set lo up; exec python
inside.py SPEC'`: the namespace has only loopback, so whatever the CLI tries to reach
besides mockllm fails at once instead of leaving the machine. The spec (JSON) says the
scenarios, the log file, the CLI's argv, env and working directory; `{url}` in argv, env
and files is replaced by the server's base URL. The result (JSON) goes to `spec["result"]`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def main(spec_path: str) -> int:
    spec: dict[str, Any] = json.loads(Path(spec_path).read_text())
    work = Path(spec["cwd"])
    ready = Path(tempfile.mkdtemp()) / "ready"
    console = open(spec["log"] + ".console", "w")  # noqa: SIM115 (closed below)
    serve = [sys.executable, "-m", "mockllm", "serve", "--port", "0", "--ready-file", str(ready)]
    serve += ["--log", spec["log"], *spec.get("serve_args", [])]
    if spec.get("scenarios"):
        serve += ["--scenarios", *spec["scenarios"]]
    server = subprocess.Popen(serve, stdout=console, stderr=subprocess.STDOUT)
    result: dict[str, Any] = {}
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() or not ready.read_text().strip():
            if server.poll() is not None or time.monotonic() > deadline:
                console.flush()
                raise SystemExit("mockllm serve did not start: " + Path(console.name).read_text())
            time.sleep(0.02)
        url = ready.read_text().strip()
        result["url"] = url

        def fill(text: str) -> str:
            return text.replace("{url}", url)

        for name, text in spec.get("files", {}).items():
            target = Path(fill(name))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(fill(text))
        env = {k: fill(v) for k, v in spec.get("env", {}).items()}
        argv = [fill(a) for a in spec["argv"]]
        started = time.monotonic()
        cli = subprocess.Popen(
            argv,
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its children (MCP servers, shells) die with it
        )
        try:
            out, err = cli.communicate(timeout=spec.get("timeout", 120))
            result["timed_out"] = False
        except subprocess.TimeoutExpired:
            os.killpg(cli.pid, signal.SIGKILL)
            out, err = cli.communicate()
            result["timed_out"] = True
        result.update(
            returncode=cli.returncode,
            stdout=out.decode(errors="replace"),
            stderr=err.decode(errors="replace"),
            seconds=round(time.monotonic() - started, 3),
        )
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        console.close()
    Path(spec["result"]).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
