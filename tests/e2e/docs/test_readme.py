"""The README's code runs against a real server and prints what its comments say:
Python blocks in-process (the JavaScript ones: tests/node/test_node_readme.py); test files
(```python file=NAME blocks, here, in docs/pytest.md and docs/failure-modes.md) pass under
pytest."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from tests.support import ROOT, ServerProcess

pytest_plugins = ["pytester"]


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def python_blocks() -> list[str]:
    return blocks("python")


def claimed_output(code: str, comment: str) -> list[str]:
    """What `print(...)  # x` / `console.log(...); // x` lines say they print."""
    return re.findall(rf"^(?:print|console\.log)\(.*\);?\s+{comment} (.*)$", code, re.M)


def run_readme_blocks(url: str) -> None:
    """Execute each Python block against `url`; its output must be its claimed output."""
    assert python_blocks(), "the README should show how to point an SDK at mockllm"
    for code in python_blocks():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code.replace("http://127.0.0.1:8000", url), "README.md", "exec"), {})
        assert out.getvalue().splitlines() == claimed_output(code, "#")


def test_readme_python_blocks_run_and_print_what_they_claim(server: ServerProcess) -> None:
    run_readme_blocks(server.url)


def doc_test_files(doc: str) -> list[tuple[str, str]]:
    """(file name, code) of each ```python file=NAME block."""
    return re.findall(r"```python file=(\S+)\n(.*?)```", (ROOT / doc).read_text(), re.S)


@pytest.mark.parametrize("doc", ["README.md", "docs/pytest.md", "docs/failure-modes.md"])
def test_doc_test_files_pass_under_pytest(pytester: pytest.Pytester, doc: str) -> None:
    files = doc_test_files(doc)
    assert files, f"{doc} should show a pytest test"
    for name, code in files:
        (pytester.path / name).write_text(code)
    result = pytester.runpytest("-p", "no:cacheprovider")
    tests = sum(len(re.findall(r"^\s*def test_", code, re.M)) for _, code in files)
    outcomes = result.parseoutcomes()
    # Every test passes, a parametrized one once per case: at least one pass per function.
    assert not {"failed", "errors", "skipped"} & outcomes.keys(), result.stdout.str()
    assert outcomes.get("passed", 0) >= tests, result.stdout.str()


def test_readme_table_names_the_tools_each_bundled_scenario_expects() -> None:
    from mockllm.loading.loader import BUNDLED, load_paths

    rows = re.findall(r"^\| `([a-z0-9-]+)` \| ([^|]+) \|", (ROOT / "README.md").read_text(), re.M)
    shown = {name: re.findall(r"`([^`]+)`", tools) for name, tools in rows}
    assert shown == {s.name: list(s.tools()) for s in load_paths([BUNDLED])}
