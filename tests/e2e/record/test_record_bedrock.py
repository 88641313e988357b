"""`mockllm record` of Amazon Bedrock: boto3 through a real recorder to a mockllm playing
Bedrock, then the recorded file served, and the same client code run again, which must
see the same thing: Converse, ConverseStream (AWS's binary event stream, read by
`core.eventstream.Frames`) and InvokeModel's stream (Anthropic events in `chunk`s), with a
tool loop, a 429 and a stream cut inside a call's arguments."""

from __future__ import annotations

import json
from typing import Any

import boto3
import botocore.exceptions
import pytest
from botocore.config import Config
from botocore.exceptions import ResponseStreamingError
from urllib3.exceptions import ProtocolError

from mockllm import load_paths
from mockllm.testing.client import Client
from tests.e2e.record.test_record import Recorder, recorder, replay  # noqa: F401  (the module's fixtures)
from tests.support import ServerProcess

TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "get_weather",
                "inputSchema": {
                    "json": {"type": "object", "properties": {"city": {"type": "string"}}}
                },
            }
        }
    ]
}


def _client(url: str) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="dummy",
        config=Config(retries={"max_attempts": 0}),
    )


def _collect(events: Any) -> dict[str, Any]:
    """A ConverseStream answer as the client assembles it: text, calls, stopReason."""
    text, calls, ids, stop = "", {}, [], None
    for event in events:
        if "contentBlockStart" in event:
            use = event["contentBlockStart"]["start"]["toolUse"]
            calls[event["contentBlockStart"]["contentBlockIndex"]] = [use["name"], ""]
            ids.append(use["toolUseId"])
        elif "contentBlockDelta" in event:
            delta, at = event["contentBlockDelta"]["delta"], event["contentBlockDelta"]
            if "text" in delta:
                text += delta["text"]
            elif "toolUse" in delta:
                calls[at["contentBlockIndex"]][1] += delta["toolUse"]["input"]
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
    return {"text": text, "calls": [tuple(c) for c in calls.values()], "stop": stop, "ids": ids}


def _turn(client: Any, messages: list[Any], streamed: bool) -> dict[str, Any]:
    model = "us.anthropic.claude-sonnet-4-6"
    if streamed:
        answer = client.converse_stream(modelId=model, messages=messages, toolConfig=TOOLS)
        return _collect(answer["stream"])
    answer = client.converse(modelId=model, messages=messages, toolConfig=TOOLS)
    content = answer["output"]["message"]["content"]
    return {
        "text": "".join(b.get("text", "") for b in content),
        "calls": [
            (b["toolUse"]["name"], json.dumps(b["toolUse"]["input"]))
            for b in content
            if "toolUse" in b
        ],
        "stop": answer["stopReason"],
        "ids": [b["toolUse"]["toolUseId"] for b in content if "toolUse" in b],
    }


def loop(url: str, streamed: bool, attempts: int = 1) -> list[Any]:
    """A correct harness's tool loop on Converse: each attempt's outcome, in order (an
    error by its code; a cut stream retried by the harness itself, as botocore does not)."""
    client, seen = _client(url), []
    messages: list[Any] = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]
    for _ in range(4):
        try:
            answer = _turn(client, messages, streamed)
        except botocore.exceptions.ClientError as e:
            seen.append(("error", e.response["Error"]["Code"]))
            continue
        except (botocore.exceptions.ConnectionClosedError, ResponseStreamingError, ProtocolError):
            seen.append(("cut",))  # a body cut short: asked again
            continue
        ids = answer.pop("ids")  # the server's own: sent back, not compared
        seen.append(answer)
        if answer["stop"] != "tool_use":
            if answer["stop"] is None:  # cut: asked again
                continue
            break
        uses = [
            {"toolUse": {"toolUseId": i, "name": n, "input": json.loads(a)}}
            for i, (n, a) in zip(ids, answer["calls"], strict=True)
        ]
        messages.append({"role": "assistant", "content": uses})
        results = [
            {"toolResult": {"toolUseId": i, "content": [{"text": "18 °C, sunny"}]}} for i in ids
        ]
        messages.append({"role": "user", "content": results})
    return seen


@pytest.mark.parametrize("streamed", [False, True], ids=["converse", "converse-stream"])
@pytest.mark.parametrize("guide", ["weather-single", "rate-limited", "stream-cut"])
def test_a_recorded_bedrock_session_replays_as_it_happened(
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


def test_invoke_model_s_stream_is_recorded_and_replays(
    server: ServerProcess,
    recorder: Recorder,  # noqa: F811
    replay: ServerProcess,  # noqa: F811
    session: str,
) -> None:
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "Hi"}],
    }

    def ask(url: str) -> list[str]:
        answer = _client(url).invoke_model_with_response_stream(
            modelId="anthropic.claude-sonnet-4-6", body=json.dumps(body)
        )
        kinds = [json.loads(e["chunk"]["bytes"]) for e in answer["body"] if "chunk" in e]
        return [k["delta"]["text"] for k in kinds if k["type"] == "content_block_delta"]

    recorded = ask(f"{recorder.server.url}/s/hello/{session}")
    assert "".join(recorded).startswith("Hello! I am mockllm")
    path = recorder.end(f"hello-{session}")
    (scenario,) = load_paths([path])
    Client(replay.url).add_scenario(path)
    assert "".join(ask(f"{replay.url}/s/{scenario.name}/{session}")) == "".join(recorded)
