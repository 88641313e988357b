"""The README's JavaScript blocks run with Node and the pinned SDKs against a real server and
print what their comments say (the Python blocks: tests/e2e/docs/test_readme.py)."""

from __future__ import annotations

from tests.e2e.docs.test_readme import blocks, claimed_output
from tests.support import ROOT, ServerProcess, run_node_snippet

NODE_DIR = ROOT / "tests" / "node"


def test_readme_node_blocks_run_and_print_what_they_claim(server: ServerProcess) -> None:
    js = blocks("js")
    assert len(js) >= 2, "the README should show both Node SDKs"
    for code in js:
        done = run_node_snippet(NODE_DIR, code.replace("http://127.0.0.1:8000", server.url))
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == claimed_output(code, "//")
