"""The README's code runs against a real server, and prints what its comments say."""

from __future__ import annotations

import contextlib
import io
import re

from .support import ROOT, ServerProcess


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def run_readme_blocks(url: str) -> None:
    """Execute each Python block against `url`; its output must be its `print(...)  # …` comments."""
    blocks = python_blocks()
    assert blocks, "the README should show how to point an SDK at mockllm"
    for code in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code.replace("http://127.0.0.1:8000", url), "README.md", "exec"), {})
        assert out.getvalue().splitlines() == re.findall(r"^print\(.*\)\s+# (.*)$", code, re.M)


def test_readme_python_blocks_run_and_print_what_they_claim(server: ServerProcess) -> None:
    run_readme_blocks(server.url)
