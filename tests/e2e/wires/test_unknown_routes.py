"""A route no adapter serves answers in a shape the asking SDK reads (issue 38, 8): each
SDK shows mockllm's message, which names the APIs served. botocore (AWS Bedrock, strands'
default model) showed an empty message when it got OpenAI's shape."""

from __future__ import annotations

import anthropic
import boto3
import botocore.exceptions
import openai
import pytest
from botocore.config import Config
from google import genai
from google.genai import errors

from tests.support import ServerProcess

SERVED = "APIs served: openai-chat, openai-responses, anthropic, gemini"


def test_botocore_reads_the_404(server: ServerProcess, session: str) -> None:
    """bedrock-runtime's ApplyGuardrail, an operation mockllm does not serve (Converse and
    InvokeModel it does): botocore shows the message, in Bedrock's own error shape."""
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=f"{server.url}/s/hello/{session}",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"max_attempts": 0}),
    )
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        client.apply_guardrail(
            guardrailIdentifier="g",
            guardrailVersion="1",
            source="INPUT",
            content=[{"text": {"text": "hi"}}],
        )
    error = caught.value.response["Error"]
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert error["Code"] == "ResourceNotFoundException"
    assert error["Message"].startswith("mockllm: no route POST /") and SERVED in error["Message"]
    entry = server.last(session)
    assert entry["response"]["error"]["kind"] == "route_not_found"


def test_vertex_ai_reads_the_404(server: ServerProcess, session: str) -> None:
    """google-genai in Vertex AI (express) mode, asking for a method mockllm does not serve
    (generateContent is served: tests/e2e/wires/test_vertex_gemini.py): Vertex's error shape."""
    with (
        genai.Client(
            vertexai=True,
            api_key="test",
            http_options={"base_url": f"{server.url}/s/hello/{session}"},
        ) as client,
        pytest.raises(errors.ClientError) as caught,
    ):
        client.models.embed_content(model="text-embedding-005", contents="hi")
    assert caught.value.code == 404 and caught.value.status == "NOT_FOUND"
    assert SERVED in str(caught.value.message)


def test_anthropic_and_openai_read_the_404(server: ServerProcess, session: str) -> None:
    base = f"{server.url}/s/hello/{session}/v2"
    ask = [{"role": "user", "content": "hi"}]
    claude = anthropic.Anthropic(base_url=base, api_key="k", max_retries=0)
    with claude, pytest.raises(anthropic.NotFoundError) as said:
        claude.messages.create(model="m", max_tokens=8, messages=ask)
    assert SERVED in said.value.message and said.value.body["error"]["type"] == "not_found_error"
    gpt = openai.OpenAI(base_url=base, api_key="k", max_retries=0)
    with gpt, pytest.raises(openai.NotFoundError) as told:
        gpt.chat.completions.create(model="m", messages=ask)
    assert SERVED in told.value.message and told.value.code == "route_not_found"
