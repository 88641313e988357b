"""`mockllm record` of Ollama: the `ollama` client through a real recorder to a mockllm
playing Ollama, then the recorded file served, and the same client code run again, which
must see the same thing: /api/chat streamed (newline-delimited JSON, split by
`recording.sse.NdjsonFrames`) and not, with a tool loop, a 429 and a stream cut inside a
call's line."""

from __future__ import annotations

import json
from typing import Any

import httpx
import ollama
import pytest

from mockllm import load_paths
from mockllm.testing.client import Client
from tests.e2e.record.test_record import Recorder, recorder, replay  # noqa: F401  (the module's fixtures)
from tests.support import ServerProcess

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def _turn(client: ollama.Client, messages: list[Any], streamed: bool) -> dict[str, Any]:
    """One answer as a harness that checks `done` adds it up."""
    if not streamed:
        answer = client.chat(model="llama3.2", messages=messages, tools=TOOLS)
        parts = [answer]
    else:
        parts = list(client.chat(model="llama3.2", messages=messages, tools=TOOLS, stream=True))
    calls = [c for p in parts for c in p.message.tool_calls or ()]
    return {
        "text": "".join(p.message.content or "" for p in parts),
        "calls": [(c.function.name, dict(c.function.arguments)) for c in calls],
        "done": parts[-1].done_reason if parts and parts[-1].done else None,
    }


def loop(url: str, streamed: bool) -> list[Any]:
    """A correct harness's tool loop: each attempt's outcome, in order (an error by its
    status; a cut stream, or one without `done`, asked again by the harness itself)."""
    client, seen = ollama.Client(host=url), []
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    for _ in range(4):
        try:
            answer = _turn(client, messages, streamed)
        except ollama.ResponseError as e:
            seen.append(("error", e.status_code, e.error))
            continue
        except (httpx.RemoteProtocolError, json.JSONDecodeError):
            seen.append(("cut",))
            continue
        seen.append(answer)
        if answer["done"] is None:
            continue
        if not answer["calls"]:
            break
        messages.append(
            {
                "role": "assistant",
                "content": answer["text"],
                "tool_calls": [
                    {"function": {"name": n, "arguments": a}} for n, a in answer["calls"]
                ],
            }
        )
        messages += [
            {"role": "tool", "content": "18 °C, sunny", "tool_name": n} for n, _ in answer["calls"]
        ]
    return seen


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "ndjson"])
@pytest.mark.parametrize("guide", ["weather-single", "rate-limited", "stream-cut"])
def test_a_recorded_ollama_session_replays_as_it_happened(
    server: ServerProcess,
    recorder: Recorder,  # noqa: F811
    replay: ServerProcess,  # noqa: F811
    session: str,
    guide: str,
    streamed: bool,
) -> None:
    direct = loop(f"{server.url}/s/{guide}/{session}-direct", streamed)
    recorded = loop(f"{recorder.server.url}/s/{guide}/{session}", streamed)
    assert recorded == direct  # the recorder is transparent
    assert direct[-1]["text"] == "It is 18 °C and sunny in Paris."
    path = recorder.end(f"{guide}-{session}")
    (scenario,) = load_paths([path])
    Client(replay.url).add_scenario(path)
    assert loop(f"{replay.url}/s/{scenario.name}/{session}", streamed) == recorded
    assert "# API: ollama; model: llama3.2." in path.read_text()


def test_the_recorder_s_banner_names_the_ollama_host(recorder: Recorder) -> None:  # noqa: F811
    console = recorder.server.console.read_text()  # printed() would stop the shared recorder
    assert f'ollama.Client(host="{recorder.server.url}/s/NAME/SESSION")' in console
