"""Hostile clients: whatever body arrives on a model route, mockllm answers it, logs it, and
keeps serving. Generated bodies (hypothesis, derandomized), sent over real HTTP to a real
`mockllm serve --log` process, on every model route × stream × with and without a scenario.

Invariants per request: a 2xx, or a 4xx in the provider's JSON error shape with a JSON
content type; never a 5xx, never a connection cut; exactly one new log entry for it. After
the run: the log route still answers, the JSONL file parses with a strict parser, the server
printed no traceback, and a good request is still answered correctly.

`make fuzz` runs the same properties with MOCKLLM_FUZZ_EXAMPLES (10 000) examples per case
and prints the count of each status.
"""

from __future__ import annotations

import collections
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from botocore.eventstream import EventStreamBuffer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllm.providers.bedrock import ERROR_TYPE_SUFFIX
from tests.support import ServerProcess, json_paths, replaced, running_server
from tests.support.hypothesis_profiles import examples

EXAMPLES = examples(25)
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

SCENARIO = """\
name: hostile
description: a generated tool call, then text for ever
validation: warn
turns:
  - expect: {user: {regex: "^(w|ww)+x$"}}
    reply:
      tool_calls: [{name: get_weather, generate: valid}]
  - reply: {text: done}
    repeat: true
"""

# Requests that name no scenario get this one (--default).
DEFAULT = "name: plain\nturns: [{reply: {text: hi}, repeat: true}]\n"

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
GEMINI = "v1beta/models/gemini-2.5-flash:generateContent"
CONVERSE = "model/us.anthropic.claude-sonnet-4-6/converse"
INVOKE = "model/us.anthropic.claude-sonnet-4-6/invoke-with-response-stream"
BEDROCK = (CONVERSE, CONVERSE + "-stream", INVOKE)
_VERTEX = "v1/projects/p/locations/us-central1/publishers"
VERTEX_GEMINI = f"{_VERTEX}/google/models/gemini-2.5-flash:streamGenerateContent"
VERTEX_CLAUDE = f"{_VERTEX}/anthropic/models/claude-sonnet-4-6:rawPredict"
GOOGLE = (GEMINI, VERTEX_GEMINI)  # Google's error shape names a status
CONVERSE_BODY = {
    "system": [{"text": "be brief"}],
    "messages": [
        {"role": "user", "content": [{"text": "wwwx"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {}}}],
        },
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "sunny"}]}}],
        },
    ],
    "toolConfig": {
        "tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": SCHEMA}}}],
        "toolChoice": {"auto": {}},
    },
    "inferenceConfig": {"maxTokens": 100},
}
BASES: dict[str, dict[str, Any]] = {
    "v1/chat/completions": {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "wwwx"},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}],
        "tool_choice": "auto",
        "stream_options": {"include_usage": True},
    },
    "v1/responses": {
        "model": "gpt-4o-mini",
        "instructions": "be brief",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "wwwx"}]},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": "{}",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        ],
        "tools": [{"type": "function", "name": "get_weather", "parameters": SCHEMA}],
        "tool_choice": "auto",
    },
    "v1/messages": {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "system": "be brief",
        "messages": [
            {"role": "user", "content": "wwwx"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}],
            },
        ],
        "tools": [{"name": "get_weather", "input_schema": SCHEMA}],
        "tool_choice": {"type": "auto"},
    },
    GEMINI: {
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "wwwx"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {}}}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "get_weather", "response": {"r": "x"}}}],
            },
        ],
        "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": SCHEMA}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
    },
}
BASES[CONVERSE] = BASES[CONVERSE + "-stream"] = CONVERSE_BODY
BASES[INVOKE] = {k: v for k, v in BASES["v1/messages"].items() if k != "model"} | {
    "anthropic_version": "bedrock-2023-05-31"
}
BASES[VERTEX_GEMINI] = BASES[GEMINI]
BASES[VERTEX_CLAUDE] = {k: v for k, v in BASES["v1/messages"].items() if k != "model"} | {
    "anthropic_version": "vertex-2023-10-16"
}
ROUTES = list(BASES)
HISTORY = {"v1/responses": "input", GEMINI: "contents", VERTEX_GEMINI: "contents"}

# Strings a hostile client sends: lone surrogates, control characters, odd scripts, long runs.
hostile_text = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["\ud800", "a\udfff", "\x00", "\r\n", "\u202e", "\ufeff", "💥" * 3, "w" * 40]),
    st.builds(lambda s, n: s * n, st.sampled_from(["a", "w", "\\u", "{"]), st.integers(0, 3000)),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    hostile_text,
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(hostile_text, inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn, route: str) -> bytes:
    """A valid body (the first turn, or one with history) with up to two parts replaced."""
    body = dict(BASES[route], stream=draw(st.booleans()))
    if draw(st.booleans()):
        history = HISTORY.get(route, "messages")
        body[history] = [m for m in body[history] if m.get("role") == "user"][:1]
    for _ in range(draw(st.integers(0, 2))):
        path = draw(st.sampled_from(json_paths(body)))
        body = replaced(body, path, draw(values))
    return json.dumps(body).encode()  # ensure_ascii: a lone surrogate goes out as \ud800


@st.composite
def raw_hostile(draw: st.DrawFn, route: str) -> bytes:
    """Bytes no JSON encoder would write: deep nesting, NaN, cut bodies, invalid UTF-8."""
    good = json.dumps(dict(BASES[route], stream=draw(st.booleans()))).encode()
    depth = draw(st.integers(1, 20_000))
    return draw(
        st.sampled_from(
            [
                b"[" * depth + b"]" * depth,
                b'{"a":' * depth + b"1" + b"}" * depth,
                good.replace(b'"max_tokens": 100', b'"max_tokens": NaN').replace(
                    b'"model":', b'"temperature": Infinity, "model":'
                ),
                good[: draw(st.integers(0, len(good)))],
                good.replace(b"wwwx", b"\xff\xfe"),
                good.replace(b"wwwx", b"\xed\xa0\x80"),  # a surrogate encoded as UTF-8
                draw(st.binary(max_size=64)),
            ]
        )
    )


def bodies(route: str) -> st.SearchStrategy[bytes]:
    return st.one_of(mutated(route), raw_hostile(route))


LAST_SEQ = 0
COUNTS: dict[str, collections.Counter[int]] = collections.defaultdict(collections.Counter)


@pytest.fixture(scope="module")
def hostile_server() -> Iterator[ServerProcess]:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "hostile.yaml").write_text(SCENARIO)
        Path(tmp, "plain.yaml").write_text(DEFAULT)
        with running_server("--default", "plain", scenarios=(Path(tmp),)) as server:
            yield server
            _after_all(server)
    if os.environ.get("MOCKLLM_FUZZ_EXAMPLES"):
        print("\nstatus counts (never 5xx, never a cut connection):")
        for case, counts in sorted(COUNTS.items()):
            shown = ", ".join(f"{status}: {n}" for status, n in sorted(counts.items()))
            print(f"  {case}: {sum(counts.values())} requests: {shown}")


def _after_all(server: ServerProcess) -> None:
    log = server.http.get("/_mockllm/requests", params={"since": max(0, LAST_SEQ - 50)})
    assert log.status_code == 200 and len(log.json()) == min(50, LAST_SEQ)
    lines = server.log_file.read_text("utf-8").splitlines()  # every entry, strictly parsed
    entries = [json.loads(line, parse_constant=_refuse) for line in lines]
    assert [e["seq"] for e in entries] == list(range(1, LAST_SEQ + 1))
    assert [e["server_error"] for e in entries if e["server_error"]] == []
    good = httpx.post(
        f"{server.url}/s/hostile/after/v1/chat/completions",
        json={
            "model": "m",
            "messages": [{"role": "user", "content": "wwx"}],
            "tools": BASES["v1/chat/completions"]["tools"],
        },
    )
    assert good.status_code == 200
    call = good.json()["choices"][0]["message"]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"])["city"]


def _refuse(constant: str) -> Any:
    raise ValueError(f"{constant} in the log")


class Checker:
    def __init__(
        self, server: ServerProcess, http: httpx.Client, route: str, scenario: bool
    ) -> None:
        self.server, self.http, self.route, self.scenario = server, http, route, scenario
        self.sent = 0
        self.case = f"{route} {'with' if scenario else 'without'} scenario"

    def __call__(self, body: bytes) -> None:
        self.sent += 1
        path = f"/s/hostile/h{self.sent}/{self.route}" if self.scenario else f"/{self.route}"
        with self.http.stream("POST", path, content=body, headers=self._headers()) as r:
            data = r.read()  # a cut connection raises here
        COUNTS[self.case][r.status_code] += 1
        kind = r.headers.get("content-type", "")
        assert r.status_code < 500, data[:300]
        if r.status_code >= 400 and self.route in BEDROCK:  # {"message"}, named by a header
            assert kind.startswith("application/json"), (r.status_code, kind)
            assert r.headers["x-amzn-errortype"].endswith("Exception" + ERROR_TYPE_SUFFIX)
            assert isinstance(json.loads(data)["message"], str)
        elif r.status_code >= 400:
            assert kind.startswith("application/json"), (r.status_code, kind)
            error = json.loads(data)["error"]
            kind_of = "status" if self.route in GOOGLE else "type"
            assert isinstance(error["message"], str) and isinstance(error[kind_of], str)
        elif kind.startswith("application/vnd.amazon.eventstream"):
            buffer = EventStreamBuffer()  # botocore's own parser: both CRCs checked
            buffer.add_data(data)
            assert list(buffer)[-1].headers[":message-type"] == "event"
        else:
            assert kind.startswith(("application/json", "text/event-stream")), kind
        global LAST_SEQ  # every request of the module goes through a Checker, in turn
        new = self.server.requests(since=LAST_SEQ)
        assert [e["path"] for e in new] == [path], new
        LAST_SEQ = new[-1]["seq"]

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self.route == "v1/messages":
            headers["anthropic-version"] = "2023-06-01"
        return headers


@pytest.mark.parametrize("scenario", [True, False], ids=["scenario", "no-scenario"])
@pytest.mark.parametrize("route", ROUTES)
def test_hostile_bodies_get_an_answer_and_a_log_line(
    hostile_server: ServerProcess, route: str, scenario: bool
) -> None:
    with httpx.Client(base_url=hostile_server.url, timeout=30) as http:
        check = Checker(hostile_server, http, route, scenario)

        @FUZZ
        @given(bodies(route))
        def run(body: bytes) -> None:
            check(body)

        run()
