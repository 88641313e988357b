""".ci/run, CI's entry point, runs `make lint`, `make image`, `make pythons`, `make frameworks` and then
`make test`; a lint
failure fails the run with the linter's own message and no tests run. Checked with stand-in make
targets, in a copy of the script: the real targets are the suite itself."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.support import ROOT

MAKEFILE = """\
lint:
\t@echo "lint ran"
\t@{lint}
image:
\t@echo "image ran"
pythons:
\t@echo "pythons ran"
frameworks:
\t@echo "frameworks ran"
test:
\t@echo "tests ran"
"""


def ci_run(tmp_path: Path, lint: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    (tmp_path / "Makefile").write_text(MAKEFILE.format(lint=lint))
    # Run as CI does, not as a sub-make of `make test` (MAKELEVEL would print directories).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    return subprocess.run(
        ["bash", ".ci/run"], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env
    )


def test_ci_runs_the_linters_then_the_tests(tmp_path: Path) -> None:
    done = ci_run(tmp_path, "true")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "lint ran",
        "image ran",
        "pythons ran",
        "frameworks ran",
        "tests ran",
    ]


def test_a_lint_failure_fails_ci_with_the_linters_message_and_runs_no_tests(
    tmp_path: Path,
) -> None:
    message = "mockllm/cli.py:1:1: F401 [*] `os` imported but unused"
    done = ci_run(tmp_path, f"echo '{message}' && exit 1")
    assert done.returncode != 0
    assert done.stdout.splitlines() == ["lint ran", message]


def test_the_makefile_lint_target_runs_every_linter() -> None:
    recipe = (ROOT / "Makefile").read_text().split("\nlint:", 1)[1].split("\n\n", 1)[0]
    for linter in ("ruff check", "ruff format --check", "mypy", "lint-imports"):
        assert f"$(BIN)/{linter}" in recipe, recipe
