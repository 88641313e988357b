"""Hostile values in the misbehaviour keys (`refusal`, `empty`, `filter`, `blocked`, the
`misbehave` fault, their chaos kinds, `stream.keep_alive`): loaded or refused naming
file:line, never a traceback; once loaded, every wire answers without a 5xx, streamed or
not, the log stays readable and the server keeps serving."""

from __future__ import annotations

from typing import Any

import httpx
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllm.errors import ScenarioError
from mockllm.loading.loader import load_text
from tests.support import ServerProcess, json_paths, replaced
from tests.support.hypothesis_profiles import examples

YAML = {"content-type": "application/yaml"}
DOC: dict[str, Any] = {
    "name": "hostile-misbehaviour",
    "stream": {"keep_alive": {"comment": "ping", "before": 2, "between": 1, "blank_line": True}},
    "chaos": {"empty": 0.2, "refusal": 0.2, "seed": 3},
    "turns": [
        {"match": {"user": {"contains": "a"}}, "reply": {"refusal": "no"}},
        {"match": {"user": {"contains": "b"}}, "reply": {"empty": None}},
        {"match": {"user": {"contains": "c"}}, "reply": {"text": "x", "filter": "RECITATION"}},
        {"match": {"user": {"contains": "d"}, "api": "gemini"}, "reply": {"blocked": "SAFETY"}},
        {
            "match": {"user": {"contains": "e"}},
            "reply": {"text": "hi", "reasoning": "r"},
            "fault": {"misbehave": "reasoning_only", "times": 1},
        },
    ],
}
# Values an author could plausibly write in these keys, and some they should not.
plausible: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from(
        [
            None,
            "",
            "SAFETY",
            "RECITATION",
            "OTHER",
            "empty",
            "refusal",
            "content_filter",
            "reasoning_only",
            "gemini",
            ["gemini", "anthropic"],
            "\n",
            "x" * 300,
            0,
            -1,
            1.5,
            True,
            {},
            [],
            {"comment": "a\nb"},
            {"before": 10**6},
        ]
    ),
    st.text(max_size=12),
    st.integers(-5, 200),
)
# Where a request goes on each wire, and its body: (path after /s/NAME/SESSION, body, stream).
ASK = "a b c d e"
WIRES: list[tuple[str, dict[str, Any]]] = [
    ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": ASK}]}),
    ("/v1/responses", {"model": "m", "input": ASK}),
    (
        "/v1/messages",
        {"model": "claude-sonnet-4-6", "max_tokens": 9, "messages": [{"role": "user", "content": ASK}]},
    ),
    ("/v1beta/models/gemini-2.5-flash:generateContent", {"contents": [{"parts": [{"text": ASK}]}]}),
    ("/model/us.anthropic.claude-sonnet-4-6/converse", {"messages": [{"role": "user", "content": [{"text": ASK}]}]}),
]  # fmt: skip


@st.composite
def mutant(draw: st.DrawFn) -> str:
    doc: Any = DOC
    for _ in range(draw(st.integers(1, 2))):
        doc = replaced(doc, draw(st.sampled_from(json_paths(doc)[1:])), draw(plausible))
    return yaml.safe_dump(doc, allow_unicode=True)


@settings(
    max_examples=examples(200),
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(mutant())
def test_a_misbehaviour_key_loads_or_names_where_it_is_wrong(text: str) -> None:
    try:
        load_text(text, "hostile.yaml")
    except ScenarioError as e:
        for problem in e.problems:
            assert str(problem).startswith("hostile.yaml:"), problem
            assert problem.line is not None, problem


@settings(
    max_examples=examples(25),
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(text=mutant())
def test_a_posted_misbehaviour_is_served_on_every_wire_without_a_5xx(
    server: ServerProcess, text: str
) -> None:
    posted = httpx.post(f"{server.url}/_mockllm/scenarios", content=text, headers=YAML)
    assert posted.status_code in (200, 201, 400), posted.text
    if posted.status_code == 400:
        assert posted.json()["error"]["problems"], posted.text
        return
    name = posted.json()["name"]
    for path, body in WIRES:
        for stream in (False, True):
            url = f"{server.url}/s/{name}/hostile-mb{path}"
            if stream:
                url = url.replace(":generateContent", ":streamGenerateContent?alt=sse")
                url = url.replace("/converse", "/converse-stream")
                body = {**body, "stream": True} if "v1/" in path else body
            answer = httpx.post(url, json=body)
            assert answer.status_code < 500, (url, answer.text)
    log = server.http.get("/_mockllm/requests", params={"session": "hostile-mb"})
    assert log.status_code == 200 and isinstance(log.json(), list)
    assert server.http.get("/_mockllm/health").status_code == 200
