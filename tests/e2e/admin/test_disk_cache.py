"""What disk_cache spares a restart: unchanged scenario files skip YAML and the schema, and
known tool schemas skip the meta-schema check; any change is checked in full."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support import running_server

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


CLASSES_PROBE = """
import contextlib, dataclasses, hashlib, sys, types
if sys.argv[1] == "without":  # the package as it was: every class made by plain exec
    plain = types.ModuleType("mockllm.core.compiled")
    plain.remembered = contextlib.nullcontext
    sys.modules["mockllm.core.compiled"] = plain
import mockllm.cli
from mockllm.core.compiled import remembered
with remembered():  # as `mockllm serve` imports its server
    import mockllm.serving.server
made = hashlib.sha256()
for name in sorted(m for m in sys.modules if m.startswith("mockllm")):
    for cname, cls in sorted(vars(sys.modules[name]).items()):
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == name:
            for fname, f in sorted(vars(cls).items()):
                if isinstance(f, types.FunctionType) and f.__code__.co_filename == "<string>":
                    c = f.__code__
                    made.update(repr((cname, fname, c.co_code, c.co_consts, c.co_names,
                        c.co_varnames, c.co_flags, f.__annotations__, f.__defaults__)).encode())
print(made.hexdigest(), hasattr(dataclasses, "exec"))
"""


def classes(mode: str, cache: Path) -> str:
    environment = {**os.environ, "MOCKLLM_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", CLASSES_PROBE, mode], capture_output=True, text=True, env=environment
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_servers_dataclasses_are_the_same_from_the_code_file(tmp_path: Path) -> None:
    """core/compiled.py: every dataclass of the server, made from code compiled in this start
    or read back from the file, has the methods plain `exec` gives it."""
    plain = classes("without", tmp_path / "none")
    assert plain.endswith(" False\n")
    assert classes("with", tmp_path / "cache") == plain  # compiled, then written
    assert len(list((tmp_path / "cache" / "code").glob("*.marshal"))) == 1
    assert classes("with", tmp_path / "cache") == plain  # read back


def test_a_second_serve_reads_the_code_file_and_answers_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first `mockllm serve` writes the file; the next reads it, writes nothing, and its
    answer is byte for byte the first's."""
    monkeypatch.setenv("MOCKLLM_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "w.yaml").write_text(
        "turns: [{reply: {tool_calls: [{name: get_weather, arguments: {city: Paris}}]}}]"
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "What's the weather?"}]}
    answers, files = [], []
    for _ in range(2):
        with running_server(scenarios=(tmp_path / "w.yaml",)) as server:
            answers.append(httpx.post(f"{server.openai_url('w')}/chat/completions", json=body))
        (code,) = (tmp_path / "cache" / "code").glob("*.marshal")
        files.append((code.stat().st_ino, code.stat().st_mtime_ns))
    assert answers[0].status_code == 200, answers[0].text
    assert answers[0].content == answers[1].content
    assert files[0] == files[1], "an unchanged start rewrote the file"
