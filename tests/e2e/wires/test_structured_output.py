"""Structured output (docs/scenarios.md): a reply generated from the JSON Schema the request
asks for, read by each SDK's own structured-output helper with a pydantic model — valid, and
the failure kinds, which the helpers must reject. Real HTTP, official SDKs."""

from __future__ import annotations

import json
from typing import Any, Literal

import anthropic
import httpx
import jsonschema
import openai
import pydantic
import pytest
from google import genai
from google.genai import types

from tests.support import ServerProcess
from tests.support.clients import openai_client
from tests.support.doc_examples import examples_server_fixture


class Weather(pydantic.BaseModel):
    # strict and closed, as the schema it sends: otherwise pydantic coerces "21.5" to a number
    # (wrong_type) and ignores an undeclared property (extra_property).
    model_config = pydantic.ConfigDict(extra="forbid", strict=True)

    city: str
    temperature: float
    unit: Literal["celsius", "fahrenheit"]


KINDS = (
    "valid",
    "missing_required",
    "wrong_type",
    "enum_violation",
    "extra_property",
    "not_an_object",
    "double_encoded",
    "not_json",
    "in_prose",
)
EXTRA = {
    f"json-{kind}": f"name: json-{kind}\nturns:\n  - reply: {{json: {kind}}}\n" for kind in KINDS
}
EXTRA["plain-text"] = "name: plain-text\nturns:\n  - reply: {text: 'not json at all'}\n"


server = examples_server_fixture(extra=EXTRA)


_openai = openai_client


ASK = [{"role": "user", "content": "weather in Paris as JSON"}]


def test_chat_completions_parse_valid(server: ServerProcess, session: str) -> None:
    with _openai(server, "json-valid", session) as client:
        done = client.chat.completions.parse(model="gpt-4o", messages=ASK, response_format=Weather)
    parsed = done.choices[0].message.parsed
    assert isinstance(parsed, Weather) and parsed.unit in ("celsius", "fahrenheit")
    asked = server.last(session)["request"]["response_format"]["json_schema"]["schema"]
    jsonschema.validate(json.loads(done.choices[0].message.content or ""), asked)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "valid"])
def test_chat_completions_parse_rejects_each_failure_kind(
    server: ServerProcess, session: str, kind: str
) -> None:
    client = _openai(server, f"json-{kind}", session)
    with client, pytest.raises(pydantic.ValidationError):
        client.chat.completions.parse(model="gpt-4o", messages=ASK, response_format=Weather)
    text = server.last(session)["response"]["text"]
    schema = Weather.model_json_schema()
    if kind == "not_json":
        with pytest.raises(json.JSONDecodeError):
            json.loads(text)
    elif kind == "in_prose":
        assert text.startswith("Here is the JSON") and "{" in text
    else:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(json.loads(text), schema)


def test_same_request_same_bytes(server: ServerProcess, session: str) -> None:
    """In every run (here: two sessions) the same request gets the same bytes."""
    urls = [server.openai_url("json-valid", session + s) + "/chat/completions" for s in "ab"]
    body = {
        "model": "m",
        "messages": ASK,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "w", "schema": Weather.model_json_schema()},
        },
    }
    first, second = (httpx.post(url, json=body) for url in urls)
    assert first.content == second.content


def test_json_object_mode_gets_a_json_object(server: ServerProcess, session: str) -> None:
    with _openai(server, "json-valid", session) as client:
        done = client.chat.completions.create(
            model="m", messages=ASK, response_format={"type": "json_object"}
        )
    assert isinstance(json.loads(done.choices[0].message.content or ""), dict)


def test_without_json_the_turn_text_is_sent_as_is(server: ServerProcess, session: str) -> None:
    client = _openai(server, "plain-text", session)
    with client, pytest.raises(pydantic.ValidationError):
        client.chat.completions.parse(model="m", messages=ASK, response_format=Weather)
    assert server.last(session)["response"]["text"] == "not json at all"


def test_json_without_a_json_request_is_refused(server: ServerProcess, session: str) -> None:
    with (
        _openai(server, "json-valid", session) as client,
        pytest.raises(openai.BadRequestError) as e,
    ):
        client.chat.completions.create(model="m", messages=ASK)
    assert "json: valid needs a request that asks for JSON output" in e.value.body["message"]


def test_the_structured_doc_example_valid_invalid_refusal(
    server: ServerProcess, session: str
) -> None:
    history: list[Any] = list(ASK)
    with _openai(server, "structured", session) as client:
        first = client.chat.completions.parse(model="m", messages=history, response_format=Weather)
        assert isinstance(first.choices[0].message.parsed, Weather)
        history += [
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": "again"},
        ]
        with pytest.raises(pydantic.ValidationError):
            client.chat.completions.parse(model="m", messages=history, response_format=Weather)
        history += [
            {"role": "assistant", "content": server.last(session)["response"]["text"]},
            {"role": "user", "content": "and now?"},
        ]
        third = client.chat.completions.parse(model="m", messages=history, response_format=Weather)
    message = third.choices[0].message
    assert (message.parsed, message.refusal, message.content) == (
        None,
        "I can't help with that.",
        None,
    )


def test_refusal_streams_with_the_sdk_accumulator(server: ServerProcess, session: str) -> None:
    body = [
        *ASK,
        {"role": "assistant", "content": "{}"},
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "{}"},
        {"role": "user", "content": "y"},
    ]
    with (
        _openai(server, "structured", session) as client,
        client.chat.completions.stream(model="m", messages=body, response_format=Weather) as stream,
    ):
        done = stream.get_final_completion()
    assert done.choices[0].message.refusal == "I can't help with that."
    assert done.choices[0].message.parsed is None


def test_responses_parse_valid_invalid_and_refusal(server: ServerProcess, session: str) -> None:
    with _openai(server, "json-valid", session) as client:
        done = client.responses.parse(model="gpt-4o", input="weather", text_format=Weather)
    assert isinstance(done.output_parsed, Weather)
    client = _openai(server, "json-wrong_type", session)
    with client, pytest.raises(pydantic.ValidationError):
        client.responses.parse(model="gpt-4o", input="weather", text_format=Weather)
    history = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "{}"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": "{}"},
        {"role": "user", "content": "c"},
    ]
    with _openai(server, "structured", session) as client:
        refused = client.responses.parse(model="gpt-4o", input=history, text_format=Weather)
        with client.responses.stream(
            model="gpt-4o",
            input=history,
            text_format=Weather,
        ) as stream:
            streamed = stream.get_final_response()
    for response in (refused, streamed):
        part = response.output[0].content[0]
        assert part.type == "refusal" and part.refusal == "I can't help with that."
        assert response.output_parsed is None


def test_google_genai_response_parsed(server: ServerProcess, session: str) -> None:
    def ask(scenario: str) -> Any:
        client = genai.Client(
            api_key="k", http_options={"base_url": f"{server.url}/s/{scenario}/{session}"}
        )
        return client.models.generate_content(
            model="gemini-2.5-flash",
            contents="weather in Paris",
            config=types.GenerateContentConfig(
                response_mime_type="application/json", response_schema=Weather
            ),
        )

    assert isinstance(ask("json-valid").parsed, Weather)
    assert ask("json-enum_violation").parsed is None  # google-genai leaves an invalid one unparsed
    assert ask("json-not_json").parsed is None


def test_anthropic_messages_parse(server: ServerProcess, session: str) -> None:
    def ask(scenario: str) -> Any:
        url = f"{server.url}/s/{scenario}/{session}"
        with anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client:
            return client.messages.parse(
                model="claude-sonnet-4-6",
                max_tokens=512,
                messages=[{"role": "user", "content": "weather in Paris"}],
                output_format=Weather,
            )

    assert isinstance(ask("json-valid").parsed_output, Weather)
    assert "output_config" in server.last(session)["request"]
    with pytest.raises(pydantic.ValidationError):
        ask("json-missing_required")
