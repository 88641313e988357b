"""A restart on unchanged scenario files skips YAML and the schema; any change is checked in full."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from mockllm.loader import load_paths
names = sorted(s.name for s in load_paths(sys.argv[1:]))
print(names, "yaml" in sys.modules, "jsonschema" in sys.modules)
"""


def load(paths: list[Path], cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "MOCKLLM_CACHE_DIR": str(cache), **env}
    return subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, paths)],
        capture_output=True,
        text=True,
        env=environment,
    )


def test_second_load_needs_neither_yaml_nor_jsonschema(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "turns: [{reply: {text: hi, tool_calls: [{name: f, arguments: {day: 2024-01-01}}]}}]"
    )
    first = load([tmp_path / "a.yaml"], tmp_path / "cache")
    again = load([tmp_path / "a.yaml"], tmp_path / "cache")
    assert first.stdout == "['a'] True True\n", first.stderr
    assert again.stdout == "['a'] False False\n", again.stderr
    assert len(list((tmp_path / "cache" / "scenarios").glob("*.json"))) == 1


def test_a_changed_file_is_checked_in_full_with_its_location(tmp_path: Path) -> None:
    scenario = tmp_path / "a.yaml"
    scenario.write_text("turns: [{reply: {text: hi}}]")
    assert load([scenario], tmp_path / "cache").returncode == 0
    scenario.write_text("turns: [{reply: {txt: hi}}]")
    broken = load([scenario], tmp_path / "cache")
    assert broken.returncode == 1
    assert f"{scenario}:1:18: turns[0].reply.txt: unknown key 'txt'" in broken.stderr


def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("turns: [{reply: {text: hi}}]")
    load([tmp_path / "a.yaml"], tmp_path / "cache", MOCKLLM_NO_CACHE="1")
    assert not (tmp_path / "cache").exists()


def test_yaml_dates_stay_strings(tmp_path: Path) -> None:
    from mockllm import load_text

    scenario = load_text(
        "turns: [{reply: {tool_calls: [{name: f, arguments: {day: 2024-01-01}}]}}]", "d.yaml", "d"
    )
    assert scenario.turns[0].reply.tool_calls[0].arguments == '{"day":"2024-01-01"}'
