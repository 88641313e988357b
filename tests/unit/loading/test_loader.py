"""Scenario loading (in-process): the model it builds and the errors it explains."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockllm import ScenarioError, load_mapping, load_paths, load_text
from mockllm.core.conversation import ToolChoice
from mockllm.core.scenario import Reply, ScriptedCall, StreamConfig, TextMatch, Usage
from tests.support import BUNDLED


def problems(text: str) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        load_text(text, "s.yaml", "s")
    return [str(p) for p in caught.value.problems]


def test_builds_frozen_dataclasses() -> None:
    s = load_text(
        """
name: demo
description: "  what it tests  "
validation: off
stream: {text_chunk_chars: 3}
turns:
  - expect: {user: {contains: hi}, tool_choice: {tool: f}, tools: [f]}
    reply:
      text: a
      tool_calls:
        - {name: f, arguments: {x: [1, "é"]}}
        - {name: g, arguments: '{"bad'}
        - {name: h, id: call_1}
      usage: {output: 9}
  - reply: {text: b}
    repeat: true
""",
        "demo.yaml",
    )
    assert s.name == "demo" and s.description == "what it tests" and s.validation == "off"
    assert s.stream == StreamConfig(text_chunk_chars=3, argument_fragments=3)
    turn = s.turns[0]
    assert turn.expect is not None
    assert turn.expect.user == TextMatch("contains", "hi")
    assert turn.expect.tool_choice == ToolChoice("tool", "f")
    assert turn.reply == Reply(
        text="a",
        tool_calls=(
            ScriptedCall("f", '{"x":[1,"é"]}'),
            ScriptedCall("g", '{"bad'),
            ScriptedCall("h", "{}", "call_1"),
        ),
        finish="tool_calls",
        usage=Usage(None, 9),
    )
    assert s.turn(5) is s.turns[1]  # repeat
    with pytest.raises(AttributeError):
        s.name = "x"  # type: ignore[misc]


def test_yaml_and_mapping_build_the_same_objects() -> None:
    text = "name: same\nturns:\n  - reply: {text: hi, tool_calls: [{name: f, arguments: {a: 1}}]}\n"
    mapping = {
        "name": "same",
        "turns": [{"reply": {"text": "hi", "tool_calls": [{"name": "f", "arguments": {"a": 1}}]}}],
    }
    assert load_text(text, "<text>") == load_mapping(mapping, "<text>")


def test_yaml_12_booleans_keep_off_a_string() -> None:
    assert (
        load_text("validation: off\nturns: [{reply: {text: no}}]", "x.yaml", "x").validation
        == "off"
    )


def test_name_defaults_to_file_stem(tmp_path: Path) -> None:
    (tmp_path / "my-scenario.yml").write_text("turns: [{reply: {text: hi}}]")
    assert [s.name for s in load_paths([tmp_path])] == ["my-scenario"]


ERRORS = [
    (
        "unknown key",
        "turns:\n  - reply: {text: a}\n    replay: {}\n",
        "s.yaml:3:5: turns[0].replay: unknown key 'replay' (allowed here: expect, reply, fault, repeat, match, allow); did you mean 'reply'?",
    ),
    (
        "enum",
        "turns:\n  - reply:\n      finish: stpo\n",
        "s.yaml:3:15: turns[0].reply.finish: the string 'stpo' is not allowed here (allowed: stop, tool_calls, length, content_filter)",
    ),
    (
        "type",
        "turns:\n  - reply:\n      tool_calls: [{name: f, arguments: 5}]\n",
        "s.yaml:3:41: turns[0].reply.tool_calls[0].arguments: expected a mapping or a string, got the number 5",
    ),
    (
        "required",
        "turns:\n  - expect: {}\n",
        "s.yaml:2:5: turns[0]: missing required key 'reply' (only an HTTP fault replaces it)",
    ),
    ("missing turns", "name: x\n", "s.yaml:1:1: missing required key 'turns'"),
    (
        "text match key",
        "turns:\n  - expect: {user: {contain: x}}\n    reply: {}\n",
        "s.yaml:2:21: turns[0].expect.user.contain: unknown key 'contain' (allowed here: equals, contains, regex); did you mean 'contains'?",
    ),
    (
        "text match type",
        "turns:\n  - expect: {user: [x]}\n    reply: {}\n",
        "s.yaml:2:20: turns[0].expect.user: expected a string (exact match) or a mapping with one of: equals, contains, regex, got a list",
    ),
    (
        "bad name",
        "name: my scenario\nturns: [{reply: {}}]\n",
        "s.yaml:1:7: name: 'my scenario' may only use letters, digits, '.', '_' and '-', starting with a letter or digit",
    ),
    (
        "duplicate key",
        "turns:\n  - reply: {text: a}\n    reply: {text: b}\n",
        "s.yaml:3:5: turns[0].reply: duplicate key",
    ),
    (
        "yaml syntax",
        "turns:\n  - reply: {text: a\n",
        "s.yaml:3:1: invalid YAML: a `{...}` mapping is not closed: a `}` (or a `,` between its "
        "entries) is missing (the parser said: did not find expected ',' or '}' (while parsing a "
        "flow mapping))",
    ),
    (
        "a tab",
        "turns:\n\t- reply: {text: a}\n",
        "s.yaml:2:1: invalid YAML: a tab character: YAML indents with spaces only (the parser "
        "said: found character that cannot start any token (while scanning for the next token))",
    ),
    (
        "a list item out of line",
        "turns:\n  - reply: {text: a}\n    expect: {user: a}\n   - reply: {text: b}\n",
        "s.yaml:4:4: invalid YAML: this line is not lined up with the lines above it: the keys of "
        "one mapping, and the `-` of one list, start in the same column (the parser said: did not "
        "find expected '-' indicator (while parsing a block collection))",
    ),
    (
        "a key under-indented: indent it under reply",
        "turns:\n  - reply:\n    text: hi\n",
        "s.yaml:3:5: turns[0].text: unknown key 'text' (allowed here: expect, reply, fault, "
        "repeat, match, allow); `text` belongs inside `reply`: indent it under `reply:`",
    ),
    (
        "a key over-indented: one level up",
        "turns:\n  - reply:\n      text: hi\n      expect: {user: hi}\n",
        "s.yaml:4:7: turns[0].reply.expect: unknown key 'expect' (allowed here: text, reasoning, "
        "tool_calls, finish, usage, json, refusal, empty, filter, blocked, search_tools); `expect` belongs one level up, beside `reply:`: indent it less",
    ),
    ("empty", "", "s.yaml: empty file: a scenario needs at least 'turns'"),
    (
        "repeat not last",
        "turns:\n  - reply: {}\n    repeat: true\n  - reply: {}\n",
        "s.yaml:3:13: turns[0].repeat: only the last turn can repeat",
    ),
    (
        "bad regex",
        "turns:\n  - expect: {system: {regex: '(unclosed'}}\n    reply: {}\n",
        "s.yaml:2:30: turns[0].expect.system.regex: invalid regular expression: missing ) at position 9",
    ),
    (
        "results on turn 0",
        "turns:\n  - expect: {tool_results: [{contains: x}]}\n    reply: {}\n",
        "s.yaml:2:28: turns[0].expect.tool_results: turn 0 has no previous turn, so no tool results can answer it",
    ),
    (
        "more results than calls",
        "turns:\n  - reply: {tool_calls: [{name: f}]}\n  - expect: {tool_results: [{}, {}]}\n    reply: {}\n",
        "s.yaml:3:28: turns[1].expect.tool_results: 2 results expected, but turn 0 makes 1 call(s)",
    ),
]


@pytest.mark.parametrize(("label", "text", "expected"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_name_file_line_column_path_and_what_was_allowed(
    label: str, text: str, expected: str
) -> None:
    assert problems(text)[0] == expected


def test_all_problems_are_reported_at_once() -> None:
    found = problems("turns:\n  - reply: {finish: x}\n  - reply: {texts: y}\n")
    assert [p.split(": ")[0] for p in found] == ["s.yaml:2:21", "s.yaml:3:13"]


def test_loading_is_all_or_nothing(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text("turns: [{reply: {text: hi}}]")
    (tmp_path / "bad.yaml").write_text("turns: [{reply: {txt: hi}}]")
    (tmp_path / "also-good.yaml").write_text("name: good\nturns: [{reply: {}}]")
    with pytest.raises(ScenarioError) as caught:
        load_paths([tmp_path])
    messages = [str(p) for p in caught.value.problems]
    assert any("bad.yaml:1:18: turns[0].reply.txt: unknown key 'txt'" in m for m in messages)
    assert any(
        m.endswith(f"name: scenario 'good' is also defined at {tmp_path / 'also-good.yaml'}:1:1")
        for m in messages
    )


def test_mapping_errors_name_the_path() -> None:
    with pytest.raises(
        ScenarioError, match=r"^<mapping>: turns\[0\]\.reply\.finish: the string 'nope'"
    ):
        load_mapping({"name": "m", "turns": [{"reply": {"finish": "nope"}}]})


def test_bundled_library_loads() -> None:
    names = {s.name for s in load_paths([BUNDLED])}
    assert {"hello", "weather-single", "weather-parallel"} <= names


def test_rule_sets_are_no_scenarios_however_they_are_linked(tmp_path: Path) -> None:
    """The bundled harness rule sets are left out of a folder's scenarios, whether the
    folder is the bundled one, a link to it, or a link to one of its files; a link
    elsewhere is a scenario (each folder is resolved once per listing)."""
    from mockllm.loading.loader import RULE_SETS, scenario_files

    rule_set = next(RULE_SETS.glob("*.yaml"))
    (tmp_path / "own.yaml").write_text("turns: [{reply: {text: hi}}]")
    (tmp_path / "harness").symlink_to(RULE_SETS, target_is_directory=True)
    (tmp_path / "linked.yaml").symlink_to(rule_set)
    (tmp_path / "other.yaml").symlink_to(tmp_path / "own.yaml")
    found = {p.name for p in scenario_files([tmp_path])}
    assert found == {"own.yaml", "other.yaml"}
    assert rule_set.name not in {p.name for p in scenario_files([BUNDLED])}


def test_rule_sets_are_no_scenarios_when_the_bundle_itself_is_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout whose `scenarios` folder links elsewhere: its rule sets, listed through
    the link, are still left out (each file's folder is resolved, so RULE_SETS must be)."""
    from mockllm.loading import loader

    real = tmp_path / "real"
    (real / "harness").mkdir(parents=True)
    (real / "harness" / "tool.yaml").write_text("requests: []")
    (real / "own.yaml").write_text("turns: [{reply: {text: hi}}]")
    (tmp_path / "bundle").symlink_to(real, target_is_directory=True)
    monkeypatch.setattr(loader, "RULE_SETS", tmp_path / "bundle" / "harness")
    assert [p.name for p in loader.scenario_files([tmp_path / "bundle"])] == ["own.yaml"]
