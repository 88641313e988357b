"""Hostile scenario files: any text gives a scenario or an error that names file:line, never a
hang or a traceback; and each scenario finding of issue 10, checked at load."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllm.errors import ScenarioError
from mockllm.loading.loader import load_paths, load_text
from tests.support import ServerProcess, json_paths, replaced
from tests.support.hypothesis_profiles import examples

YAML = {"content-type": "application/yaml"}
VALID: dict[str, Any] = {
    "name": "h",
    "chaos": {"429": 0.1, "seed": 3},
    "turns": [
        {
            "expect": {"user": {"regex": "^hi"}},
            "reply": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
            "fault": {"truncate": {"after_bytes": 10}, "disconnect": "close", "times": 1},
        },
        {
            "reply": {"text": "done"},
            "repeat": True,
            "fault": {"content_filter": {"category": "violence", "severity": "low"}, "times": 1},
        },
    ],
}
# The keys an agent-CLI scenario adds (side requests, seeds, keyed turns, structured output,
# allowances, rule sets): a second document to mutate, so their parsers meet hostile values.
AGENT: dict[str, Any] = {
    "name": "agent",
    "include": ["harness/opencode"],
    "seed": ["Got it.", {"contains": "Ok"}],
    "allow": {"calls_answered": "the harness drops calls on purpose"},
    "side_requests": [
        {
            "name": "title",
            "match": {"system": {"contains": "title"}, "tools": "none"},
            "reply": {"text": "T"},
        },
        {"name": "router", "match": {"model": {"regex": "^fl"}}, "reply": {"json": "valid"}},
    ],
    "turns": [
        {
            "match": {"user": {"contains": "weather"}},
            "reply": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        },
        {"reply": {"refusal": "no"}, "allow": {"expectations_met": "scripted"}},
        {"reply": {"json": "missing_required"}, "repeat": True},
    ],
}
scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(), st.text(max_size=12)
)
node = st.recursive(
    scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers(0, 600)), inner, max_size=3),
    ),
    max_leaves=8,
)
syntax = st.text(alphabet=list("{}[]:-&*!|>'\"#,?%@`\n\t ab0\\\u00e9"), max_size=80)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    doc: Any = draw(st.sampled_from([VALID, AGENT]))
    for _ in range(draw(st.integers(1, 2))):
        doc = replaced(doc, draw(st.sampled_from(json_paths(doc))), draw(node))
    return yaml.safe_dump(doc, allow_unicode=draw(st.booleans()))


@st.composite
def bombs(draw: st.DrawFn) -> str:
    width, levels = draw(st.integers(2, 12)), draw(st.integers(1, 9))
    lines = [
        "name: b",
        "turns: [{reply: {text: hi}}]",
        "x0: &a0 [" + ", ".join(["x"] * width) + "]",
    ]
    for level in range(1, levels):
        lines.append(f"x{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


deep = st.integers(1, 5000).map(lambda n: "turns: " + "[" * n + "]" * n)


@settings(
    max_examples=examples(60),
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(st.one_of(mutated(), syntax, bombs(), deep))
def test_any_text_loads_or_names_where_it_is_wrong(text: str) -> None:
    try:
        load_text(text, "hostile.yaml")
    except ScenarioError as e:
        for problem in e.problems:
            assert str(problem).startswith("hostile.yaml"), problem
            assert problem.line is not None or problem.message.startswith("empty file"), problem


# Values an author could plausibly write, so more mutants load and reach the matchers.
plausible: st.SearchStrategy[Any] = st.one_of(
    st.text(max_size=16),
    st.sampled_from(
        ["(a+)+$", "", "none", "valid", "in_prose", "not_json", "x" * 300, [], {}, None, 0]
    ),
    st.sampled_from(["contains", "regex", "equals"]).flatmap(
        lambda how: st.fixed_dictionaries({how: st.sampled_from(["", ".*", "(", "Ok", "title"])})
    ),
)


@st.composite
def agent_mutant(draw: st.DrawFn) -> str:
    doc = replaced(AGENT, draw(st.sampled_from(json_paths(AGENT))), draw(plausible))
    return yaml.safe_dump(doc, allow_unicode=True)


@settings(
    max_examples=examples(40),
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(text=agent_mutant())
def test_a_hostile_scenario_posted_then_asked_never_gets_a_5xx(
    server: ServerProcess, text: str
) -> None:
    # Loaded or refused, never a 5xx; once loaded, the side-request and keyed-turn matchers
    # meet a title request, a router request and a user turn without a 5xx either.
    r = httpx.post(f"{server.url}/_mockllm/scenarios", content=text, headers=YAML)
    assert r.status_code in (200, 201, 400), r.text
    if r.status_code == 400:
        assert r.json()["error"]["problems"], r.text
        return
    name = r.json()["name"]
    base = f"{server.url}/s/{name}/hostile/v1/chat/completions"
    for system, model in (("You are a title generator", "m"), ("route", "flash"), ("", "m")):
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": "the weather in Paris?"})
        answer = httpx.post(base, json={"model": model, "messages": messages})
        assert answer.status_code < 500, answer.text
    assert server.http.get("/_mockllm/health").status_code == 200


def test_integer_chaos_keys_are_status_codes(server: ServerProcess, session: str) -> None:
    scenario = "name: int-chaos\nchaos: {429: 1.0}\nturns: [{reply: {text: hi}}]\n"
    assert load_text(scenario).chaos is not None
    r = httpx.post(f"{server.url}/_mockllm/scenarios", content=scenario, headers=YAML)
    assert r.status_code in (200, 201)
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    url = f"{server.url}/s/int-chaos/{session}/v1/chat/completions"
    assert httpx.post(url, json=body).status_code == 429


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            '{http: {status: 429, headers: {x-why: "a\\r\\nb"}}}',
            "s.yaml:3:70: turns[0].fault.http.headers.x-why: the value 'a\\r\\nb' holds a line "
            "break or control character, which HTTP header values cannot",
        ),
        (
            "{http: {status: 429}, stall: true}",
            "s.yaml:3:61: turns[0].fault.stall: http and stall cannot combine: http leaves "
            "nothing for stall",
        ),
        (
            "{content_filter: {category: violence}, http: {status: 500}}",
            "s.yaml:3:49: turns[0].fault.content_filter: http and content_filter cannot "
            "combine: http leaves nothing for content_filter",
        ),
        (
            "{content_filter: {category: gore}}",
            "s.yaml:3:60: turns[0].fault.content_filter.category: the string 'gore' is not "
            "allowed here (allowed: hate, jailbreak, self_harm, sexual, violence)",
        ),
        (
            "{disconnect: close}",
            "s.yaml:3:45: turns[0].fault.disconnect: disconnect only says how a truncated reply "
            "ends: add truncate",
        ),
        (
            "{stall: true, truncate: {after_bytes: 3}}",
            "s.yaml:3:56: turns[0].fault.truncate: stall and truncate cannot combine: stall "
            "leaves nothing for truncate",
        ),
    ],
)
def test_faults_that_cannot_work_are_refused_at_load(fault: str, message: str) -> None:
    text = f"name: f\nturns:\n  - {{reply: {{text: hi}}, fault: {fault}}}\n"
    with pytest.raises(ScenarioError) as caught:
        load_text(text, "s.yaml")
    assert [str(p) for p in caught.value.problems] == [message]


def test_bytes_that_are_not_utf8_name_line_and_column_from_file_and_post(
    tmp_path: Path, server: ServerProcess
) -> None:
    raw = "name: latin\ndescription: café\nturns: [{reply: {text: hi}}]\n".encode("latin-1")
    (tmp_path / "latin.yaml").write_bytes(raw)
    with pytest.raises(ScenarioError) as caught:
        load_paths([tmp_path / "latin.yaml"])
    message = "not UTF-8: byte 0xe9 cannot be read; save the file as UTF-8"
    assert str(caught.value) == f"{tmp_path / 'latin.yaml'}:2:17: {message}"
    r = httpx.post(f"{server.url}/_mockllm/scenarios", content=raw, headers=YAML)
    assert r.status_code == 400
    assert r.json()["error"]["problems"] == [f"<POST /_mockllm/scenarios>:2:17: {message}"]


def test_duplicate_names_give_both_places(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("name: same\nturns: [{reply: {text: hi}}]\n")
    (tmp_path / "b.yaml").write_text("# the copy\n\nname: same\nturns: [{reply: {text: hi}}]\n")
    with pytest.raises(ScenarioError) as caught:
        load_paths([tmp_path])
    assert str(caught.value) == (
        f"{tmp_path / 'b.yaml'}:3:1: name: scenario 'same' is also defined at "
        f"{tmp_path / 'a.yaml'}:1:1"
    )


def test_validate_refuses_an_alias_bomb_quickly_in_one_line(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    levels = [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 9)]
    bomb.write_text(
        "name: bomb\nturns: [{reply: {text: hi}}]\nl0: &l0 [x, x]\n" + "\n".join(levels)
    )
    result = subprocess.run(
        [sys.executable, "-m", "mockllm", "validate", str(bomb)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"{bomb}:4:10: aliases expand this document past 10000 nodes (the limit); the first "
        "alias of a list or mapping, *l0, is here",
        "1 problem in 1 file; 0 files ok",
    ]
