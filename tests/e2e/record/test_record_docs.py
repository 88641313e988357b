"""docs/record.md, executed: record the doc's agent through a real `mockllm record` (the API
played by a mockllm on loopback), compare what it prints and writes with what the doc
shows, add the doc's fault, validate, and run the doc's regression test under pytest."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import ROOT, ServerProcess, running_command

pytest_plugins = ["pytester"]

DOC = (ROOT / "docs" / "record.md").read_text()
DOC_UPSTREAM = "https://api.openai.com"
DOC_URL = "http://127.0.0.1:8000"


def block(language: str, name: str | None = None) -> str:
    """The doc's first ```language block (with file=name, if given)."""
    head = f"```{language}" + (f" file={name}" if name else "") + "\n"
    return DOC.split(head, 1)[1].split("```", 1)[0]


def console_blocks() -> list[str]:
    return re.findall(r"```console\n(.*?)```", DOC, re.S)


def normal(text: str) -> str:
    """Timings differ from run to run."""
    return re.sub(r"\(\d+\.\d\d s\)", "(… s)", text)


def test_the_walk_through_runs_as_written(
    server: ServerProcess, tmp_path: Path, pytester: pytest.Pytester, session: str
) -> None:
    start, run, validate, pytest_run = console_blocks()
    assert f"$ mockllm record --upstream {DOC_UPSTREAM} --out recordings" in start
    upstream = f"{server.url}/s/weather-single/{session}"  # the API, played by mockllm
    (tmp_path / "agent.py").write_text(block("python", "agent.py"))
    with running_command(
        "record", "--upstream", upstream, "--out", "recordings", cwd=tmp_path
    ) as rec:
        agent = block("python", "agent.py").replace(DOC_URL, rec.url)
        (tmp_path / "agent_here.py").write_text(agent)
        done = subprocess.run(
            [sys.executable, "agent_here.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "OPENAI_API_KEY": "sk-walkthrough-key-000"},
        )
        assert done.returncode == 0, done.stderr
        assert run.split("\n", 1)[1] == done.stdout  # what the doc says it prints
        rec.process.send_signal(signal.SIGINT)
        assert rec.process.wait(20) == 0
        console = rec.console.read_text()

    # The console: one line per exchange, then the file, as the doc shows them.
    shown = [line for line in block("text").splitlines() if line != "^C"]
    printed = console.splitlines()[-len(shown) :]
    assert normal("\n".join(printed)) == normal("\n".join(shown))

    # The file: as the doc shows it, less the fault added by hand.
    doc_file = block("yaml", "recordings/weather-first-run.yaml")
    fault = "    fault:\n      http:\n        status: 429\n        headers:\n          retry-after-ms: 20\n      times: 1\n"
    assert fault in doc_file
    written = (tmp_path / "recordings" / "weather-first-run.yaml").read_text()
    today = time.strftime("%Y-%m-%d", time.gmtime())
    written = written.replace(upstream, DOC_UPSTREAM).replace(today, "2026-11-30")
    assert normal(written) == normal(doc_file.replace(fault, ""))

    # The edit, checked; then the regression test passes under pytest.
    (tmp_path / "recordings" / "weather-first-run.yaml").write_text(doc_file)
    checked = subprocess.run(
        [sys.executable, "-m", "mockllm", "validate", "recordings"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.stdout == validate.split("\n", 1)[1]
    for name in ("agent.py", "recordings"):
        source = tmp_path / name
        if source.is_dir():
            shutil.copytree(source, pytester.path / name)
        else:
            shutil.copy(source, pytester.path / name)
    (pytester.path / "test_weather.py").write_text(block("python", "test_weather.py"))
    result = pytester.runpytest("-p", "no:cacheprovider", "test_weather.py")
    result.assert_outcomes(passed=1)
    assert pytest_run.split("\n", 1)[1].strip() == "1 passed"
