"""`mockllm.Client` and `Session` against a real `mockllm serve`: the log as typed records,
scenarios added from text, mappings, files and folders, clearing, resetting, assertions."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path
from typing import Any, cast

import anthropic
import openai
import pytest
from google import genai

import mockllm
from mockllm import Client, ClientError, LogEntry, ScenarioError, ScenarioInfo, Session
from mockllm.core.conversation import Message, ToolCall, ToolResult
from tests.support import TOOL_PARAMETERS, ServerProcess

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS}}]


def client_of(mock: Session) -> Client:
    """`Session.client` is typed as the `Server` protocol, which lacks what only `Client`
    has (add_scenarios, scenarios, requests(since=)); these sessions come from a Client."""
    return cast(Client, mock.client)


def weather_round_trip(mock: Session, answer: bool = True) -> ToolCall:
    """The README's loop: one call, its result, the final answer."""
    with openai.OpenAI(base_url=mock.url("weather-single"), api_key="t", max_retries=0) as sdk:
        messages: list[dict[str, object]] = [{"role": "user", "content": "Paris?"}]
        reply = sdk.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        call = reply.choices[0].message.tool_calls[0]
        if answer:
            messages += [
                reply.choices[0].message.model_dump(exclude_unset=True),
                {"role": "tool", "tool_call_id": call.id, "content": "18 °C"},
            ]
            sdk.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        return ToolCall(call.id, call.function.name, call.function.arguments)


def test_health_and_scenarios(server: ServerProcess) -> None:
    client = Client(server.url + "/")
    assert client.health()["status"] == "ok"
    assert "weather-single" in {s.name for s in client.scenarios()}


def test_urls_carry_scenario_and_session(server: ServerProcess) -> None:
    client = Client(server.url)
    assert client.url("hello") == f"{server.url}/s/hello/v1"
    assert client.session("t1").url("hello") == f"{server.url}/s/hello/t1/v1"
    assert client.session("t1").url("hello", api="anthropic") == f"{server.url}/s/hello/t1"
    assert client.session("t1").url("hello", api="gemini") == f"{server.url}/s/hello/t1"
    assert client.session("t1").url("hello", api="bedrock") == f"{server.url}/s/hello/t1"
    assert client.session("t1").url("hello", api="azure") == f"{server.url}/s/hello/t1"
    mistral = client.session("t1").url("hello", flavor="mistral")  # its SDK adds /v1
    assert mistral == f"{server.url}/f/mistral/s/hello/t1"
    vertex = client.session("t1").url("hello", api="vertex-gemini")
    assert vertex == f"{server.url}/s/hello/t1"  # google-genai adds v1beta1/projects/...
    claude = client.session("t1").url("hello", api="vertex-anthropic")
    assert claude == f"{server.url}/s/hello/t1/v1"  # as https://{region}-aiplatform.../v1
    with pytest.raises(
        ValueError,
        match="'gemini', 'bedrock', 'vertex-gemini', 'vertex-anthropic', 'azure', not 'google'",
    ):
        client.url("hello", api=cast(Any, "google"))


def test_the_gemini_url_is_one_the_gemini_sdk_works_with(mock: Session) -> None:
    url = mock.url("hello", api="gemini")
    with genai.Client(api_key="t", http_options={"base_url": url}) as sdk:
        reply = sdk.models.generate_content(model="gemini-2.5-flash", contents="hi")
        assert reply.text and reply.text.startswith("Hello! I am mockllm")
        streamed = sdk.models.generate_content_stream(model="gemini-2.5-flash", contents="hi")
        assert "".join(chunk.text or "" for chunk in streamed) == reply.text
    (entry, _) = mock.requests()
    assert (entry.api, entry.scenario, entry.response and entry.response.status) == (
        "gemini",
        "hello",
        200,
    )


def test_a_flavoured_url_serves_the_sdk_as_that_provider(
    server: ServerProcess, mock: Session
) -> None:
    client = Client(server.url)
    assert client.url("hello", flavor="qwen") == f"{server.url}/f/qwen/s/hello/v1"
    url = mock.url("kimi-tool-ids", flavor="kimi")
    assert url == f"{server.url}/f/kimi/s/kimi-tool-ids/{mock.name}/v1"
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS}}
    with openai.OpenAI(base_url=mock.url("weather-single", flavor="kimi"), api_key="k") as sdk:
        reply = sdk.chat.completions.create(
            model="kimi-k2.6", messages=[{"role": "user", "content": "Paris?"}], tools=[tool]
        )
    assert (reply.choices[0].message.tool_calls or [])[0].id == "functions.get_weather:0"
    with pytest.raises(ValueError, match="no flavour 'qwne'; did you mean 'qwen'"):
        client.url("hello", flavor="qwne")
    with pytest.raises(ValueError, match="api='openai'"):
        mock.url("hello", api="anthropic", flavor="kimi")


def test_requests_are_typed_records_of_the_session(mock: Session) -> None:
    call = weather_round_trip(mock)
    first, second = mock.requests()
    assert isinstance(first, LogEntry) and second.seq > first.seq
    assert (first.turn, second.turn, first.api, first.scenario) == (
        0,
        1,
        "openai-chat",
        "weather-single",
    )
    assert first.tool_calls == (call,) and first.response and first.response.status == 200
    assert first.conversation == (Message("user", "Paris?"),)
    assert second.tool_results == (ToolResult(call.id, "18 °C"),)
    assert second.conversation[1].tool_calls == (call,)
    assert second.response and second.response.text == "It is 18 °C and sunny in Paris."
    assert second.raw["response"]["finish"] == "stop" and second.tools == ("get_weather",)
    assert client_of(mock).requests(scenario="weather-single", since=first.seq)[-1] == second


def test_clear_and_reset_touch_only_the_session(session: str) -> None:
    # A server of its own: clearing leaves holes in the shared server's log, whose
    # seq another test checks to be gap-free.
    with mockllm.serve() as server:
        mock, other = server.client.session(session), server.client.session(session + "-other")
        weather_round_trip(mock, answer=False)
        weather_round_trip(other, answer=False)
        assert mock.clear() == 1 and mock.requests() == []
        assert other.reset() == 1 and other.requests() == []
        weather_round_trip(mock, answer=False)
        assert server.client.clear() == 1 and server.client.requests() == []


def test_add_scenario_from_text_mapping_file_and_folder(mock: Session, tmp_path: Path) -> None:
    text = f"name: {mock.name}-text\nturns: [{{reply: {{text: from text}}}}]\n"
    mapping = {"name": f"{mock.name}-map", "turns": [{"reply": {"text": "from a mapping"}}]}
    file = tmp_path / f"{mock.name}-file.yaml"  # no name inside: the stem names it
    file.write_text("turns: [{reply: {text: from a file}}]\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / f"{mock.name}-nested.yml").write_text("turns: [{reply: {text: nested}}]\n")
    assert mock.add_scenario(text) == f"{mock.name}-text"
    assert mock.add_scenario(mapping) == f"{mock.name}-map"
    assert mock.add_scenario(file) == f"{mock.name}-file"
    added = client_of(mock).add_scenarios(str(tmp_path))
    assert sorted(added) == [f"{mock.name}-file", f"{mock.name}-nested"]
    for name, said in [("text", "from text"), ("map", "from a mapping"), ("nested", "nested")]:
        with openai.OpenAI(base_url=mock.url(f"{mock.name}-{name}"), api_key="t") as sdk:
            reply = sdk.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}]
            )
        assert reply.choices[0].message.content == said
    with pytest.raises(ValueError, match="holds 2 scenarios; use add_scenarios"):
        mock.add_scenario(tmp_path)


def test_a_bad_scenario_is_located_in_its_file_and_nothing_is_sent(
    mock: Session, tmp_path: Path
) -> None:
    good = tmp_path / f"{mock.name}-good.yaml"
    good.write_text("turns: [{reply: {text: ok}}]\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nturns:\n  - reply: {txt: x}\n")
    with pytest.raises(ScenarioError, match=r"bad.yaml:3:13: turns\[0\].reply.txt: unknown key"):
        client_of(mock).add_scenarios(good, bad)
    assert f"{mock.name}-good" not in {s.name for s in client_of(mock).scenarios()}
    with pytest.raises(ScenarioError, match="no such file or folder"):
        mock.add_scenario("no/such/file.yaml")


def test_errors_name_the_url_and_the_reason(server: ServerProcess) -> None:
    with pytest.raises(ClientError, match=r"404 mockllm: no route GET /nope/_mockllm/health") as e:
        Client(server.url + "/nope").health()
    assert e.value.status == 404
    with pytest.raises(ClientError, match="cannot reach mockllm") as e:
        Client("http://127.0.0.1:9", timeout=2).health()  # the discard port: nothing listens
    assert e.value.status is None
    assert isinstance(e.value.__cause__, OSError)  # the connection error is kept


def test_a_server_that_is_not_mockllm_is_named_as_such() -> None:
    class Plain(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"<html>some other server</html>")

        def log_message(self, *args: object) -> None:
            pass

    with http.server.HTTPServer(("127.0.0.1", 0), Plain) as other:
        threading.Thread(target=other.handle_request, daemon=True).start()
        url = f"http://127.0.0.1:{other.server_address[1]}"
        with pytest.raises(ClientError, match=r"not a mockllm answer: '<html>some other") as e:
            Client(url).health()
    assert isinstance(e.value.__cause__, ValueError)


def test_scenarios_are_listed_as_typed_records(server: ServerProcess) -> None:
    listed = {s.name: s for s in Client(server.url).scenarios()}
    assert listed["weather-single"] == ScenarioInfo(
        name="weather-single",
        turns=2,
        description=listed["weather-single"].description,
        source=listed["weather-single"].source,
    )
    assert listed["weather-single"].source.endswith("weather-single.yaml")


def test_assertions_pass_on_a_clean_round_trip(mock: Session) -> None:
    weather_round_trip(mock)
    mock.assert_all_tool_calls_answered()
    mock.assert_no_unoffered_tool_executed()
    mock.assert_model_calls(exactly=2)
    mock.assert_model_calls(at_least=1, at_most=2)


def test_an_unanswered_call_fails_with_the_transcript(mock: Session) -> None:
    call = weather_round_trip(mock, answer=False)
    with pytest.raises(AssertionError) as failure:
        mock.assert_all_tool_calls_answered()
    seq = mock.requests()[0].seq  # the verdict names a request by its log seq
    assert str(failure.value).splitlines() == [
        "mockllm: 1 tool call never got a result",
        "",
        f"mockllm session {mock.name!r}, 1 model request:",
        f"  request 1 (log seq {mock.requests()[0].seq}) · turn 0 · openai-chat · scenario weather-single · tools offered: get_weather",
        "       user: Paris?",
        "     ← assistant (200, tool_calls)",
        f'       calls get_weather({{"city":"Paris"}}) id={call.id}',
        "  ✗ verdict: FAIL (1 of 15 checks failed)",
        f"     ✗ calls_answered: {call.id} (get_weather, turn 0, request (log seq {seq})) was never answered",
        "",
        "expected: every tool call mockllm sent gets a result with its id in a later request",
        "happened:",
        f'  - get_weather({{"city":"Paris"}}) id={call.id}, sent in reply to request 1 (turn 0), was never answered',
    ]


def test_model_call_bounds(mock: Session) -> None:
    weather_round_trip(mock)
    with pytest.raises(AssertionError, match="mockllm: 2 model requests, expected at most 1") as e:
        mock.assert_model_calls(at_most=1)
    assert "tool result for call_" in str(e.value) and "2 model requests made" in str(e.value)
    with pytest.raises(AssertionError, match="expected exactly 3"):
        mock.assert_model_calls(exactly=3)
    with pytest.raises(TypeError, match="needs at_most="):
        mock.assert_model_calls()


HALLUCINATES = """\
name: {name}
description: the model calls a tool the request did not offer
turns:
  - reply:
      tool_calls: [{{name: delete_everything, arguments: {{}}}}]
  - reply: {{text: done}}
"""


def test_executing_an_unoffered_tool_is_caught(mock: Session) -> None:
    name = mock.add_scenario(HALLUCINATES.format(name=f"{mock.name}-h"))
    with openai.OpenAI(base_url=mock.url(name), api_key="t", max_retries=0) as sdk:
        messages: list[dict[str, object]] = [{"role": "user", "content": "tidy up"}]
        reply = sdk.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        call = reply.choices[0].message.tool_calls[0]
        messages += [
            reply.choices[0].message.model_dump(exclude_unset=True),
            {"role": "tool", "tool_call_id": call.id, "content": "deleted 3 files"},
        ]
        sdk.chat.completions.create(model="m", messages=messages, tools=TOOLS)
    mock.assert_all_tool_calls_answered()
    with pytest.raises(AssertionError, match="1 call to a tool that was not offered got a result"):
        mock.assert_no_unoffered_tool_executed()
    with pytest.raises(
        AssertionError,
        match=rf"delete_everything \({call.id}\): 'deleted 3 files'; offered were: get_weather",
    ):
        mock.assert_no_unoffered_tool_executed(refusal="unknown tool")
    mock.assert_no_unoffered_tool_executed(refusal="deleted")  # that pattern calls it a refusal


def test_an_error_result_for_an_unoffered_tool_is_a_refusal(mock: Session) -> None:
    name = mock.add_scenario(HALLUCINATES.format(name=f"{mock.name}-h"))
    tools = [{"name": "get_weather", "input_schema": TOOL_PARAMETERS}]
    with anthropic.Anthropic(base_url=mock.url(name, api="anthropic"), api_key="t") as sdk:
        messages: list[dict[str, object]] = [{"role": "user", "content": "tidy up"}]
        reply = sdk.messages.create(model="c", max_tokens=64, messages=messages, tools=tools)
        use = reply.content[0]
        result = {
            "type": "tool_result",
            "tool_use_id": use.id,
            "content": "no such tool",
            "is_error": True,
        }
        messages += [
            {"role": "assistant", "content": reply.content},
            {"role": "user", "content": [result]},
        ]
        sdk.messages.create(model="c", max_tokens=64, messages=messages, tools=tools)
    mock.assert_all_tool_calls_answered()
    mock.assert_no_unoffered_tool_executed()
    assert mock.requests()[1].tool_results == (ToolResult(use.id, "no such tool", True),)
