"""Hostile values in the new request fields (JSON output asked: response_format, text.format,
output_config / output_format, generationConfig) and in the texts side requests, seeds and
keyed turns match on: through real HTTP, never a 5xx, every request logged, and the
server still serving (hypothesis)."""

from __future__ import annotations

from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import ServerProcess
from tests.support.doc_examples import examples_server_fixture
from tests.support.hypothesis_profiles import examples

EXAMPLES = examples(25)
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
SCENARIO = """
name: hostile-structured
validation: warn
include: [harness/gemini-cli, harness/qwen-code, harness/opencode]
side_requests:
  - name: json
    match: {json: true, user: {regex: "^(a|aa)+$"}}
    reply: {json: valid}
seed: [{regex: "^(x|xx)+y$"}]
turns:
  - match: {user: {regex: "^(w|ww)+x$"}}
    reply: {json: in_prose}
  - reply: {json: valid}
  - reply: {text: done}
    repeat: true
"""
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["type", "properties", "required", "enum", "schema", "format", "x"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=25,
)
TEXT = st.text(alphabet="axwy\u0000\ud7ff Got.", max_size=40)


server = examples_server_fixture("--validation", "warn", extra={"hostile-structured": SCENARIO})


def _bodies() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    def chat(fmt: Any, user: str, seed: str) -> tuple[str, dict[str, Any]]:
        messages = [
            {"role": "system", "content": user},
            {"role": "user", "content": user},
            {"role": "assistant", "content": seed},
            {"role": "user", "content": user},
        ]
        return "v1/chat/completions", {"model": "m", "messages": messages, "response_format": fmt}

    def responses(fmt: Any, user: str, seed: str) -> tuple[str, dict[str, Any]]:
        return "v1/responses", {"model": "m", "input": user, "instructions": seed, "text": fmt}

    def messages(fmt: Any, user: str, seed: str) -> tuple[str, dict[str, Any]]:
        body = {"model": "m", "max_tokens": 5, "system": seed}
        body["messages"] = [{"role": "user", "content": user or "u"}]
        return "v1/messages", {**body, "output_config": fmt, "output_format": fmt}

    def gemini(fmt: Any, user: str, seed: str) -> tuple[str, dict[str, Any]]:
        config = {"responseMimeType": "application/json", "responseJsonSchema": fmt}
        contents = [{"role": "user", "parts": [{"text": user or "u"}]}]
        body = {"contents": contents, "systemInstruction": {"parts": [{"text": seed}]}}
        return "v1beta/models/g:generateContent", {**body, "generationConfig": config}

    makers = (chat, responses, messages, gemini)
    found: st.SearchStrategy[tuple[str, dict[str, Any]]] = st.one_of(
        *(st.builds(f, JSON, TEXT, TEXT) for f in makers)
    )
    return found


def test_hostile_output_formats_and_texts(server: ServerProcess, session: str) -> None:
    seen = 0
    with httpx.Client(base_url=server.url, timeout=30) as http:

        @FUZZ
        @given(_bodies())
        def run(request: tuple[str, dict[str, Any]]) -> None:
            nonlocal seen
            route, body = request
            headers = {"anthropic-version": "2023-06-01"}
            r = http.post(f"/s/hostile-structured/{session}/{route}", json=body, headers=headers)
            assert r.status_code < 500, r.text
            assert r.headers["content-type"].startswith("application/json")
            r.json()
            seen += 1

        run()
    entries = server.requests(session=session)
    assert len(entries) == seen and all(e["server_error"] is None for e in entries)
    ok = httpx.post(
        server.openai_url("structured", session + "-after") + "/chat/completions",
        json={
            "model": "m",
            "messages": [{"role": "user", "content": "x"}],
            "response_format": {"type": "json_object"},
        },
    )
    assert ok.status_code == 200
