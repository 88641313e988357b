"""The conformance corpus: each fixture in tests/conformance/ describes the structure of a
real recorded exchange (key paths and JSON types, null vs absent, SSE event order, header
names, id patterns). Here the equivalent exchange runs through a real mockllm server over
HTTP and its structure must match, except where the fixture says why it differs."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

import mockllm
from mockllm.testing.background import RunningServer
from tests.conformance.structure import (
    chat_chunk_kind,
    compare,
    flat,
    paths,
    sse,
    stream_structure,
    value_at,
)
from tests.support import ROOT

FIXTURES = sorted((ROOT / "tests" / "conformance").glob("*.yaml"))
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
PARIS = {"name": "get_weather", "arguments": {"city": "Paris"}}
ROME = {"name": "get_weather", "arguments": {"city": "Rome"}}
THINKING = "The user wants the weather; I call the tool."
# The replies the fixtures ask for: `exchange.reply` names one.
REPLIES: dict[str, dict[str, Any]] = {
    "call": {"tool_calls": [PARIS]},
    "text_call": {"text": "I'll look that up.", "tool_calls": [PARIS]},
    "parallel": {"tool_calls": [PARIS, ROME]},
    "text_parallel": {"text": "Both cities, then.", "tool_calls": [PARIS, ROME]},
    "text": {"text": "Hello there! How can I help?"},
    "reasoning_call": {"reasoning": THINKING, "tool_calls": [PARIS]},
    "reasoning_text": {"reasoning": THINKING, "text": "Hello there!"},
    "reasoning_text_call": {"reasoning": THINKING, "text": "Let me check.", "tool_calls": [PARIS]},
    "reasoning_parallel": {"reasoning": THINKING, "tool_calls": [PARIS, ROME]},
    "reasoning_text_parallel": {
        "reasoning": THINKING,
        "text": "Both cities.",
        "tool_calls": [PARIS, ROME],
    },
}
FAULTS = {
    "429": {"http": {"status": 429, "headers": {"retry-after": "2"}}},
    "529": {"http": {"status": 529}},
}


def _scenarios(folder: Path) -> None:
    for flavor in ("openai", "deepseek"):
        for name, reply in REPLIES.items():
            scenario = {"name": f"corpus-{flavor}-{name}", "turns": [{"reply": reply}]}
            if flavor == "deepseek":
                scenario["flavor"] = "deepseek"
            (folder / f"{flavor}-{name}.yaml").write_text(yaml.safe_dump(scenario))
    for status, fault in FAULTS.items():
        scenario = {
            "name": f"corpus-fault-{status}",
            "turns": [{"reply": REPLIES["text"], "fault": fault}],
        }
        (folder / f"fault-{status}.yaml").write_text(yaml.safe_dump(scenario))


@pytest.fixture(scope="module")
def corpus_server() -> Iterator[RunningServer]:
    """A real server over HTTP, on a thread of this process (so its render code counts
    towards coverage)."""
    with tempfile.TemporaryDirectory() as tmp:
        _scenarios(Path(tmp))
        with mockllm.serve([Path(tmp)]) as server:
            yield server


def _request(api: str, exchange: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The route and body a client of this API sends for the exchange."""
    stream = bool(exchange.get("stream"))
    if api == "openai-chat":
        body: dict[str, Any] = {
            "model": exchange["model"],
            "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
            "tools": [{"type": "function", "function": WEATHER}],
            "stream": stream,
        }
        if exchange.get("include_usage"):
            body["stream_options"] = {"include_usage": True}
        if exchange.get("bad_request"):
            body["messages"] = [{"role": "robot", "content": "hi"}]
        return (
            "v1/chat/completion" if exchange.get("unknown_route") else "v1/chat/completions"
        ), body
    if api == "openai-responses":
        body = {
            "model": exchange["model"],
            "input": "What is the weather in Paris?",
            "tools": [{"type": "function", **WEATHER}],
            "stream": stream,
        }
        if "store" in exchange:
            body["store"] = exchange["store"]
        if exchange.get("include_encrypted"):
            body["include"] = ["reasoning.encrypted_content"]
        if "reasoning" in exchange:
            body["reasoning"] = exchange["reasoning"]
        if exchange.get("bad_request"):
            body["tool_choice"] = "sometimes"
        return ("v1/response" if exchange.get("unknown_route") else "v1/responses"), body
    body = {
        "model": exchange["model"],
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": [
            {
                "name": WEATHER["name"],
                "description": WEATHER["description"],
                "input_schema": WEATHER["parameters"],
            }
        ],
        "stream": stream,
    }
    if exchange.get("bad_request"):
        body["messages"] = [{"role": "robot", "content": "hi"}]
    return ("v1/messages/no_such_route" if exchange.get("unknown_route") else "v1/messages"), body


def _exchange(server: RunningServer, fixture: dict[str, Any], session: str) -> httpx.Response:
    exchange = fixture["exchange"]
    if "fault" in exchange:
        scenario = f"corpus-fault-{exchange['fault']}"
    else:
        scenario = f"corpus-{fixture['flavor'] if fixture['flavor'] == 'deepseek' else 'openai'}-{exchange.get('reply', 'text')}"
    route, body = _request(fixture["api"], exchange)
    headers = {"anthropic-version": "2023-06-01"} if fixture["api"] == "anthropic" else {}
    return httpx.post(f"{server.url}/s/{scenario}/{session}/{route}", json=body, headers=headers)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_structure_matches_the_recording(corpus_server: RunningServer, path: Path) -> None:
    fixture = yaml.safe_load(path.read_text())
    response = _exchange(corpus_server, fixture, "c-" + path.stem)
    allowed = {d["path"] for d in fixture.get("differences", ())}
    problems = structure_problems(fixture, response, allowed)
    assert not problems, f"{path.name} (recorded in {fixture['source']}):\n" + "\n".join(problems)


def structure_problems(
    fixture: dict[str, Any], response: httpx.Response, allowed: set[str]
) -> list[str]:
    problems = []
    if response.status_code != fixture["status"]:
        return [
            f"status {response.status_code}, recorded {fixture['status']}: {response.text[:300]}"
        ]
    sent = {k.lower() for k in response.headers}
    problems += [
        f"header {h}: missing"
        for h in fixture.get("headers", ())
        if h not in sent and f"header:{h}" not in allowed
    ]
    if "body" in fixture:
        body = response.json()
        problems += compare(fixture["body"], flat(paths(body)), allowed)
        document: Any = body
    else:
        events, per = stream_structure(response.text, fixture["api"])
        if events != fixture["events"] and "events" not in allowed:
            problems.append(f"events: {events}, recorded {fixture['events']}")
        for kind in sorted(set(per) | set(fixture["event_paths"])):
            problems += compare(
                fixture["event_paths"].get(kind, {}), per.get(kind, {}), allowed, f"{kind}:"
            )
        document = None
    for where, pattern in fixture.get("patterns", {}).items():
        if where.startswith("header:"):
            found = [response.headers.get(where[7:], "")]
        elif document is not None:
            found = value_at(document, where)
        else:
            found = _event_values(response.text, fixture["api"], where)
        bad = [v for v in found if not isinstance(v, str) or not re.search(pattern, v)]
        if not found or bad:
            problems.append(f"{where}: {found[:3]!r} does not match {pattern}")
    return problems


def _event_values(text: str, api: str, where: str) -> list[Any]:
    """Values at `KIND:PATH` across the stream's events of that kind."""
    kind, path = where.split(":", 1)
    found: list[Any] = []
    for name, data in sse(text):
        if not isinstance(data, dict):
            continue
        own = chat_chunk_kind(data) if api == "openai-chat" else str(data.get("type") or name)
        if own == kind:
            found += value_at(data, path)
    return found


def test_a_dropped_or_added_field_is_caught(corpus_server: RunningServer) -> None:
    """The other side: the comparison fails when mockllm loses a field or grows one."""
    path = ROOT / "tests" / "conformance" / "anthropic--tool-call.yaml"
    fixture = yaml.safe_load(path.read_text())
    response = _exchange(corpus_server, fixture, "c-mutated")
    allowed = {d["path"] for d in fixture["differences"]}
    assert structure_problems(fixture, response, allowed) == []
    body = response.json()
    del body["stop_details"]
    body["usage"]["surprise"] = 1
    mutated = httpx.Response(200, json=body, headers=response.headers)
    assert structure_problems(fixture, mutated, allowed) == [
        "stop_details: missing (recorded as null)",
        "usage.surprise: sent as integer, absent from the recording",
    ]


KINDS = ("tool-call", "parallel-calls", "stream-tool-call", "stream-text-usage")
ERRORS = ("error-400", "error-404", "error-429", "error-529")


def test_the_corpus_covers_every_api_and_cites_its_sources() -> None:
    cases = set()
    for path in FIXTURES:
        fixture = yaml.safe_load(path.read_text())
        cases.add(fixture["case"])
        source = fixture["source"]
        assert {"repo", "path", "commit"} <= source.keys() or source.get("kind") == "documentation"
        assert all(d.get("why") for d in fixture["differences"]), path.name
    for api in ("openai-chat", "openai-responses", "anthropic"):
        assert {f"{api}/{k}" for k in KINDS + ERRORS} <= cases
    assert {"deepseek/tool-call", "deepseek/parallel-calls", "deepseek/stream-text-usage"} <= cases
