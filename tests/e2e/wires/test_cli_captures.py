"""The bundled rule sets (scenarios/harness/*.yaml) against the recorded first requests of the
real CLIs (tests/fixtures/cli_captures): each request is rebuilt from its trimmed capture,
sent through real HTTP, and must be a side request or the agent's turn as the CLI needs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest

from mockllm.providers.gemini import field
from mockllm.providers.output_formats import gemini as gemini_output
from tests.support import ROOT, ServerProcess
from tests.support.doc_examples import example_server

CAPTURES = ROOT / "tests" / "fixtures" / "cli_captures"
SCENARIOS = {
    cli: f"""
name: cli-{cli}
include: [harness/{rules}]
turns:
  - reply: {{text: hi}}
  - reply: {{text: bye}}
"""
    for cli, rules in {
        "claude": "claude-code",
        "gemini": "gemini-cli",
        "opencode": "opencode",
        "qwen": "qwen-code",
    }.items()
}
# What each captured request must be: a side request's name, or None for the agent's turn.
EXPECTED = {
    "claude/02-post.json": None,
    "gemini/default-router-01-post.json": "router",
    "gemini/default-router-02-post.json": "router",
    "gemini/default-router-03-post.json": "router",
    "gemini/default-router-04-post.json": "router",
    "gemini/default-router-05-post.json": "router",
    "gemini/explicit-model-01-post.json": None,
    "opencode/01-post.json": "title",
    "opencode/02-post.json": None,
    "qwen/01-post.json": None,
    "qwen/02-post.json": "memory",
}


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with example_server(extra={f"cli-{k}": v for k, v in SCENARIOS.items()}) as s:
        yield s


def test_every_capture_has_an_expectation() -> None:
    found = sorted(str(p.relative_to(CAPTURES)) for p in CAPTURES.glob("*/*.json"))
    assert found == sorted(EXPECTED)


def _texts(capture: dict[str, Any]) -> tuple[str, str, str]:
    system = (
        capture.get("system_first_200") or (capture.get("system_messages_first_200") or [""])[0]
    )
    return system, capture.get("first_user_first_200", ""), capture.get("last_user_first_200", "")


def rebuilt(capture: dict[str, Any]) -> dict[str, Any]:
    """A request body with what the capture kept: system prompt, the roles of its messages
    with their texts (an assistant's: the turn it was served), tools, output format."""
    system, first, last = _texts(capture)
    roles = [r for r in capture.get("message_roles", []) if r in ("user", "assistant", "system")]
    users = iter([first, *([last] * len(roles))])
    tools = capture.get("tools") or []
    api = capture["api"]
    if api == "anthropic":
        return {
            "model": capture.get("model") or "claude-sonnet-4-6",
            "max_tokens": 1024,
            "system": system,
            "messages": [
                {"role": r, "content": next(users) if r == "user" else "hi"}
                for r in roles
                if r != "system"
            ],
            **(
                {"tools": [{"name": n, "input_schema": {"type": "object"}} for n in tools]}
                if tools
                else {}
            ),
        }
    if api == "openai-chat":
        messages = [
            {
                "role": r,
                "content": system if r == "system" else next(users) if r == "user" else "hi",
            }
            for r in roles
        ]
        functions = [{"type": "function", "function": {"name": n}} for n in tools]
        return {
            "model": capture.get("model") or "m",
            "messages": messages,
            **({"tools": functions} if functions else {}),
        }
    assert api == "gemini"
    contents = [{"role": "user", "parts": [{"text": next(users)}]} for _ in roles]
    body: dict[str, Any] = {
        "contents": contents,
        "systemInstruction": {"parts": [{"text": system}]},
    }
    if "generationConfig" in capture:
        config = dict(capture["generationConfig"])
        config.pop("thinkingConfig", None)
        body["generationConfig"] = config
    if tools:
        body["tools"] = [{"functionDeclarations": [{"name": n} for n in tools]}]
    return body


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_rule_sets_answer_each_cli_as_it_needs(
    server: ServerProcess, session: str, name: str
) -> None:
    capture = json.loads((CAPTURES / name).read_text())
    cli = name.split("/")[0]
    path = capture["path"].replace("/s/hello/cap/", f"/s/cli-{cli}/{session}/")
    path = path.replace(":streamGenerateContent", ":generateContent")
    body = rebuilt(capture)
    headers = {"anthropic-version": "2023-06-01"} if capture["api"] == "anthropic" else {}
    r = httpx.post(server.url + path, json=body, headers=headers, timeout=30)
    assert r.status_code == 200, r.text
    entry = server.last(session)
    side = (entry.get("side") or {}).get("name")
    assert side == EXPECTED[name], entry.get("why")
    if side is None:
        assert entry["turn"] == sum(1 for m in body.get("messages", []) if m["role"] == "assistant")
    if side == "router":  # Gemini CLI parses the JSON against its own schema
        asked = gemini_output(capture["generationConfig"], field)
        assert asked is not None
        text = r.json()["candidates"][0]["content"]["parts"][0]["text"]
        jsonschema.validate(json.loads(text), asked.schema)
