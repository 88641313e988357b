"""docs/flavours.md and its Chinese translation (docs/zh/), and the Chinese quick start:
each Python block runs against a real server and prints what its comments say; the quick
start's test file passes under pytest."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from tests.e2e.docs.test_readme import claimed_output
from tests.support import ROOT, ServerProcess

pytest_plugins = ["pytester"]

DOCS = ["docs/flavours.md", "docs/zh/flavours.md", "docs/zh/README.md"]


def python_blocks(doc: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(), re.S)


@pytest.mark.parametrize("doc", DOCS)
def test_the_blocks_run_and_print_what_they_claim(server: ServerProcess, doc: str) -> None:
    blocks = python_blocks(doc)
    assert len(blocks) >= (2 if doc.endswith("README.md") else 6), doc
    for code in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code.replace("http://127.0.0.1:8000", server.url), doc, "exec"), {})
        claimed = claimed_output(code, "#")
        assert claimed and out.getvalue().splitlines() == claimed, code


def strip(code: str) -> str:
    """A block with the translation's own session names (…/ds-zh/…) made the English ones."""
    return re.sub(r"/(ds|qw|km|gl|db|mm|ms)-zh([/\"])", r"/\1\2", code)


def test_the_translation_keeps_every_block_and_source() -> None:
    english, chinese = (
        (ROOT / "docs/flavours.md").read_text(),
        (ROOT / "docs/zh/flavours.md").read_text(),
    )
    assert [strip(b) for b in python_blocks("docs/zh/flavours.md")] == python_blocks(
        "docs/flavours.md"
    )
    sources = set(re.findall(r"[\w.-]+/[\w.-]+#\d+", english))
    assert sources and sources <= set(re.findall(r"[\w.-]+/[\w.-]+#\d+", chinese))


def test_the_chinese_quick_start_passes_under_pytest(pytester: pytest.Pytester) -> None:
    files = re.findall(
        r"```python file=(\S+)\n(.*?)```", (ROOT / "docs/zh/README.md").read_text(), re.S
    )
    assert files
    for name, code in files:
        (pytester.path / name).write_text(code)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "mockllm")
    result.assert_outcomes(passed=2)
