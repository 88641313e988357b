"""Bedrock's history rules through boto3 (docs/validation.md, Bedrock): each broken history
gets Bedrock's ValidationException with its own text, and the history a correct harness
sends instead passes. SigV4 is not checked, so dummy credentials do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.e2e.wires.test_bedrock_e2e import TOOLS, user
from tests.support import ServerProcess

CLAUDE = "us.anthropic.claude-sonnet-4-6"
LLAMA = "us.meta.llama4-maverick-17b-instruct-v1:0"


def call(call_id: str) -> dict[str, Any]:
    use = {"toolUseId": call_id, "name": "get_weather", "input": {"city": "Paris"}}
    return {"role": "assistant", "content": [{"toolUse": use}]}


def result(call_id: str, text: str | None = "18", status: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"toolUseId": call_id, "content": [{"text": text}] if text else []}
    if status:
        block["status"] = status
    return {"toolResult": block}


History = Callable[[bool, str], tuple[str, list[dict[str, Any]], dict[str, Any]]]


def unanswered(broken: bool, served: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    after = [{"text": "and now?"}] if broken else [result(served)]
    return CLAUDE, [user("Paris?"), call(served), {"role": "user", "content": after}], TOOLS


def too_many(broken: bool, served: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    extra = (
        [result(served), result("tooluse_zzzzzzzzzzzzzzzzzzzzzz")] if broken else [result(served)]
    )
    return CLAUDE, [user("Paris?"), call(served), {"role": "user", "content": extra}], TOOLS


def empty_error(broken: bool, served: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    answer = result(served, text=None if broken else "18? no such city", status="error")
    return CLAUDE, [user("Paris?"), call(served), {"role": "user", "content": [answer]}], TOOLS


def no_tool_config(broken: bool, served: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    history = [user("Paris?"), call(served), {"role": "user", "content": [result(served)]}]
    return CLAUDE, history, {} if broken else TOOLS


def empty_content(broken: bool, served: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    first = {"role": "user", "content": [] if broken else [{"text": "Paris?"}]}
    return CLAUDE, [first], TOOLS


def bad_id(broken: bool, served: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    wire = "call 1" if broken else served
    history = [user("Paris?"), call(wire), {"role": "user", "content": [result(wire)]}]
    return CLAUDE, history, TOOLS


def text_beside_results(
    broken: bool, served: str
) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    content = [result(served), {"text": "also, hurry"}] if broken else [result(served)]
    return LLAMA, [user("Paris?"), call(served), {"role": "user", "content": content}], TOOLS


RULES: list[tuple[str, History, str]] = [
    (
        "bedrock.tool_use_unanswered",
        unanswered,
        "Expected toolResult blocks at messages.2.content for the following Ids: {served}",
    ),
    (
        "bedrock.tool_results_exceed_uses",
        too_many,
        "The number of toolResult blocks at messages.2.content exceeds the number of toolUse "
        "blocks of previous turn.",
    ),
    (
        "bedrock.error_result_empty",
        empty_error,
        "The content field at messages.2.content.0.toolResult cannot be empty when status "
        "value is error.",
    ),
    (
        "bedrock.tool_config_missing",
        no_tool_config,
        "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
    ),
    (
        "bedrock.content_empty",
        empty_content,
        "The content field in the Message object at messages.0 is empty. Add a ContentBlock "
        "object to the content field and try again.",
    ),
    (
        "bedrock.tool_use_id_invalid",
        bad_id,
        "1 validation error detected: Value 'call 1' at "
        "'messages.2.member.content.1.member.toolUse.toolUseId' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [a-zA-Z0-9_.:-]+",
    ),
    (
        "bedrock.results_with_text",
        text_beside_results,
        "messages.2.content: Conversation blocks and tool result blocks cannot be provided in "
        "the same turn.",
    ),
]


@pytest.mark.parametrize(("rule", "history", "text"), RULES, ids=[r[0] for r in RULES])
@pytest.mark.parametrize("stream", [False, True])
def test_each_rule_both_sides(
    server: ServerProcess, session: str, rule: str, history: History, text: str, stream: bool
) -> None:
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=f"{server.url}/s/weather-single/{session}",
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="dummy",
        config=Config(retries={"max_attempts": 1}),
    )
    send = client.converse_stream if stream else client.converse
    first = client.converse(modelId=CLAUDE, messages=[user("Paris?")], toolConfig=TOOLS)
    served = first["output"]["message"]["content"][0]["toolUse"]["toolUseId"]
    model, messages, tools = history(True, served)
    extra = {"toolConfig": tools} if tools else {}
    with pytest.raises(ClientError) as caught:
        send(modelId=model, messages=messages, **extra)
    error = caught.value.response
    assert error["Error"] == {"Code": "ValidationException", "Message": text.format(served=served)}
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    refused = server.last(session)
    assert refused["violations"][0]["rule"] == rule  # the first is the one answered
    model, messages, tools = history(False, served)
    extra = {"toolConfig": tools} if tools else {}
    answer = send(modelId=model, messages=messages, **extra)
    if stream:
        list(answer["stream"])
    entry = server.last(session)
    assert entry["response"]["status"] == 200, entry["violations"]
    assert not [v for v in entry["violations"] if v["rule"].startswith("bedrock.")]
