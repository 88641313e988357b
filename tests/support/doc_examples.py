"""The ```yaml example=NAME blocks of docs/scenarios.md, served by a real `mockllm serve`:
the tests drive the scenarios the docs show, so a doc example that stops working fails."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support import ROOT, ServerProcess, running_server

DOC = ROOT / "docs" / "scenarios.md"


def examples() -> dict[str, str]:
    found = re.findall(r"```yaml example=(\S+)\n(.*?)```", DOC.read_text(), re.S)
    return dict(found)


@contextmanager
def example_server(*args: str, extra: dict[str, str] | None = None) -> Iterator[ServerProcess]:
    """A server with every doc example (and `extra` scenarios: name → YAML) loaded."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in {**examples(), **(extra or {})}.items():
            (Path(tmp) / f"{name}.yaml").write_text(text)
        with running_server(*args, scenarios=(Path(tmp),)) as server:
            yield server


def examples_server_fixture(*args: str, extra: dict[str, str]) -> Any:
    """A module's own `server` fixture: every doc example and the module's `extra` scenarios,
    one server per module (`server = examples_server_fixture(extra=EXTRA)`)."""

    @pytest.fixture(scope="module")
    def server() -> Iterator[ServerProcess]:
        with example_server(*args, extra=extra) as s:
            yield s

    return server
