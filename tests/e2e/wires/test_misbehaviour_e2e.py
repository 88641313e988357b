"""Replies that are valid and still wrong (docs/scenarios.md), through real HTTP and each
wire's official SDK: what each SDK shows of a refusal, a content filter, an empty reply,
reasoning alone and a blocked prompt — its own field or its own exception — and the
keep-alive comments read by the SDKs' stream accumulators, next to a hand-written SSE
reader that mishandles them (the naive harness) and fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import boto3
import httpx
import openai
import pytest
from botocore.config import Config
from google import genai
from google.genai import errors as genai_errors
from pydantic import BaseModel

from tests.support import ServerProcess

YAML = {"content-type": "application/yaml"}
OBJECT = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": OBJECT}}]
ASK = [{"role": "user", "content": "What's the weather in Paris?"}]
REFUSED = "I'm sorry, but I can't help with that request."

# Each misbehaviour on a turn of its own, picked by the user's words (a keyed turn).
KINDS = """\
name: misbehaviours
turns:
  - match: {user: {contains: refuse}}
    reply: {refusal: "I won't."}
  - match: {user: {contains: null-content}}
    reply: {empty: null}
  - match: {user: {contains: empty-string}}
    reply: {empty: ""}
  - match: {user: {contains: think}}
    reply: {reasoning: Thinking about it.}
  - match: {user: {contains: recite}}
    reply: {text: "Once upon a", filter: RECITATION}
  - match: {user: {contains: filter}}
    reply: {json: valid, finish: content_filter}
  - match: {user: {contains: blocked}, api: gemini}
    reply: {blocked: PROHIBITED_CONTENT}
"""


@pytest.fixture(scope="module")
def kinds(server: ServerProcess) -> str:
    posted = server.http.post("/_mockllm/scenarios", content=KINDS, headers=YAML)
    assert posted.status_code in (200, 201), posted.text
    return "misbehaviours"


def chat(server: ServerProcess, scenario: str, session: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.openai_url(scenario, session), api_key="k", max_retries=0)


def claude(server: ServerProcess, scenario: str, session: str) -> anthropic.Anthropic:
    url = f"{server.url}/s/{scenario}/{session}"
    return anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)


def gemini(server: ServerProcess, scenario: str, session: str) -> genai.Client:
    return genai.Client(
        api_key="k", http_options={"base_url": f"{server.url}/s/{scenario}/{session}"}
    )


def converse(server: ServerProcess, scenario: str, session: str) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=f"{server.url}/s/{scenario}/{session}",
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="dummy",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


# --- refusal -----------------------------------------------------------------------------


def test_chat_refusal_is_message_refusal_with_content_null(
    server: ServerProcess, session: str
) -> None:
    client = chat(server, "refusal", session)
    plain = client.chat.completions.create(model="gpt-4o", messages=ASK, tools=TOOLS)
    with client.chat.completions.stream(model="gpt-4o", messages=ASK, tools=TOOLS) as s:
        streamed = s.get_final_completion()
    for completion in (plain, streamed):
        message = completion.choices[0].message
        assert (message.content, message.refusal) == (None, REFUSED)
        assert completion.choices[0].finish_reason == "stop"


def test_responses_refusal_is_a_refusal_part(server: ServerProcess, session: str) -> None:
    client = chat(server, "refusal", session)
    tools: Any = [
        {"type": "function", "name": "get_weather", "parameters": OBJECT, "strict": False}
    ]
    plain = client.responses.create(model="gpt-4.1", input="Weather?", tools=tools)
    with client.responses.stream(model="gpt-4.1", input="Weather?", tools=tools) as s:
        streamed = s.get_final_response()
    for response in (plain, streamed):
        (item,) = response.output
        assert item.type == "message"
        assert [(p.type, getattr(p, "refusal", None)) for p in item.content] == [
            ("refusal", REFUSED)
        ]
        assert response.output_text == "" and response.status == "completed"


def test_anthropic_refusal_is_the_stop_reason_with_no_text(
    server: ServerProcess, session: str
) -> None:
    client = claude(server, "refusal", session)
    tools: Any = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    ask: Any = ASK
    plain = client.messages.create(
        model="claude-sonnet-4-6", max_tokens=99, messages=ask, tools=tools
    )
    with client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=99, messages=ask, tools=tools
    ) as s:
        streamed = s.get_final_message()
    for message in (plain, streamed):
        assert (message.stop_reason, message.content) == ("refusal", [])
    note = server.last(session)["response"]["notes"]
    assert any("Anthropic's refusal is its stop reason" in n for n in note)


def test_gemini_refusal_is_a_safety_stop_with_ratings_and_no_content(
    server: ServerProcess, session: str
) -> None:
    client = gemini(server, "refusal", session)
    config: Any = {
        "tools": [{"function_declarations": [{"name": "get_weather"}]}],
        "automatic_function_calling": {"disable": True},
    }
    plain = client.models.generate_content(
        model="gemini-2.5-flash", contents="Weather?", config=config
    )
    streamed = list(
        client.models.generate_content_stream(
            model="gemini-2.5-flash", contents="Weather?", config=config
        )
    )
    for response in (plain, streamed[-1]):
        (candidate,) = response.candidates or []
        assert candidate.finish_reason is not None and candidate.finish_reason.value == "SAFETY"
        assert candidate.content is None and response.text is None
        blocked = [
            r.category.value for r in candidate.safety_ratings or () if r.blocked and r.category
        ]
        assert blocked == ["HARM_CATEGORY_DANGEROUS_CONTENT"]


def test_bedrock_refusal_is_content_filtered(server: ServerProcess, session: str) -> None:
    client = converse(server, "refusal", session)
    tools = {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {}}}}]}
    ask = [{"role": "user", "content": [{"text": "Weather?"}]}]
    model = "us.anthropic.claude-sonnet-4-6"
    plain = client.converse(modelId=model, messages=ask, toolConfig=tools)
    assert plain["stopReason"] == "content_filtered"
    assert plain["output"]["message"]["content"] == []
    events = client.converse_stream(modelId=model, messages=ask, toolConfig=tools)["stream"]
    stops = [e["messageStop"]["stopReason"] for e in events if "messageStop" in e]
    assert stops == ["content_filtered"]


# --- content filter ------------------------------------------------------------------------


class Weather(BaseModel):
    city: str


@pytest.mark.parametrize("how", ["parse", "stream"])
def test_openai_parse_raises_content_filter_finish_reason_error(
    server: ServerProcess, session: str, kinds: str, how: str
) -> None:
    """The SDK's own exception for finish_reason content_filter, holding the completion."""
    client = chat(server, kinds, session)
    messages: Any = user("filter this")
    with pytest.raises(openai.ContentFilterFinishReasonError) as raised:
        if how == "parse":
            client.chat.completions.parse(
                model="gpt-4o", messages=messages, response_format=Weather
            )
        else:
            with client.chat.completions.stream(
                model="gpt-4o", messages=messages, response_format=Weather
            ) as s:
                s.get_final_completion()
    assert raised.value.completion is not None
    assert raised.value.completion.choices[0].finish_reason == "content_filter"


def test_a_stream_that_ends_in_a_filter_on_every_sse_wire(
    server: ServerProcess, session: str
) -> None:
    """The text comes, then the filter's stop: the accumulators keep the text and the stop."""
    half = "Sure. To make it at home you will first need to"
    openai_client = chat(server, "content-filter", session)  # held: a dropped client closes
    with openai_client.chat.completions.stream(model="gpt-4o", messages=ASK, tools=TOOLS) as s:
        chunks = [e.chunk for e in s if e.type == "chunk"]
    assert chunks[-1].choices[0].finish_reason == "content_filter"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == half
    tools: Any = [
        {"type": "function", "name": "get_weather", "parameters": OBJECT, "strict": False}
    ]
    with openai_client.responses.stream(model="gpt-4.1", input="Weather?", tools=tools) as r:
        last = [e for e in r][-1]
    assert last.type == "response.incomplete"
    details = last.response.incomplete_details
    assert details is not None and details.reason == "content_filter"
    assert last.response.output_text == half
    anthropic_tools: Any = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    ask: Any = ASK
    anthropic_client = claude(server, "content-filter", session)
    with anthropic_client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=99, messages=ask, tools=anthropic_tools
    ) as m:
        message = m.get_final_message()
    assert message.stop_reason == "refusal" and message.content[0].type == "text"
    assert message.content[0].text == half


def test_gemini_names_the_filter_that_stopped_it(
    server: ServerProcess, session: str, kinds: str
) -> None:
    client = gemini(server, kinds, session)
    for response in (
        client.models.generate_content(model="gemini-2.5-flash", contents="recite it"),
        list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="recite it"))[
            -1
        ],
    ):
        (candidate,) = response.candidates or []
        assert candidate.finish_reason is not None
        assert candidate.finish_reason.value == "RECITATION"
    assert (
        client.models.generate_content(model="gemini-2.5-flash", contents="recite it").text
        == "Once upon a"
    )


def test_gemini_blocked_prompt_has_feedback_and_no_candidate(
    server: ServerProcess, session: str, kinds: str
) -> None:
    client = gemini(server, kinds, session)
    plain = client.models.generate_content(model="gemini-2.5-flash", contents="blocked words")
    (streamed,) = list(
        client.models.generate_content_stream(model="gemini-2.5-flash", contents="blocked words")
    )
    for response in (plain, streamed):
        assert response.candidates is None and response.text is None
        feedback = response.prompt_feedback
        assert feedback is not None and feedback.block_reason is not None
        assert feedback.block_reason.value == "PROHIBITED_CONTENT"


def test_a_blocked_prompt_is_refused_at_load_naming_the_wires(server: ServerProcess) -> None:
    text = "name: blocked-anywhere\nturns:\n  - reply: {blocked: SAFETY}\n"
    answer = server.http.post("/_mockllm/scenarios", content=text, headers=YAML)
    assert answer.status_code == 400
    (problem,) = answer.json()["error"]["problems"]
    assert problem.startswith("<POST /_mockllm/scenarios>:3:22: turns[0].reply.blocked: ")
    wires = "openai-chat, openai-responses, anthropic, bedrock-converse, bedrock-invoke, vertex-anthropic"
    assert f"cannot be carried by {wires}" in problem


# --- empty replies and reasoning alone --------------------------------------------------


def test_chat_empty_reply_is_content_null_or_empty_string(
    server: ServerProcess, session: str, kinds: str
) -> None:
    client = chat(server, kinds, session)
    for words, content in (("null-content", None), ("empty-string", "")):
        messages: Any = user(words)
        plain = client.chat.completions.create(model="gpt-4o", messages=messages)
        with client.chat.completions.stream(model="gpt-4o", messages=messages) as s:
            streamed = s.get_final_completion()
        for completion in (plain, streamed):
            message = completion.choices[0].message
            assert (message.content, message.tool_calls, message.refusal) == (content, None, None)
            assert completion.choices[0].finish_reason == "stop"


def test_every_other_wire_has_one_empty_shape(
    server: ServerProcess, session: str, kinds: str
) -> None:
    responses = chat(server, kinds, session).responses.create(model="gpt-4.1", input="null-content")
    assert (responses.output, responses.status, responses.output_text) == ([], "completed", "")
    ask: Any = user("null-content")
    message = claude(server, kinds, session).messages.create(
        model="claude-sonnet-4-6", max_tokens=9, messages=ask
    )
    assert (message.content, message.stop_reason) == ([], "end_turn")
    google = gemini(server, kinds, session)  # held: a dropped client closes its transport
    response = google.models.generate_content(model="gemini-2.5-flash", contents="null-content")
    (candidate,) = response.candidates or []
    assert candidate.content is not None and candidate.content.parts is None
    assert candidate.finish_reason is not None and candidate.finish_reason.value == "STOP"
    said = converse(server, kinds, session).converse(
        modelId="us.anthropic.claude-sonnet-4-6",
        messages=[{"role": "user", "content": [{"text": "null-content"}]}],
    )
    assert (said["output"]["message"]["content"], said["stopReason"]) == ([], "end_turn")


def test_reasoning_alone_on_every_wire(server: ServerProcess, session: str, kinds: str) -> None:
    ask: Any = user("think")
    completion = chat(server, kinds, session).chat.completions.create(model="m", messages=ask)
    message = completion.choices[0].message
    assert message.content == ""
    assert (message.model_extra or {})["reasoning_content"] == "Thinking about it."
    response = chat(server, kinds, session).responses.create(model="gpt-4.1", input="think")
    assert [i.type for i in response.output] == ["reasoning"] and response.output_text == ""
    claude_reply = claude(server, kinds, session).messages.create(
        model="claude-sonnet-4-6", max_tokens=9, messages=ask
    )
    assert [b.type for b in claude_reply.content] == ["thinking"]
    google = gemini(server, kinds, session)  # held: a dropped client closes its transport
    gemini_reply = google.models.generate_content(model="gemini-2.5-flash", contents="think")
    (candidate,) = gemini_reply.candidates or []
    assert candidate.content is not None
    assert [(p.thought, p.text) for p in candidate.content.parts or ()] == [
        (True, "Thinking about it.")
    ]


# --- the misbehave fault and chaos -------------------------------------------------------


def test_chaos_draws_misbehaving_replies(server: ServerProcess, session: str) -> None:
    text = "name: chaos-refuses\nchaos: {refusal: 1.0, seed: 1}\nturns: [{reply: {text: hi}}]\n"
    assert server.http.post("/_mockllm/scenarios", content=text, headers=YAML).status_code in (
        200,
        201,
    )
    completion = chat(server, "chaos-refuses", session).chat.completions.create(
        model="m", messages=ASK
    )
    assert completion.choices[0].message.refusal == REFUSED
    fault = server.last(session)["response"]["fault"]
    assert fault["kind"] == "refusal" and fault["why"].startswith("chaos: seed 1")


def test_a_misbehaving_reply_is_the_same_bytes_every_time(
    server: ServerProcess, session: str
) -> None:
    """Determinism: the same scenario and request give byte-identical answers."""
    for scenario in ("refusal", "content-filter"):
        url = server.openai_url(scenario, f"{session}-a") + "/chat/completions"
        again = server.openai_url(scenario, f"{session}-b") + "/chat/completions"
        body = {"model": "m", "messages": ASK, "tools": TOOLS, "stream": True}
        assert httpx.post(url, json=body).content == httpx.post(again, json=body).content


# --- keep-alive comments ---------------------------------------------------------------------


def test_openai_and_anthropic_accumulators_read_keep_alive_comments(
    server: ServerProcess, session: str
) -> None:
    client = chat(server, "keep-alive-comments", session)
    with client.chat.completions.stream(model="gpt-4o", messages=ASK, tools=TOOLS) as s:
        completion = s.get_final_completion()
    (call,) = completion.choices[0].message.tool_calls or []
    assert json.loads(call.function.arguments) == {"city": "Paris", "unit": "celsius"}
    tools: Any = [
        {"type": "function", "name": "get_weather", "parameters": OBJECT, "strict": False}
    ]
    responses_client = chat(server, "keep-alive-comments", f"{session}-r")
    with responses_client.responses.stream(model="gpt-4.1", input="Weather?", tools=tools) as r:
        response = r.get_final_response()
    assert [i.type for i in response.output] == ["function_call"]
    anthropic_tools: Any = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    ask: Any = ASK
    anthropic_client = claude(server, "keep-alive-comments", f"{session}-a")
    with anthropic_client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=99, messages=ask, tools=anthropic_tools
    ) as m:
        message = m.get_final_message()
    assert message.stop_reason == "tool_use"
    assert message.content[0].type == "tool_use"
    assert message.content[0].input == {"city": "Paris", "unit": "celsius"}


def test_google_genai_fails_on_a_keep_alive_comment(server: ServerProcess, session: str) -> None:
    """google-genai's stream reader takes a line that is not `data: ` for a line of a JSON
    error body: the first comment ends the stream (docs/failure-modes.md)."""
    client = gemini(server, "keep-alive-comments", session)
    config: Any = {"tools": [{"function_declarations": [{"name": "get_weather"}]}]}
    with pytest.raises(genai_errors.UnknownApiResponseError, match="OPENROUTER PROCESSING"):
        list(
            client.models.generate_content_stream(
                model="gemini-2.5-flash", contents="Weather?", config=config
            )
        )


def test_bedrock_streams_without_comments_and_says_so(server: ServerProcess, session: str) -> None:
    client = converse(server, "keep-alive-comments", session)
    events = client.converse_stream(
        modelId="us.anthropic.claude-sonnet-4-6",
        messages=[{"role": "user", "content": [{"text": "Weather?"}]}],
        toolConfig={"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {}}}}]},
    )["stream"]
    assert [e["messageStop"]["stopReason"] for e in events if "messageStop" in e] == ["tool_use"]
    notes = server.last(session)["response"]["notes"]
    assert any("keep_alive not sent" in n for n in notes)


def raw_stream(server: ServerProcess, session: str) -> bytes:
    url = server.openai_url("keep-alive-comments", session) + "/chat/completions"
    body = {"model": "m", "messages": ASK, "tools": TOOLS, "stream": True}
    return httpx.post(url, json=body).content


def naive_reemitting(raw: bytes) -> Iterator[Any]:
    """A gateway's SSE relay that re-emits every line it does not know as `data:` (as
    mnfst/llm-gateway #2053 did): a comment becomes data, which json.loads refuses."""
    for line in raw.decode().split("\n"):
        if line.startswith("data: "):
            line = line[len("data: ") :]
        elif not line:
            continue
        if line != "[DONE]":
            yield json.loads(line)


def naive_blank_line_is_an_event(raw: bytes) -> Iterator[Any]:
    """A reader that dispatches every block ended by a blank line, data or not (the
    openai-python #2722 case): the empty block after a comment gives json.loads("")."""
    for block in raw.decode().split("\n\n")[:-1]:
        data = "\n".join(x[6:] for x in block.split("\n") if x.startswith("data: "))
        if data != "[DONE]":
            yield json.loads(data)


def spec_reader(raw: bytes) -> Iterator[Any]:
    """As the SSE spec reads: comments skipped, a block without data dispatches nothing."""
    for block in raw.decode().split("\n\n"):
        data = [x[6:] for x in block.split("\n") if x.startswith("data: ")]
        if data and data != ["[DONE]"]:
            yield json.loads("\n".join(data))


@pytest.mark.parametrize("naive", [naive_reemitting, naive_blank_line_is_an_event])
def test_a_naive_sse_reader_breaks_on_keep_alive_comments_and_a_spec_reader_does_not(
    server: ServerProcess, session: str, naive: Any
) -> None:
    raw = raw_stream(server, session)
    assert raw.startswith(b": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n")
    with pytest.raises(json.JSONDecodeError):
        list(naive(raw))
    chunks = list(spec_reader(raw))
    calls = [c["choices"][0]["delta"].get("tool_calls") for c in chunks if c["choices"]]
    arguments = "".join(t[0]["function"]["arguments"] for t in calls if t)
    assert json.loads(arguments) == {"city": "Paris", "unit": "celsius"}
    # The same stream without the comments: the naive readers get through it.
    plain = b"".join(b + b"\n\n" for b in raw.split(b"\n\n") if b and not b.startswith(b":"))
    assert list(naive(plain)) == chunks
