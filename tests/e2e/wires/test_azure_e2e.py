"""Azure OpenAI (docs/azure.md) through real HTTP with the clients Azure users run:
`openai.AzureOpenAI` (its deployment routes, `api-key` or an Entra token) and LangChain's
`AzureChatOpenAI`; streams are read with the SDK's own accumulator. Each failure mode has
its two sides: the harness that mishandles it fails, the one that handles it passes."""

from __future__ import annotations

import contextlib
import io
import json
import re
from typing import Any

import httpx
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllm import Client
from tests.e2e.docs.test_readme import claimed_output
from tests.support import ROOT, ServerProcess
from tests.support.hypothesis_profiles import examples

VERSION = "2024-10-21"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
PARIS = {"role": "user", "content": "What is the weather in Paris?"}
SAFE = {"filtered": False, "severity": "safe"}
FILTERED_REPLY = """
name: azure-filtered-reply
turns:
  - reply:
      text: Here is how the
      finish: content_filter
"""


def azure(server: ServerProcess, scenario: str, session: str, **auth: Any) -> openai.AzureOpenAI:
    endpoint = Client(server.url).url(scenario, session, api="azure")
    auth = auth or {"api_key": "azure-key-0123456789"}
    return openai.AzureOpenAI(azure_endpoint=endpoint, api_version=VERSION, max_retries=0, **auth)


def test_a_tool_loop_through_azure_openai_with_its_annotations(
    server: ServerProcess, session: str
) -> None:
    with azure(server, "weather-single", session) as sdk:
        raw = sdk.chat.completions.with_raw_response.create(
            model="my-gpt-4o", messages=[PARIS], tools=[WEATHER]
        )
        first = raw.parse()
        call = first.choices[0].message.tool_calls[0]
        assert (call.function.name, json.loads(call.function.arguments)) == (
            "get_weather",
            {"city": "Paris"},
        )
        answer = {"role": "tool", "tool_call_id": call.id, "content": "18 °C"}
        history = [PARIS, first.choices[0].message, answer]
        final = sdk.chat.completions.create(model="my-gpt-4o", messages=history, tools=[WEATHER])
    assert raw.http_request.url.path.endswith("/openai/deployments/my-gpt-4o/chat/completions")
    assert raw.http_request.url.params["api-version"] == VERSION
    body = json.loads(raw.http_response.text)
    assert list(body) == sorted(body)  # Azure's key order
    (prompt,) = body["prompt_filter_results"]
    assert prompt["content_filter_results"]["jailbreak"] == {"filtered": False, "detected": False}
    assert body["choices"][0]["content_filter_results"] == {}  # a call: nothing to judge
    assert final.model == "my-gpt-4o"  # the deployment is the model
    text = final.choices[0].model_extra["content_filter_results"]
    assert text == {c: SAFE for c in ("hate", "self_harm", "sexual", "violence")}
    entries = Client(server.url).session(session).requests()
    assert [e.turn for e in entries] == [0, 1] and entries[0].api == "openai-chat"
    assert entries[0].headers["api-key"].startswith("[redacted")  # never logged as sent
    assert Client(server.url).session(session).verdict().ok


def test_an_entra_token_is_accepted_and_redacted(server: ServerProcess, session: str) -> None:
    with azure(server, "hello", session, azure_ad_token="eyJ0eXAiOiJKV1Qi.entra") as sdk:
        reply = sdk.chat.completions.create(model="gpt-4o", messages=[PARIS])
    assert reply.choices[0].message.content
    (entry,) = Client(server.url).session(session).requests()
    assert entry.headers["authorization"].startswith("[redacted")


def test_parallel_calls_streamed_through_the_sdk_accumulator(
    server: ServerProcess, session: str
) -> None:
    ask = {"role": "user", "content": "北京和上海天气？"}
    with (
        azure(server, "weather-parallel", session) as sdk,
        sdk.chat.completions.stream(model="gpt-4o", messages=[ask], tools=[WEATHER]) as stream,
    ):
        for _ in stream:
            pass
        completion = stream.get_final_completion()
    calls = completion.choices[0].message.tool_calls or []
    assert [json.loads(c.function.arguments)["city"] for c in calls] == ["北京", "上海"]
    assert len({c.id for c in calls}) == 2


def naive_text(stream: Any) -> str:
    """What many harnesses did: `choices[0]` of every chunk (mentat#429, autogen#6465)."""
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream)


def careful_text(stream: Any) -> str:
    return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)


def test_the_first_chunk_has_no_choices_both_sides(server: ServerProcess, session: str) -> None:
    with azure(server, "hello", session) as sdk:
        with pytest.raises(IndexError):  # Azure's prompt-filter chunk: choices == []
            naive_text(sdk.chat.completions.create(model="gpt-4o", messages=[PARIS], stream=True))
        chunks: list[Any] = list(
            sdk.chat.completions.create(model="gpt-4o", messages=[PARIS], stream=True)
        )
        whole = sdk.chat.completions.create(model="gpt-4o", messages=[PARIS])
    assert chunks[0].choices == [] and chunks[0].model_extra["prompt_filter_results"]
    assert careful_text(iter(chunks)) == whole.choices[0].message.content


def filtered_prompt_harness(sdk: openai.AzureOpenAI, careful: bool) -> str:
    """One turn of a chat app: a careful one tells the user which category the filter
    flagged; a careless one lets the 400 end the session."""
    try:
        reply = sdk.chat.completions.create(model="gpt-4o", messages=[PARIS])
    except openai.BadRequestError as e:
        if not careful or e.code != "content_filter":
            raise
        inner = e.body["innererror"]
        flagged = [k for k, v in inner["content_filter_result"].items() if v["filtered"]]
        return f"blocked: {', '.join(flagged)}"
    return reply.choices[0].message.content or ""


def test_the_prompt_filter_raises_bad_request_with_the_body_readable(
    server: ServerProcess, session: str
) -> None:
    with (
        azure(server, "azure-content-filter", session) as sdk,
        pytest.raises(openai.BadRequestError) as raised,
    ):
        sdk.chat.completions.create(model="gpt-4o", messages=[PARIS])
    e = raised.value
    assert (e.status_code, e.code, e.param, e.type) == (400, "content_filter", "prompt", None)
    body: dict[str, Any] = e.body  # type: ignore[assignment]
    assert body["status"] == 400 and body["message"].startswith("The response was filtered")
    result = body["innererror"]["content_filter_result"]
    assert body["innererror"]["code"] == "ResponsibleAIPolicyViolation"
    assert result["violence"] == {"filtered": True, "severity": "high"}
    assert result["hate"] == SAFE and result["jailbreak"] == {"filtered": False, "detected": False}


def test_the_prompt_filter_both_sides(server: ServerProcess, session: str) -> None:
    with (
        azure(server, "azure-content-filter", session) as sdk,
        pytest.raises(openai.BadRequestError),
    ):
        filtered_prompt_harness(sdk, careful=False)
    with azure(server, "azure-content-filter", session + "-careful") as sdk:
        assert filtered_prompt_harness(sdk, careful=True) == "blocked: violence"
        # asked again (the fault spoils the first attempt only), the model answers
        assert filtered_prompt_harness(sdk, careful=True).startswith("I can help")


def test_a_filtered_reply_finishes_content_filter_streamed_and_not(
    server: ServerProcess, session: str
) -> None:
    name = Client(server.url).add_scenario(FILTERED_REPLY)
    with azure(server, name, session) as sdk:
        whole = sdk.chat.completions.create(model="gpt-4o", messages=[PARIS])
    with azure(server, name, session + "-s") as sdk:
        chunks: list[Any] = list(
            sdk.chat.completions.create(model="gpt-4o", messages=[PARIS], stream=True)
        )
        # the SDK's stream helper refuses a filtered reply, as it does against Azure
        with (
            pytest.raises(openai.ContentFilterFinishReasonError),
            sdk.chat.completions.stream(model="gpt-4o", messages=[PARIS]) as stream,
        ):
            for _ in stream:
                pass
            stream.get_final_completion()
    assert whole.choices[0].finish_reason == "content_filter"
    flagged = whole.choices[0].model_extra["content_filter_results"]["violence"]
    assert flagged == {"filtered": True, "severity": "high"}
    (finish,) = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finish.choices[0].finish_reason == "content_filter"
    assert finish.choices[0].model_extra["content_filter_results"]["violence"]["filtered"]


def test_a_history_rule_both_sides_in_openai_words(server: ServerProcess, session: str) -> None:
    with azure(server, "weather-single", session) as sdk:
        first = sdk.chat.completions.create(model="gpt-4o", messages=[PARIS], tools=[WEATHER])
        message = first.choices[0].message
        with pytest.raises(openai.BadRequestError) as refused:  # the call left unanswered
            sdk.chat.completions.create(
                model="gpt-4o", messages=[PARIS, message, PARIS], tools=[WEATHER]
            )
        answer = {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "18 °C"}
        kept = sdk.chat.completions.create(
            model="gpt-4o", messages=[PARIS, message, answer], tools=[WEATHER]
        )
    assert "tool_call_id" in refused.value.message
    assert kept.choices[0].finish_reason == "stop"


def test_the_v1_base_and_responses_routes(server: ServerProcess, session: str) -> None:
    endpoint = Client(server.url).url("hello", session, api="azure")
    with openai.OpenAI(base_url=endpoint + "/openai/v1", api_key="k", max_retries=0) as sdk:
        chat = sdk.chat.completions.create(model="gpt-4o", messages=[PARIS])
        response = sdk.responses.create(model="gpt-4o", input="Hi")
    assert chat.model_extra["prompt_filter_results"] and response.output_text
    with azure(server, "hello", session + "-r") as sdk:
        raw = sdk.responses.with_raw_response.create(model="gpt-4o", input="Hi")
    assert raw.http_request.url.path.endswith("/openai/responses")
    assert raw.parse().output_text == chat.choices[0].message.content


def test_the_same_requests_get_the_same_bytes(server: ServerProcess, session: str) -> None:
    url = f"{server.url}/s/weather-parallel/%s/openai/deployments/d/chat/completions"
    ask = {"role": "user", "content": "北京和上海天气？"}
    body = {"messages": [ask], "tools": [WEATHER], "stream": True}
    answers = [httpx.post(url % f"{session}-{i}", json=body).content for i in range(2)]
    assert answers[0] == answers[1] and answers[0].startswith(b'data: {"choices":[],"created":0')


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    deployment=st.text(
        st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="/?#%"),
        max_size=40,
    ),
    body=st.one_of(
        st.dictionaries(
            st.sampled_from(["model", "messages", "stream", "tools", "n"]),
            st.one_of(st.none(), st.integers(), st.text(max_size=5), st.just([PARIS])),
            max_size=4,
        ),
        st.lists(st.integers(), max_size=2),
    ),
)
def test_hostile_azure_requests_never_fail_the_server(
    server: ServerProcess, deployment: str, body: Any
) -> None:
    route = f"openai/deployments/{deployment}/chat/completions" if deployment.strip() else ""
    url = f"{server.url}/s/hello/{route or 'openai/v1/chat/completions'}?api-version=x"
    r = httpx.post(url, json=body, headers={"api-key": "k"})
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        assert set(r.json()["error"]) >= {"message", "code"}
    assert httpx.get(f"{server.url}/_mockllm/health").status_code == 200


def test_the_docs_recipes_print_what_they_claim(server: ServerProcess) -> None:
    """docs/azure.md: each Python block, against this server, prints what its comments say."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs/azure.md").read_text(), re.S)
    assert len(blocks) == 3
    for code in blocks:
        for name in re.findall(r"/s/[\w-]+/(az-[\w-]+)", code):
            Client(server.url).reset(name)  # a rerun starts clean
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code.replace("http://127.0.0.1:8000", server.url), "azure.md", "exec"), {})
        assert out.getvalue().splitlines() == claimed_output(code, "#"), code


def test_embeddings_on_the_deployment_route(server: ServerProcess, session: str) -> None:
    with azure(server, "hello", session) as sdk:
        raw = sdk.embeddings.with_raw_response.create(model="my-embed", input=["a cat", "a dog"])
        again = sdk.embeddings.create(model="my-embed", input=["a cat"])
    made = raw.parse()
    assert raw.http_request.url.path.endswith("/openai/deployments/my-embed/embeddings")
    assert made.model == "my-embed" and len(made.data) == 2
    assert made.data[0].embedding == again.data[0].embedding  # the same text, the same vector
