"""`mockllm record` in front of an Azure OpenAI endpoint (docs/azure.md): AzureOpenAI's
deployment routes are forwarded as they are, its answers (the annotations, a stream's first
chunk without choices) read by the Chat reader, and the recording replays the same tool
loop through the SDK, streamed and not; the `api-key` is never written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

from mockllm import Client
from tests.support import ServerProcess, running_command, running_server

KEY = "azure-secret-0123456789abcdef"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
ASK: list[Any] = [{"role": "user", "content": "北京和上海天气？"}]


def loop(endpoint: str, stream: bool) -> tuple[list[Any], str | None]:
    """A parallel tool loop through AzureOpenAI: the calls' arguments, then the answer."""
    sdk = openai.AzureOpenAI(
        azure_endpoint=endpoint, api_version="2024-10-21", api_key=KEY, max_retries=0
    )
    with sdk:
        if stream:
            with sdk.chat.completions.stream(model="gpt-4o", messages=ASK, tools=[WEATHER]) as s:
                for _ in s:
                    pass
                first: Any = s.get_final_completion()
        else:
            first = sdk.chat.completions.create(model="gpt-4o", messages=ASK, tools=[WEATHER])
        message = first.choices[0].message
        calls = message.tool_calls or []
        answers = [
            {"role": "tool", "tool_call_id": c.id, "content": t}
            for c, t in zip(calls, ["25", "22"], strict=True)
        ]
        history = [*ASK, message, *answers]
        final = sdk.chat.completions.create(model="gpt-4o", messages=history, tools=[WEATHER])
    return [json.loads(c.function.arguments) for c in calls], final.choices[0].message.content


@pytest.mark.parametrize("stream", [False, True])
def test_an_azure_session_records_and_replays(
    server: ServerProcess, session: str, tmp_path: Path, stream: bool
) -> None:
    upstream = server.url + "/s/{scenario}/{session}"
    with running_command("record", "--upstream", upstream, "--out", str(tmp_path)) as recorder:
        recorded = loop(f"{recorder.url}/s/weather-parallel/{session}", stream)
    assert recorded == ([{"city": "北京"}, {"city": "上海"}], "北京多云25℃，上海小雨22℃。")
    (path,) = tmp_path.glob("*.yaml")
    assert KEY not in path.read_text()
    with running_server(scenarios=()) as replay:
        name = Client(replay.url).add_scenario(path)
        assert loop(f"{replay.url}/s/{name}/{session}", stream) == recorded
