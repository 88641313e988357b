"""What disk_cache spares a restart: unchanged scenario files skip YAML and the schema, and
known tool schemas skip the meta-schema check; any change is checked in full."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from mockllm.loading.loader import load_paths
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


SCHEMA_PROBE = """
import json, sys
from mockllm.core.validation import schema_problem
print(json.dumps([schema_problem(json.loads(sys.argv[1])), "jsonschema" in sys.modules]))
"""


def check_schema(schema: object, cache: Path) -> list[object]:
    environment = {**os.environ, "MOCKLLM_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", SCHEMA_PROBE, json.dumps(schema)],
        capture_output=True,
        text=True,
        env=environment,
    )
    assert done.returncode == 0, done.stderr
    result: list[object] = json.loads(done.stdout)
    return result


def test_a_tool_schema_checked_once_is_not_checked_again(tmp_path: Path) -> None:
    """A fresh server's first request with the same tools needs no jsonschema import."""
    good = {"type": "object", "properties": {"city": {"type": "string"}}}
    bad = {"type": "object", "properties": {"city": {"type": "text"}}}
    assert check_schema(good, tmp_path) == [None, True]
    assert check_schema(good, tmp_path) == [None, False]
    first = check_schema(bad, tmp_path)
    assert first[1] is True and "is not valid under any of the given schemas" in str(first[0])
    assert check_schema(bad, tmp_path) == [first[0], False]


MCP_SCENARIO = """mcp_servers:
  orders:
    tools:
      - name: lookup_order
        input_schema: {type: object, properties: {order_id: {type: %s}}}
        results: [{text: shipped}]
turns: [{reply: {text: hi}}]
"""


def test_a_scenario_with_mcp_tools_starts_without_jsonschema_the_second_time(
    tmp_path: Path,
) -> None:
    """Its tools' schemas passed once: a restart on the same file needs no meta-schema check
    (`mockllm serve` would otherwise import jsonschema at every start)."""
    (tmp_path / "m.yaml").write_text(MCP_SCENARIO % "string")
    first = load([tmp_path / "m.yaml"], tmp_path / "cache")
    again = load([tmp_path / "m.yaml"], tmp_path / "cache")
    assert first.stdout == "['m'] True True\n", first.stderr
    assert again.stdout == "['m'] False False\n", again.stderr


def test_a_bad_mcp_schema_is_reported_at_every_start_with_its_location(tmp_path: Path) -> None:
    scenario = tmp_path / "m.yaml"
    scenario.write_text(MCP_SCENARIO % "text")
    for _ in range(2):  # a schema that failed is never remembered as checked
        broken = load([scenario], tmp_path / "cache")
        assert broken.returncode == 1
        assert f"{scenario}:5:" in broken.stderr and "not a JSON Schema" in broken.stderr
        assert "input_schema.properties.order_id.type" in broken.stderr, broken.stderr
    scenario.write_text(MCP_SCENARIO % "string")
    assert load([scenario], tmp_path / "cache").returncode == 0
