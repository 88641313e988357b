"""docs/pytest.md lists every field of the log records users touch, and nothing else."""

from __future__ import annotations

import dataclasses
import re

import pytest

from mockllm.core.conversation import Message, ToolCall, ToolResult
from mockllm.errors import Finding
from mockllm.log.records import Check, LogEntry, LogResponse, Verdict
from tests.support import ROOT

DOC = (ROOT / "docs" / "pytest.md").read_text()


def attributes(cls: type) -> set[str]:
    """Dataclass fields and public properties: what a user can read."""
    fields = {f.name for f in dataclasses.fields(cls)}
    return fields | {n for n, v in vars(cls).items() if isinstance(v, property)}


def documented(heading: str) -> list[str]:
    """The first-column names of the table under `### heading`."""
    section = DOC.split(f"### {heading}\n", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\| `([\w.]+)` \|", section, re.M)


@pytest.mark.parametrize(
    ("heading", "cls"),
    [("`LogEntry`: one request", LogEntry), ("`LogResponse`: what mockllm answered", LogResponse)],
)
def test_every_field_of_a_record_is_documented(heading: str, cls: type) -> None:
    assert sorted(documented(heading)) == sorted(attributes(cls))


@pytest.mark.parametrize(
    ("heading", "classes"),
    [
        (
            "`Message`, `ToolCall`, `ToolResult`, `Finding`",
            (Message, ToolCall, ToolResult, Finding),
        ),
        ("`Verdict`, `Check`", (Verdict, Check)),
    ],
)
def test_every_field_of_the_parts_is_documented(heading: str, classes: tuple[type, ...]) -> None:
    expected = [f"{cls.__name__}.{name}" for cls in classes for name in attributes(cls)]
    assert sorted(documented(heading)) == sorted(expected)
