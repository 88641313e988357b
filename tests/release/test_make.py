"""`make serve` — the README's first command — serves the bundled scenarios to the OpenAI SDK."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.docs.test_readme import run_readme_blocks
from tests.support import ROOT


def test_make_serve_runs_the_readme_round_trip(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    # VENV: the environment running these tests (make test's .venv in CI), already set up.
    command = ["make", "-s", "serve", f"VENV={sys.prefix}", f"ARGS=--port 0 --ready-file {ready}"]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert process.poll() is None, process.stdout.read() if process.stdout else ""
            assert time.monotonic() < deadline, "make serve did not become ready"
            time.sleep(0.05)
        url = ready.read_text().strip()
        run_readme_blocks(url)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        out, _ = process.communicate(timeout=10)
    assert f'OpenAI(base_url="{url}/s/SCENARIO/v1"' in out
    assert re.search(r"^#1 POST /s/\S+  session=\S+ scenario=\S+ turn=0  200 ", out, re.M), out
