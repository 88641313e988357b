"""The image tier's figures (build time, size), printed at the end of the run."""

from __future__ import annotations

import pytest

FIGURES: list[str] = []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in FIGURES:
        terminalreporter.write_line(line)
