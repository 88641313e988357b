"""Bedrock's InvokeModel and InvokeModelWithResponseStream with Anthropic Messages bodies,
through `anthropic`'s `AnthropicBedrock` (its own stream accumulator) and boto3's
invoke_model / invoke_model_with_response_stream (chunk events carrying one Anthropic SSE
event's JSON each), with dummy credentials; errors as Bedrock sends them."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import boto3
import pytest
from anthropic import AnthropicBedrock
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.support import ServerProcess

MODEL = "us.anthropic.claude-sonnet-4-6"
TOOLS = [
    {
        "name": "get_weather",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


def sdk(server: ServerProcess, scenario: str, session: str) -> AnthropicBedrock:
    return AnthropicBedrock(
        aws_access_key="AKIDEXAMPLE",
        aws_secret_key="dummy",
        aws_region="us-east-1",
        base_url=f"{server.url}/s/{scenario}/{session}",
        max_retries=0,
    )


def boto(server: ServerProcess, scenario: str, session: str) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=f"{server.url}/s/{scenario}/{session}",
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="dummy",
        config=Config(retries={"max_attempts": 1}),
    )


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_bedrock_tool_loop_with_parallel_calls(
    server: ServerProcess, session: str, stream: bool
) -> None:
    name = f"{session}-{stream}"
    client = sdk(server, "weather-parallel", name)

    def ask(messages: list[Any]) -> Any:
        if not stream:
            return client.messages.create(
                model=MODEL, max_tokens=200, messages=messages, tools=TOOLS
            )
        with client.messages.stream(
            model=MODEL, max_tokens=200, messages=messages, tools=TOOLS
        ) as events:
            return events.get_final_message()  # the SDK's own accumulator

    history: list[Any] = [{"role": "user", "content": "北京和上海?"}]
    first = ask(history)
    assert first.stop_reason == "tool_use" and first.model == MODEL
    uses = [b for b in first.content if b.type == "tool_use"]
    assert [u.input for u in uses] == [{"city": "北京"}, {"city": "上海"}]
    assert all(u.id.startswith("toolu_bdrk_01") for u in uses)
    answers = [
        {"type": "tool_result", "tool_use_id": u.id, "content": t}
        for u, t in zip(uses, ["25度", "22度"], strict=True)
    ]
    history += [
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": answers},
    ]
    second = ask(history)
    assert second.content[0].text == "北京多云25℃，上海小雨22℃。"
    entries = server.requests(session=name)
    assert [(e["api"], e["stream"], e["turn"]) for e in entries] == [
        ("bedrock-invoke", stream, 0),
        ("bedrock-invoke", stream, 1),
    ]
    suffix = "invoke-with-response-stream" if stream else "invoke"
    assert entries[0]["path"].endswith(f"/model/{MODEL}/{suffix}")
    assert all(e["violations"] == [] for e in entries)


def test_boto3_invoke_model_and_its_stream_agree(server: ServerProcess, session: str) -> None:
    body = json.dumps(
        {
            "anthropic_version": "bedrock-2023-05-31",  # AWS's documented value
            "max_tokens": 200,
            "messages": [{"role": "user", "content": "Oslo?"}],
            "tools": TOOLS,
        }
    )
    plain = boto(server, "reasoning", session).invoke_model(modelId=MODEL, body=body)
    message = json.loads(plain["body"].read())
    assert plain["contentType"] == "application/json"
    streamed = boto(server, "reasoning", f"{session}-s").invoke_model_with_response_stream(
        modelId=MODEL, body=body
    )
    assert streamed["contentType"] == "application/json"
    events = [json.loads(e["chunk"]["bytes"]) for e in streamed["body"]]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    metrics = events[-1]["amazon-bedrock-invocationMetrics"]
    assert metrics["outputTokenCount"] == message["usage"]["output_tokens"]
    thinking = "".join(
        e["delta"].get("thinking", "") for e in events if e["type"] == "content_block_delta"
    )
    assert thinking == message["content"][0]["thinking"]
    arguments = "".join(
        e["delta"].get("partial_json", "") for e in events if e["type"] == "content_block_delta"
    )
    assert json.loads(arguments) == message["content"][1]["input"] == {"city": "Oslo"}


def test_errors_are_bedrock_s(server: ServerProcess, session: str) -> None:
    client = boto(server, "hello", session)
    no_version = json.dumps({"max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]})
    with pytest.raises(ClientError) as caught:
        client.invoke_model(modelId=MODEL, body=no_version)
    assert caught.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "Malformed input request: #: required key [anthropic_version] not found, "
        "please reformat your input and try again.",
    }
    with pytest.raises(anthropic.RateLimitError) as limited:
        sdk(server, "fault-429", session).messages.create(
            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    assert limited.value.response.headers["x-amzn-errortype"].startswith("ThrottlingException:")
    assert "Too many requests" in str(limited.value)
    broken = boto(server, "fault-stream-error", session).invoke_model_with_response_stream(
        modelId=MODEL,
        body=json.dumps(
            {
                "anthropic_version": "bedrock-2023-05-31",
                "max_tokens": 10,
                "messages": [{"role": "user", "content": "hi"}],
            }
        ),
    )
    with pytest.raises(ClientError) as mid_stream:
        list(broken["body"])
    assert mid_stream.value.response["Error"]["Code"] == "modelStreamErrorException"


def test_a_system_message_inside_messages_is_judged_by_the_model_in_the_path(
    server: ServerProcess, session: str
) -> None:
    """Claude Code on Bedrock sends its default model's mid-conversation system message; the
    model is in the path with Bedrock's prefixes (`us.anthropic.claude-opus-5-5`), and the
    rule reads it there as on the Anthropic API (it refused every such model before)."""
    client = sdk(server, "hello", session)
    messages: Any = [
        {"role": "user", "content": "Hi"},
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
    ]
    for model in ("us.anthropic.claude-opus-5-5", "anthropic.claude-opus-4-8-v1:0"):
        reply = client.messages.create(model=model, max_tokens=50, messages=messages)
        assert reply.content[0].type == "text"
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(
            model="us.anthropic.claude-sonnet-4-6", max_tokens=50, messages=messages
        )
    assert "role 'system' is not supported on this model" in str(caught.value)


def test_claude_codes_inference_profile_probe_gets_an_empty_list_and_is_not_logged(
    server: ServerProcess, session: str
) -> None:
    before = server.requests(session=session)
    r = server.http.get(f"/s/hello/{session}/inference-profiles")
    assert r.status_code == 200 and r.json() == {"inferenceProfileSummaries": []}
    assert server.requests(session=session) == before
