"""CHANGELOG.md keeps the Keep a Changelog form: `## [Unreleased]` first, then one
section per release, newest first, with its date; the newest is the version the package
says it is; entries sit under Added / Changed / Deprecated / Removed / Fixed / Security."""

from __future__ import annotations

import re
from datetime import date

from mockllm._version import __version__
from tests.support import ROOT

KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_the_changelog_has_a_section_per_release_newest_first_at_the_packages_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[([^\]]+)\](?: - (\S+))?$", text, re.M)
    assert re.findall(r"^## .*$", text, re.M) == [
        f"## [{v}]" + (f" - {d}" if d else "") for v, d in releases
    ]
    assert releases[0] == ("Unreleased", "")
    numbered = releases[1:]
    assert numbered and numbered[0][0] == __version__
    for version, day in numbered:
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
        date.fromisoformat(day)
    versions = [tuple(map(int, v.split("."))) for v, _ in numbered]
    assert versions == sorted(versions, reverse=True)
    kinds = re.findall(r"^### (.*)$", text, re.M)
    assert kinds and set(kinds) <= KINDS, set(kinds) - KINDS
