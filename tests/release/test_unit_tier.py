"""tests/unit starts without the SDK stack: collected in a process where importing an SDK
fails, it collects; an end-to-end file in the same process does not (so the block works)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support import ROOT

# Runs pytest with these imports refused. Plugin autoloading is off because the venv's
# framework plugins (langsmith's) import an HTTP stack of their own; a `make unit` venv
# has them too, but they are not the suite's to keep out.
BLOCKED = """
import sys, pytest
SDKS = ("openai", "anthropic", "google", "httpcore2", "httpx2")
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in SDKS:
            raise ImportError(f"tests/unit imported {name}")
sys.meta_path.insert(0, Refuse())
sys.exit(pytest.main(sys.argv[1:]))
"""


def collect(path: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    argv = ["-c", BLOCKED, "--collect-only", "-q", "-p", "hypothesis", "-p", "no:cacheprovider"]
    return subprocess.run(
        [sys.executable, *argv, path], cwd=ROOT, env=env, capture_output=True, text=True
    )


def test_the_unit_tier_collects_without_an_sdk() -> None:
    done = collect("tests/unit")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tests/unit/core/test_engine.py::" in done.stdout


def test_an_end_to_end_file_does_not() -> None:
    done = collect("tests/e2e/wires/test_chat_completions.py")
    assert done.returncode != 0
    assert "imported openai" in done.stdout
