"""The look `load_wires` takes before importing importlib.metadata: it may say yes when
no wire is declared (importlib.metadata then finds none), never no when one is."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from mockllm.providers import WIRES_GROUP, _may_declare, _other_finder


@pytest.fixture
def path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """sys.path holding only a fresh folder (and what the test appends)."""
    entries = [str(tmp_path)]
    monkeypatch.setattr(sys, "path", entries)
    # Only the standard finders: a library imported earlier in the same process (the
    # importlib_metadata backport, which OpenTelemetry and others import) adds a finder of
    # distributions, which the look rightly counts as "may declare" (the last test).
    standard = [f for f in sys.meta_path if not _other_finder(f)]
    monkeypatch.setattr(sys, "meta_path", standard)
    return entries


def declared(folder: Path, info: str, points: str) -> None:
    (folder / info).mkdir(parents=True)
    (folder / info / "entry_points.txt").write_text(points)


def test_no_distribution_declaring_the_group(path: list[str], tmp_path: Path) -> None:
    declared(tmp_path, "other-1.0.dist-info", "[console_scripts]\nother = other:main\n")
    (tmp_path / "bare-1.0.dist-info").mkdir()  # no entry points at all
    (tmp_path / "old-1.0.egg-info").write_text("Metadata-Version: 1.0\n")  # a file form
    path.append(str(tmp_path / "missing"))
    assert not _may_declare(WIRES_GROUP)


@pytest.mark.parametrize("info", ["echo-0.1.dist-info", "echo-0.1.egg-info", "Echo-0.1.DIST-INFO"])
def test_a_distribution_declaring_it(path: list[str], tmp_path: Path, info: str) -> None:
    declared(tmp_path, info, f"[{WIRES_GROUP}]\necho = echo_wire\n")
    assert _may_declare(WIRES_GROUP)


def test_what_it_cannot_look_into_counts_as_declaring(path: list[str], tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "wires.zip", "w") as archive:
        archive.writestr("x.py", "")
    assert not _may_declare(WIRES_GROUP)
    path.append(str(tmp_path / "wires.zip"))
    assert _may_declare(WIRES_GROUP)
    path[-1] = str(tmp_path / "echo.egg")
    assert _may_declare(WIRES_GROUP)


def test_another_finder_of_distributions_counts_as_declaring(
    path: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Finder:
        @staticmethod
        def find_distributions(*args: object) -> list[object]:
            return []

    assert not _may_declare(WIRES_GROUP)
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert _may_declare(WIRES_GROUP)
