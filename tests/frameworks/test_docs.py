"""docs/frameworks.md's recipes run against a real server and print what their comments
say: the Python ones here (under this group's network guard), the Vercel AI SDK one with
Node from tests/frameworks/vercel, where its packages are installed."""

from __future__ import annotations

import contextlib
import gc
import io
import re
import warnings

# Imported here rather than first inside exec(), where CPython 3.11 can fail an import
# with "AST constructor recursion depth mismatch".
import agents  # noqa: F401
import litellm  # noqa: F401
import pydantic_ai  # noqa: F401
import pytest
from langgraph.warnings import LangGraphDeprecatedSinceV10

from mockllm import Client
from tests.e2e.docs.test_readme import claimed_output
from tests.support import ROOT, ServerProcess, run_node_snippet

DOC = ROOT / "docs" / "frameworks.md"
VERCEL = ROOT / "tests" / "frameworks" / "vercel"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)


def fresh(code: str, server: ServerProcess) -> str:
    """The block pointed at this server, its sessions reset (a rerun starts clean)."""
    for name in re.findall(r'\.session\("([^"]+)"\)', code):
        Client(server.url).reset(name)
    return code.replace("http://127.0.0.1:8000", server.url)


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_recipe_prints_what_it_claims(server: ServerProcess, index: int) -> None:
    code = blocks("python")[index]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)  # see the recipe's gotchas
        exec(compile(fresh(code, server), f"{DOC.name} block {index}", "exec"), {})
        # A script's SDK clients close when it exits; this process lives on: collect them.
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    claimed = claimed_output(code, "#")
    assert claimed, "a recipe shows what it prints"
    assert out.getvalue().splitlines() == claimed


def test_vercel_recipe_prints_what_it_claims(server: ServerProcess) -> None:
    [code] = blocks("js")
    done = run_node_snippet(VERCEL, fresh(code, server))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == claimed_output(code, "//")
