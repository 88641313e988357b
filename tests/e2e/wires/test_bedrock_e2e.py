"""Amazon Bedrock's Converse API through boto3's `bedrock-runtime` client on real HTTP
(endpoint_url and dummy credentials: SigV4 is not checked): converse and converse_stream
tool loops with parallel calls, reasoning, the binary event stream read by botocore's own
parser (CRC checked), errors as Bedrock sends them (x-amzn-ErrorType, {"message"},
x-amzn-RequestId), in-stream exception frames, cuts, and byte-identical replays."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import httpx
import pytest
from botocore.config import Config
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer
from botocore.exceptions import ClientError, ConnectionClosedError, EventStreamError
from urllib3.exceptions import ProtocolError

from tests.support import ServerProcess

MODEL = "us.anthropic.claude-sonnet-4-6"
QUESTION = "北京和上海?"
TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "Current weather in a city.",
                "inputSchema": {
                    "json": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    }
                },
            }
        }
    ]
}
NO_RETRIES = Config(retries={"max_attempts": 1, "mode": "standard"})


@pytest.fixture
def bedrock(server: ServerProcess, session: str) -> Iterator[Any]:
    """`bedrock("weather-single")` → a boto3 bedrock-runtime client on that scenario."""
    clients: list[Any] = []

    def make(scenario: str, config: Config = NO_RETRIES, name: str = session) -> Any:
        client = boto3.client(
            "bedrock-runtime",
            endpoint_url=f"{server.url}/s/{scenario}/{name}",
            region_name="us-east-1",
            aws_access_key_id="AKIDEXAMPLE",
            aws_secret_access_key="dummy",
            config=config,
        )
        clients.append(client)
        return client

    yield make
    for c in clients:
        c.close()


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


def results(message: dict[str, Any], answers: list[str]) -> dict[str, Any]:
    """The user turn that answers each toolUse of `message`, in order."""
    uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
    return {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": u["toolUseId"], "content": [{"text": a}]}}
            for u, a in zip(uses, answers, strict=True)
        ],
    }


def accumulated(stream: Any) -> dict[str, Any]:
    """A ConverseStream's events added up into Converse's answer, as strands-agents and
    LangChain do: blocks by contentBlockIndex, toolUse input fragments joined and parsed."""
    import json

    blocks: dict[int, dict[str, Any]] = {}
    out: dict[str, Any] = {}
    for event in stream:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start["start"]["toolUse"]
            blocks[start["contentBlockIndex"]] = {"toolUse": {**use, "input": ""}}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            block = blocks.setdefault(delta["contentBlockIndex"], {})
            for key, piece in delta["delta"].items():
                if key == "text":
                    block["text"] = block.get("text", "") + piece
                elif key == "toolUse":
                    block["toolUse"]["input"] += piece["input"]
                elif key == "reasoningContent":
                    text = block.setdefault("reasoningContent", {"reasoningText": {"text": ""}})
                    inner = text["reasoningText"]
                    inner["text"] += piece.get("text", "")
                    if "signature" in piece:
                        inner["signature"] = piece["signature"]
        elif "messageStop" in event:
            out["stopReason"] = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            out["usage"] = event["metadata"]["usage"]
    for block in blocks.values():
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"])
    content = [blocks[i] for i in sorted(blocks)]
    out["output"] = {"message": {"role": "assistant", "content": content}}
    return out


@pytest.mark.parametrize("stream", [False, True])
def test_tool_loop_with_parallel_calls(
    bedrock: Any, server: ServerProcess, session: str, stream: bool
) -> None:
    client = bedrock("weather-parallel", name=f"{session}-{stream}")

    def ask(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if stream:
            answer = client.converse_stream(modelId=MODEL, messages=messages, toolConfig=TOOLS)
            return accumulated(answer["stream"])
        answer = client.converse(modelId=MODEL, messages=messages, toolConfig=TOOLS)
        assert answer["metrics"]["latencyMs"] >= 0
        return dict(answer)

    history = [user(QUESTION)]
    first = ask(history)
    assert first["stopReason"] == "tool_use"
    message = first["output"]["message"]
    assert message["content"][0] == {"text": "我先查一下。"}
    uses = [b["toolUse"] for b in message["content"][1:]]
    assert [(u["name"], u["input"]) for u in uses] == [
        ("get_weather", {"city": "北京"}),
        ("get_weather", {"city": "上海"}),
    ]
    assert all(u["toolUseId"].startswith("tooluse_") and len(u["toolUseId"]) == 30 for u in uses)
    assert uses[0]["toolUseId"] != uses[1]["toolUseId"]
    history += [message, results(message, ["25度", "22度"])]
    second = ask(history)
    assert second["stopReason"] == "end_turn"
    assert second["output"]["message"]["content"] == [{"text": "北京多云25℃，上海小雨22℃。"}]
    usage = second["usage"]
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"] > 0
    entry = server.last(f"{session}-{stream}")
    assert entry["api"] == "bedrock-converse" and entry["turn"] == 1
    assert entry["violations"] == [] and entry["stream"] is stream
    assert [r["call_id"] for r in entry["tool_results"]] == [u["toolUseId"] for u in uses]


def test_stream_and_plain_answers_agree_with_reasoning(bedrock: Any, session: str) -> None:
    client = bedrock("reasoning")
    plain = client.converse(modelId=MODEL, messages=[user("Oslo?")], toolConfig=TOOLS)
    other = bedrock("reasoning", name=f"{session}-s")  # a session of its own: same ids
    streamed = accumulated(
        other.converse_stream(modelId=MODEL, messages=[user("Oslo?")], toolConfig=TOOLS)["stream"]
    )
    content = plain["output"]["message"]["content"]
    assert content == streamed["output"]["message"]["content"]
    reasoning = content[0]["reasoningContent"]["reasoningText"]
    assert reasoning["text"] == "The user wants the weather; I should call the tool."
    assert reasoning["signature"]
    assert content[1]["toolUse"]["input"] == {"city": "Oslo"}
    assert plain["usage"] == streamed["usage"] and plain["stopReason"] == "tool_use"
    # The reasoning block goes back as the client got it, and is read as the reply's.
    history = [
        user("Oslo?"),
        plain["output"]["message"],
        results(plain["output"]["message"], ["3"]),
    ]
    again = client.converse(modelId=MODEL, messages=history, toolConfig=TOOLS)
    assert again["output"]["message"]["content"][-1] == {"text": "It is 3 °C in Oslo."}


def raw(server: ServerProcess, scenario: str, session: str, body: dict[str, Any]) -> httpx.Response:
    url = f"{server.url}/s/{scenario}/{session}/model/{MODEL}/converse-stream"
    return httpx.post(url, json=body, headers={"authorization": "AWS4-HMAC-SHA256 Credential=x"})


def frames(data: bytes) -> list[Any]:
    """The event-stream messages in `data`, as botocore's own parser reads them (it checks
    both CRCs and raises on a mismatch)."""
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return list(buffer)


def test_the_event_stream_is_aws_framing_with_checked_crcs(
    server: ServerProcess, session: str
) -> None:
    body = {"messages": [user("Paris?")], "toolConfig": TOOLS}
    response = raw(server, "weather-single", session, body)
    assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
    assert len(response.headers["x-amzn-requestid"]) == 36
    messages = frames(response.content)
    kinds = [m.headers[":event-type"] for m in messages]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    assert {m.headers[":message-type"] for m in messages} == {"event"}
    assert {m.headers[":content-type"] for m in messages} == {"application/json"}
    assert "contentBlockStart" in kinds and "contentBlockStop" in kinds
    # One flipped byte in a payload: the client's CRC check sees it.
    corrupt = bytearray(response.content)
    corrupt[len(messages[0].payload) + 40] ^= 0xFF
    with pytest.raises(ChecksumMismatch):
        frames(bytes(corrupt))
    # The log redacts the Authorization header (SigV4's credential scope included), and
    # shows the binary stream as one line per message.
    entry = server.last(session)
    assert "AWS4-HMAC-SHA256 Credential=x" not in str(entry)
    lines = entry["response"]["body"].splitlines()
    assert lines[0] == 'messageStart: {"role":"assistant"}' and lines[-1].startswith("metadata: ")


@pytest.mark.parametrize("stream", [False, True])
def test_http_faults_are_bedrock_exceptions(bedrock: Any, session: str, stream: bool) -> None:
    for scenario, status, name, text in (
        ("fault-429", 429, "ThrottlingException", "Too many requests, please wait"),
        ("fault-503", 503, "ServiceUnavailableException", "Bedrock is unable to process"),
        ("fault-529", 503, "ServiceUnavailableException", "Bedrock is unable to process"),
    ):
        client = bedrock(scenario, name=f"{session}-{stream}")
        call = client.converse_stream if stream else client.converse
        with pytest.raises(ClientError) as caught:
            call(modelId=MODEL, messages=[user("Paris?")])
        error = caught.value.response
        assert error["Error"]["Code"] == name and text in error["Error"]["Message"]
        assert error["ResponseMetadata"]["HTTPStatusCode"] == status
        headers = error["ResponseMetadata"]["HTTPHeaders"]
        assert headers["x-amzn-errortype"].startswith(name + ":")
        assert len(error["ResponseMetadata"]["RequestId"]) == 36


def test_botocore_retries_a_throttle_until_it_passes(
    bedrock: Any, server: ServerProcess, session: str
) -> None:
    """fault-429-twice: botocore's own retry (standard mode) gets through on attempt 3; a
    client that does not retry sees the ThrottlingException."""
    retrying = bedrock("fault-429-twice", Config(retries={"max_attempts": 3, "mode": "standard"}))
    answer = retrying.converse(modelId=MODEL, messages=[user("Paris?")], toolConfig=TOOLS)
    assert answer["stopReason"] == "tool_use"
    assert [e["response"]["status"] for e in server.requests(session=session)] == [429, 429, 200]
    once = bedrock("fault-429-twice", name=f"{session}-once")
    with pytest.raises(ClientError, match="ThrottlingException"):
        once.converse(modelId=MODEL, messages=[user("Paris?")], toolConfig=TOOLS)


def test_a_stream_error_is_an_exception_frame(bedrock: Any, session: str) -> None:
    client = bedrock("fault-stream-error")
    answer = client.converse_stream(modelId=MODEL, messages=[user("Paris?")])
    seen = []
    with pytest.raises(EventStreamError) as caught:
        for event in answer["stream"]:
            seen.append(next(iter(event)))
    assert len(seen) == 3 and seen[0] == "messageStart" and "messageStop" not in seen
    assert caught.value.response["Error"]["Code"] == "modelStreamErrorException"


def test_cuts_look_as_real_ones_do_to_botocore(
    bedrock: Any, server: ServerProcess, session: str
) -> None:
    """A stream cut cleanly between bytes ends without messageStop, silently (botocore's
    buffer drops the partial message): a harness must check for messageStop itself. A reset
    is a ProtocolError mid-iteration; a reset JSON answer, ConnectionClosedError."""
    clean = bedrock("fault-cut-bytes").converse_stream(modelId=MODEL, messages=[user("x")])
    kinds = [next(iter(e)) for e in clean["stream"]]
    assert "messageStop" not in kinds and kinds[0] == "messageStart"
    reset = bedrock("fault-cut-events", name=f"{session}-r").converse_stream(
        modelId=MODEL, messages=[user("x")]
    )
    with pytest.raises(ProtocolError):
        list(reset["stream"])
    with pytest.raises(ConnectionClosedError):
        bedrock("fault-cut-reset", name=f"{session}-j").converse(
            modelId=MODEL, messages=[user("x")]
        )
    response = server.requests(session=session)[0]["response"]
    assert response["delivered"]["cut"] == {"by": "truncate", "in": "text"}  # what got out
    assert response["body"].endswith("bytes of a partial message: the stream was cut]")


def test_replays_are_byte_identical(server: ServerProcess, session: str) -> None:
    body = {"messages": [user(QUESTION)], "toolConfig": TOOLS}
    first, again = (
        httpx.post(
            f"{server.url}/s/weather-parallel/{session}-{n}/model/{MODEL}/converse", json=body
        )
        for n in (1, 2)
    )
    assert first.content == again.content and first.status_code == 200
    streams = [raw(server, "weather-parallel", f"{session}-s{n}", body).content for n in (1, 2)]
    assert streams[0] == streams[1]


def test_a_bad_request_is_a_validation_exception_and_logged(
    server: ServerProcess, session: str
) -> None:
    url = f"{server.url}/s/weather-single/{session}/model/{MODEL}/converse"
    for body in (b"{not json", b'{"messages": 7}', b'{"messages": [{"role": "tool"}]}'):
        r = httpx.post(url, content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400, r.text
        assert r.headers["x-amzn-errortype"].startswith("ValidationException:")
        assert set(r.json()) == {"message"}
    assert [e["response"]["status"] for e in server.requests(session=session)] == [400, 400, 400]


def test_mockllm_url_and_the_session_assertions_read_a_bedrock_loop(mock: Any) -> None:
    """`mock.url(scenario, api="bedrock")` is boto3's endpoint_url; the session's assertions
    and verdict read Bedrock's requests as any wire's."""
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=mock.url("weather-single", api="bedrock"),
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="dummy",
        config=NO_RETRIES,
    )
    history = [user("Paris?")]
    first = client.converse(modelId=MODEL, messages=history, toolConfig=TOOLS)
    history += [first["output"]["message"], results(first["output"]["message"], ["18 °C"])]
    last = client.converse(modelId=MODEL, messages=history, toolConfig=TOOLS)
    assert last["output"]["message"]["content"] == [{"text": "It is 18 °C and sunny in Paris."}]
    mock.assert_tool_requested("get_weather", {"city": "Paris"})
    mock.assert_tool_result_fed_back("get_weather", {"city": "Paris"})
    mock.assert_all_tool_calls_answered()
    mock.assert_clean_verdict()


STRUCTURED = """\
name: bedrock-structured
turns:
  - reply: {json: valid}
  - expect: {tool_choice: {tool: get_weather}}
    reply:
      tool_calls: [{name: get_weather, generate: valid}]
"""


def test_structured_output_by_schema_and_by_forced_tool(mock: Any) -> None:
    """outputConfig.textFormat's JSON schema (a string, as Bedrock takes it) gets JSON text
    that conforms; a toolChoice forcing a tool (strands' structured_output) gets a toolUse
    whose input conforms to the tool's inputSchema."""
    import json

    import jsonschema

    mock.add_scenario(STRUCTURED)
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=mock.url("bedrock-structured", api="bedrock"),
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="dummy",
        config=NO_RETRIES,
    )
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
        "required": ["city", "celsius"],
        "additionalProperties": False,
    }
    output = {
        "textFormat": {
            "type": "json_schema",
            "structure": {"jsonSchema": {"schema": json.dumps(schema), "name": "weather"}},
        }
    }
    history = [user("Paris?")]
    first = client.converse(modelId=MODEL, messages=history, outputConfig=output)
    text = first["output"]["message"]["content"][0]["text"]
    jsonschema.validate(json.loads(text), schema)
    history += [first["output"]["message"], user("again, as a tool")]
    forced = {**TOOLS, "toolChoice": {"tool": {"name": "get_weather"}}}
    second = client.converse(modelId=MODEL, messages=history, toolConfig=forced)
    use = second["output"]["message"]["content"][0]["toolUse"]
    spec = TOOLS["tools"][0]["toolSpec"]["inputSchema"]["json"]
    jsonschema.validate(use["input"], spec)
    assert second["stopReason"] == "tool_use"
