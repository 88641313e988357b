"""docs/debugging.md shows real output: its failing tests are run (pytest against a real
`mockllm serve`), and each ```text output=NAME block must be what that run printed."""

from __future__ import annotations

import re
import subprocess
import sys

import httpx
import pytest

from tests.support import ROOT, running_server

pytest_plugins = ["pytester"]

DOC = (ROOT / "docs" / "debugging.md").read_text()


def shown(name: str) -> str:
    found = re.search(rf"```text output={name}\n(.*?)```", DOC, re.S)
    assert found, f"docs/debugging.md has no output={name} block"
    return found[1]


def sections(output: str) -> str:
    """The "mockllm" report sections of a pytest run, with their headers."""
    found = re.findall(r"^(-+ mockllm -+\n.*?)(?=^[=_]{5,}|^/|^E )", output, re.M | re.S)
    return "".join(found)


def test_the_documented_failures_print_what_the_docs_show(pytester: pytest.Pytester) -> None:
    name, code = re.findall(r"```python failing=(\S+)\n(.*?)```", DOC, re.S)[0]
    (pytester.path / name).write_text(code)
    with running_server() as server:
        result = pytester.runpytest(
            "-p", "no:cacheprovider", "--mockllm-url", server.url, "--mockllm-run-id", "5be940"
        )  # fmt: skip
        session = next(e["session"] for e in server.requests() if "paris" in e["session"])
        transcript = httpx.get(f"{server.url}/_mockllm/transcript", params={"session": session})
        report = subprocess.run(
            [sys.executable, "-m", "mockllm", "report", str(server.log_file)],
            capture_output=True,
            text=True,
        )
        console = server.printed()
    result.assert_outcomes(failed=2)
    runs = {
        "pytest": sections(result.stdout.str()),
        "console": "".join(line + "\n" for line in console.splitlines() if line.startswith("#")),
        "transcript": transcript.text,
        "report": report.stdout,
    }
    for block, printed in runs.items():
        printed = re.sub(r"http://127\.0\.0\.1:\d+", "http://127.0.0.1:8000", printed)
        assert shown(block) == printed, f"docs/debugging.md output={block} should be:\n{printed}"
