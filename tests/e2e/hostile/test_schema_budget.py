"""Hostile JSON Schemas from a request or a scenario (issue 35; docs/security.md, "JSON
Schemas"), through a real `mockllm serve`: each finding of the probe that held the server or
crashed a request, now answered (a 200, or the provider's 400 naming the limit and its
flag) while the server keeps serving. The figures before and after are in the issue's
closing note; no test here times anything but the client's own timeout, which a server
held by the old code ran into."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.hostile.test_hostile_schemas import output_bodies
from tests.support import BUNDLED, ServerProcess, running_server

# A server held by a schema once answered after minutes or never: past this, a test fails.
TIMEOUT = 60
SCENARIOS = {
    "generated-args": """\
name: generated-args
validation: off
turns:
  - reply: {tool_calls: [{name: f, generate: valid}]}
    repeat: true
""",
    "json-reply": """\
name: json-reply
validation: off
turns:
  - reply: {json: valid}
    repeat: true
""",
    "unique-args": """\
name: unique-args
mcp_servers:
  s:
    tools:
      - name: t
        input_schema:
          type: object
          properties: {xs: {type: array, uniqueItems: true}}
        results: [{text: ok}]
turns: [{reply: {text: hi}, repeat: true}]
""",
}
GEMINI = "v1beta/models/gemini-2.5-flash"


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with _server() as s:
        yield s


def _server(*args: str) -> Any:
    tmp = Path(tempfile.mkdtemp())
    for name, text in SCENARIOS.items():
        (tmp / f"{name}.yaml").write_text(text)
    return running_server("--validation", "warn", *args, scenarios=(BUNDLED, tmp))


def _post(server: ServerProcess, path: str, body: dict[str, Any]) -> httpx.Response:
    headers = {"anthropic-version": "2023-06-01", "x-api-key": "k"}
    return httpx.post(f"{server.url}/{path}", json=body, headers=headers, timeout=TIMEOUT)


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "STRING"}
    for _ in range(depth):
        schema = {"type": "OBJECT", "properties": {"a": schema}, "required": ["a"]}
    return schema


def _gemini(schema: Any, field: str = "responseSchema") -> dict[str, Any]:
    config = {"responseMimeType": "application/json", field: schema}
    return {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": config}


def _fan_out(levels: int, width: int = 2) -> dict[str, Any]:
    """An allOf chain through $defs: 2 KB of schema, width ** levels parts to flatten."""
    defs: dict[str, Any] = {"l0": {"type": "object"}}
    for i in range(1, levels + 1):
        defs[f"l{i}"] = {"allOf": [{"$ref": f"#/$defs/l{i - 1}"}] * width}
    top = f"#/$defs/l{levels}"
    return {"type": "object", "$defs": defs, "properties": {"x": {"$ref": top}}, "required": ["x"]}


def _tool_call(schema: Any) -> dict[str, Any]:
    tool = {"type": "function", "function": {"name": "f", "parameters": schema}}
    return {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": [tool]}


def _refused_for_work(r: httpx.Response) -> None:
    assert r.status_code == 400, r.text
    assert "--max-schema-work" in r.json()["error"]["message"]


# --- 1: Gemini's responseSchema, converted once per node -------------------------------------


@pytest.mark.parametrize("route", [":generateContent", ":streamGenerateContent", ":countTokens"])
def test_a_deeply_nested_gemini_response_schema_is_answered(
    server: ServerProcess, session: str, route: str
) -> None:
    """Depth 21 took 4.7 s (10.7 s here) and depth 150 never answered: each level through
    `properties` was converted twice. Now both are converted once per node."""
    for depth in (21, 150):
        r = _post(server, f"s/hello/{session}/{GEMINI}{route}", _gemini(_nested(depth)))
        assert r.status_code == 200, r.text
    assert server.http.get("/_mockllm/health").status_code == 200


def test_a_gemini_schema_past_the_budget_is_the_providers_400_naming_the_flag(
    session: str,
) -> None:
    wide = {"type": "OBJECT", "properties": {f"p{i}": {"type": "STRING"} for i in range(3000)}}
    with _server("--max-schema-work", "1000") as small:
        r = _post(small, f"s/hello/{session}/{GEMINI}:generateContent", _gemini(wide))
        _refused_for_work(r)
        assert r.json()["error"]["status"] == "INVALID_ARGUMENT"
        entry = small.last(session)
        assert entry["response"]["status"] == 400 and entry["server_error"] is None
        narrow = _gemini({"type": "OBJECT", "properties": {"a": {"type": "STRING"}}})
        ok = _post(small, f"s/hello/{session}-ok/{GEMINI}:generateContent", narrow)
        assert ok.status_code == 200, ok.text


# --- 2: a tool schema's pattern, bounded wherever it runs --------------------------------------

HOSTILE_PATTERN = r"(|.|..|...){40}\d"  # exponential on "Paris" in `re` and in `regex`


def test_a_backtracking_pattern_on_a_served_call_is_cut_at_the_regex_limit(
    server: ServerProcess, session: str
) -> None:
    """The log's check of a served call ran `re` on `city` for 12 s (N=20: 51 s), holding
    the server, when the entry closed and again on every read of the log."""
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "pattern": HOSTILE_PATTERN}},
        "required": ["city"],
    }
    body = {**_tool_call(schema), "messages": [{"role": "user", "content": "weather?"}]}
    body["tools"][0]["function"]["name"] = "get_weather"
    r = _post(server, f"s/weather-single/{session}/v1/chat/completions", body)
    assert r.status_code == 200, r.text
    (call,) = server.last(session)["response"]["tool_calls"]
    assert "ran past its 100 ms limit" in call["problem"]
    assert server.http.get("/_mockllm/verdicts", timeout=TIMEOUT).status_code == 200


def test_a_backtracking_pattern_in_a_generated_call_is_a_400_naming_the_limit(
    server: ServerProcess, session: str
) -> None:
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": HOSTILE_PATTERN, "minLength": 40}},
        "required": ["s"],
    }
    r = _post(server, f"s/generated-args/{session}/v1/chat/completions", _tool_call(schema))
    assert r.status_code == 400, r.text
    assert "100 ms limit" in r.json()["error"]["message"]


# --- 3: fan-out ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(_fan_out(15), id="allOf-width-2-depth-15"),
        pytest.param(_fan_out(14, 4), id="allOf-width-4-depth-14"),
        pytest.param(
            {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(20_000)}},
            id="20000-optional-properties",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {f"p{i}": {"type": "string"} for i in range(10_000)},
                "required": [f"p{i}" for i in range(10_000)],
            },
            id="10000-required-properties",
        ),
    ],
)
def test_schema_fan_out_through_generate_is_a_400_naming_the_flag(
    server: ServerProcess, session: str, schema: dict[str, Any]
) -> None:
    """allOf width 2 over 15 levels took 2.2 s (width 4 over 16: hours); 20,000 optional
    properties 16 s. Each is now refused within the budget."""
    r = _post(server, f"s/generated-args/{session}/v1/chat/completions", _tool_call(schema))
    _refused_for_work(r)
    assert r.json()["error"]["type"] == "invalid_request_error"
    assert server.last(session)["server_error"] is None


def test_a_schema_within_the_budget_still_generates(server: ServerProcess, session: str) -> None:
    r = _post(server, f"s/generated-args/{session}/v1/chat/completions", _tool_call(_fan_out(6)))
    assert r.status_code == 200, r.text
    (call,) = r.json()["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"x": {}}


# --- 4: no 500 on hostile numbers and references ---------------------------------------------

HUGE_STEP = {"type": "number", "multipleOf": 1e-300, "minimum": 1e300}


def _hostile(kind: str) -> dict[str, Any]:
    if kind == "huge-multipleOf":
        value: dict[str, Any] = HUGE_STEP
    else:
        value = {"anyOf": [{"$ref": kind}, {"type": "string"}]}
    return {"type": "object", "properties": {"n": value}, "required": ["n"]}


@pytest.mark.parametrize("kind", ["huge-multipleOf", "#/nope", "http://x/y"])
@pytest.mark.parametrize("wire", ["chat", "responses", "messages", "gemini-json"])
def test_hostile_numbers_and_refs_in_structured_output_are_a_400(
    server: ServerProcess, session: str, wire: str, kind: str
) -> None:
    """Each was `500 mockllm internal error` (OverflowError in _snaps; jsonschema's
    unresolvable reference inside anyOf)."""
    route, body = output_bodies(_hostile(kind), wire)
    r = _post(server, f"s/json-reply/{session}/{route}", body)
    assert r.status_code == 400, r.text
    assert "cannot generate valid" in r.text
    assert server.last(session)["server_error"] is None


@pytest.mark.parametrize("kind", ["huge-multipleOf", "#/nope", "http://x/y"])
def test_hostile_numbers_and_refs_in_generated_arguments_are_a_400(
    server: ServerProcess, session: str, kind: str
) -> None:
    r = _post(server, f"s/generated-args/{session}/v1/chat/completions", _tool_call(_hostile(kind)))
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "generate_failed"


def test_a_bad_ref_in_a_bundled_schema_scenario_is_a_400(
    server: ServerProcess, session: str
) -> None:
    """The bundled schema-* scenarios generate from the request's tool: a 500 before."""
    body = _tool_call(_hostile("#/nope"))
    body["tools"][0]["function"]["name"] = "get_weather"
    r = _post(server, f"s/schema-wrong-type/{session}/v1/chat/completions", body)
    assert r.status_code == 400, r.text


def test_a_bad_ref_in_a_scenarios_mcp_schema_is_a_load_error_naming_its_line(
    server: ServerProcess,
) -> None:
    text = (
        SCENARIOS["unique-args"]
        .replace("unique-args", "bad-ref")
        .replace("uniqueItems: true}", 'items: {$ref: "#/nope"}}')
    )
    r = server.http.post(
        "/_mockllm/scenarios", content=text, headers={"content-type": "application/yaml"}
    )
    assert r.status_code == 400, r.text
    assert "$ref '#/nope' points nowhere" in r.text and ":8:" in r.text


# --- 7: MCP uniqueItems in linear time -------------------------------------------------------


def _mcp_call(server: ServerProcess, session: str, arguments: dict[str, Any]) -> dict[str, Any]:
    url = f"{server.url}/s/unique-args/{session}/mcp/s"
    headers = {"accept": "application/json, text/event-stream"}
    with httpx.Client(timeout=TIMEOUT, headers=headers) as http:
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        opened = http.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
        )
        headers = {
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-06-18",
        }
        http.post(
            url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
        call = {"name": "t", "arguments": arguments}
        r = http.post(
            url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
            headers=headers,
        )
    text = r.text
    data = text.split("data: ", 1)[1] if text.startswith("event:") else text
    result: dict[str, Any] = json.loads(data)["result"]
    return result


def test_mcp_unique_items_are_checked_in_linear_time(server: ServerProcess, session: str) -> None:
    """2,000 small objects took 3.5 s on the event loop, 5,000 never answered in 15 s."""
    many = [{"k": i} for i in range(20_000)]
    assert _mcp_call(server, session, {"xs": many})["isError"] is False
    twice = _mcp_call(server, session + "-2", {"xs": [*many, {"k": 7}]})
    assert twice["isError"] is True
    assert "non-unique elements" in twice["content"][0]["text"]


# --- SIGTERM while the worst schema is being walked ------------------------------------------


def test_sigterm_stops_a_server_busy_with_the_worst_schema(session: str) -> None:
    """A schema that would take hours: the server still exits promptly on SIGTERM, since no
    walk outlasts its budget."""
    with _server() as busy:
        body = _tool_call(_fan_out(14, 4))
        sent = threading.Thread(
            target=lambda: _quietly(
                lambda: _post(busy, f"s/generated-args/{session}/v1/chat/completions", body)
            )
        )
        sent.start()
        time.sleep(0.3)
        busy.process.send_signal(signal.SIGTERM)
        try:
            code = busy.process.wait(15)
        except subprocess.TimeoutExpired:
            pytest.fail("mockllm serve did not exit within 15 s of SIGTERM")
        sent.join(TIMEOUT)
        # uvicorn stops gracefully, then lets the signal end the process as it would have
        assert code in (0, -signal.SIGTERM), busy.console.read_text()


def _quietly(call: Any) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the server may go before it answers
        call()
