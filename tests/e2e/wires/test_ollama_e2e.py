"""Ollama's native API through the `ollama` Python client on real HTTP (`Client(host=...)`):
chat streamed and not, tool loops with parallel calls (arguments as objects, results sent
back by `tool_name` as the client documents), thinking, JSON output, the probes the
clients make, the failure modes as the client meets them (an HTTP error, an error line
mid-stream, a cut line, a stream that ends without `done`), rule O1 both sides, and
byte-identical replays."""

from __future__ import annotations

import json
from typing import Any

import httpx
import ollama
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import ServerProcess
from tests.support.hypothesis_profiles import examples

MODEL = "llama3.2"
QUESTION = "北京和上海?"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


# Ollama's history rules, each tested both sides here through the ollama client (and raw
# HTTP for what the client would not send): test_validation counts them as tested.
RULES = (("ollama.tool_arguments_not_object", "O1", "test_rule_o1_arguments_replayed_as_a_string"),)


def client(server: ServerProcess, scenario: str, session: str, **kwargs: Any) -> ollama.Client:
    return ollama.Client(host=f"{server.url}/s/{scenario}/{session}", **kwargs)


def accumulated(parts: Any) -> dict[str, Any]:
    """A streamed chat added up as Ollama's own server adds it up for `stream: false`
    (writeChatResponse): content and thinking joined, every chunk's tool calls kept, the
    last chunk's counts; a stream that never says `done` is an error."""
    content, thinking, calls, last = "", "", [], None
    for part in parts:
        content += part.message.content or ""
        thinking += part.message.thinking or ""
        calls += list(part.message.tool_calls or ())
        last = part
    if last is None or not last.done:
        raise ConnectionError("the stream ended without done: true")
    return {"content": content, "thinking": thinking, "tool_calls": calls, "last": last}


def ask(chat: ollama.Client, messages: list[Any], stream: bool, **kw: Any) -> dict[str, Any]:
    if stream:
        return accumulated(chat.chat(model=MODEL, messages=messages, stream=True, **kw))
    answer = chat.chat(model=MODEL, messages=messages, **kw)
    message = answer.message
    return {
        "content": message.content or "",
        "thinking": message.thinking or "",
        "tool_calls": list(message.tool_calls or ()),
        "last": answer,
    }


@pytest.mark.parametrize("stream", [False, True])
def test_tool_loop_with_parallel_calls(server: ServerProcess, session: str, stream: bool) -> None:
    name = f"{session}-{stream}"
    chat = client(server, "weather-parallel", name)
    history: list[Any] = [{"role": "user", "content": QUESTION}]
    first = ask(chat, history, stream, tools=[WEATHER])
    assert first["content"] == "我先查一下。"
    calls = first["tool_calls"]
    # Arguments arrive as objects: a harness that json.loads them breaks here.
    assert [(c.function.name, c.function.arguments) for c in calls] == [
        ("get_weather", {"city": "北京"}),
        ("get_weather", {"city": "上海"}),
    ]
    assert first["last"].done_reason == "stop" and first["last"].eval_count > 0
    history.append({"role": "assistant", "content": first["content"], "tool_calls": calls})
    for call, answer in zip(calls, ["25度", "22度"], strict=True):
        history.append({"role": "tool", "content": answer, "tool_name": call.function.name})
    second = ask(chat, history, stream, tools=[WEATHER])
    assert second["content"] == "北京多云25℃，上海小雨22℃。" and second["tool_calls"] == []
    last = second["last"]
    assert last.done and last.prompt_eval_count > 0 and last.total_duration > 0
    entry = server.last(name)
    assert entry["api"] == "ollama" and entry["turn"] == 1 and entry["stream"] is stream
    assert entry["violations"] == []
    assert [r["call_id"] for r in entry["tool_results"]] == ["turn0.call0", "turn0.call1"]


def test_the_wire_carries_call_ids_and_ndjson(server: ServerProcess, session: str) -> None:
    """What the client hides: each call's id (`call_` and 8 of [a-z0-9]), one JSON object a
    line, `application/x-ndjson`, stream on when the body does not say; results sent by
    `tool_call_id` pair by id."""
    url = f"{server.url}/s/weather-parallel/{session}/api/chat"
    body = {"model": MODEL, "messages": [{"role": "user", "content": QUESTION}]}
    r = httpx.post(url, json={**body, "tools": [WEATHER]})
    assert r.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(x) for x in r.text.splitlines()]
    assert [x["done"] for x in lines] == [False] * (len(lines) - 1) + [True]
    calls = [c for x in lines for c in x["message"].get("tool_calls", ())]
    ids = [c["id"] for c in calls]
    assert all(i.startswith("call_") and len(i) == 13 and i[5:].isalnum() for i in ids)
    assert ids[0] != ids[1] and all(i[5:] == i[5:].lower() for i in ids)
    assert [c["function"]["index"] for c in calls] == [0, 1]
    final = lines[-1]
    assert final["done_reason"] == "stop" and final["message"] == {
        "role": "assistant",
        "content": "",
    }
    assert {"total_duration", "load_duration", "prompt_eval_count", "eval_count"} <= set(final)
    history = [
        *body["messages"],
        {"role": "assistant", "content": "", "tool_calls": calls},
        {"role": "tool", "content": "22度", "tool_call_id": ids[1]},
        {"role": "tool", "content": "25度", "tool_call_id": ids[0]},
    ]
    done = httpx.post(url, json={**body, "messages": history, "stream": False})
    assert done.headers["content-type"].startswith("application/json")
    assert done.json()["message"]["content"] == "北京多云25℃，上海小雨22℃。"
    results = server.last(session)["tool_results"]
    assert [(r["call_id"], r["content"]) for r in results] == [
        ("turn0.call1", "22度"),
        ("turn0.call0", "25度"),
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_thinking_is_message_thinking(server: ServerProcess, session: str, stream: bool) -> None:
    chat = client(server, "reasoning", f"{session}-{stream}")
    first = ask(chat, [{"role": "user", "content": "Oslo?"}], stream, tools=[WEATHER], think=True)
    assert first["thinking"] == "The user wants the weather; I should call the tool."
    assert [c.function.arguments for c in first["tool_calls"]] == [{"city": "Oslo"}]


STRUCTURED = """\
name: ollama-structured
turns:
  - reply: {json: valid}
  - reply: {json: valid}
"""


def test_format_asks_for_json(server: ServerProcess, mock: Any) -> None:
    """`format` as a JSON Schema gets JSON text that conforms; `format: "json"` JSON."""
    import jsonschema

    mock.add_scenario(STRUCTURED)
    chat = ollama.Client(host=mock.url("ollama-structured", api="ollama"))
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
        "required": ["city", "celsius"],
    }
    history: list[Any] = [{"role": "user", "content": "Paris?"}]
    first = chat.chat(model=MODEL, messages=history, format=schema)
    jsonschema.validate(json.loads(first.message.content or ""), schema)
    history += [first.message, {"role": "user", "content": "again"}]
    second = chat.chat(model=MODEL, messages=history, format="json")
    assert isinstance(json.loads(second.message.content or ""), dict)


def test_probes_answer_from_the_scenarios_models(server: ServerProcess, session: str) -> None:
    chat = client(server, "hello", session)
    names = [m.model for m in chat.list().models]
    assert "llama3.2:latest" in names and "mockllm:latest" in names
    shown = chat.show(MODEL)
    assert shown.capabilities is not None and "tools" in shown.capabilities
    assert chat.ps().models == []
    assert httpx.get(f"{server.url}/api/version").json()["version"]
    root = httpx.get(f"{server.url}/")
    assert root.text == "Ollama is running" and root.headers["content-type"].startswith(
        "text/plain"
    )
    assert server.requests(session=session) == []  # probes are no model requests: unlogged


def test_an_http_fault_is_a_response_error(server: ServerProcess, session: str) -> None:
    for scenario, status in (("fault-429", 429), ("fault-503", 503), ("fault-529", 503)):
        for stream in (False, True):
            chat = client(server, scenario, f"{session}-{scenario}-{stream}")
            with pytest.raises(ollama.ResponseError) as caught:
                ask(chat, [{"role": "user", "content": "Paris?"}], stream)
            assert caught.value.status_code == status and caught.value.error
    body = httpx.post(
        f"{server.url}/s/fault-503/{session}-raw/api/chat",
        json={"model": MODEL, "messages": [{"role": "user", "content": "x"}]},
    )
    assert body.json() == {
        "error": "server busy, please try again.  maximum pending requests exceeded"
    }


def test_an_error_line_mid_stream_raises(server: ServerProcess, session: str) -> None:
    """Ollama's mid-stream error is one more line, `{"error": ...}`, on a 200: the client
    raises ResponseError from inside the iteration, after the parts before it."""
    chat = client(server, "fault-stream-error", session)
    seen = []
    with pytest.raises(ollama.ResponseError) as caught:
        for part in chat.chat(
            model=MODEL, messages=[{"role": "user", "content": "x"}], stream=True
        ):
            seen.append(part)
    assert len(seen) == 3 and not any(p.done for p in seen)
    assert caught.value.status_code == -1  # said in the body: the status was 200
    lines = server.last(session)["response"]["body"].splitlines()
    assert json.loads(lines[-1]) == {"error": caught.value.error}


def test_cuts_as_the_client_meets_them(server: ServerProcess, session: str, mock: Any) -> None:
    """A stream cut inside a line, then closed: the client's json.loads of the partial line
    fails. Cut between lines and closed: the iteration just ends, without `done`, which only
    a harness that checks `done` notices. Reset: httpx's RemoteProtocolError."""
    question = [{"role": "user", "content": "x"}]

    def stream(scenario: str) -> Any:
        return client(server, scenario, f"{session}-{scenario}").chat(
            model=MODEL, messages=question, stream=True
        )

    with pytest.raises(json.JSONDecodeError):
        list(stream("fault-cut-close"))
    with pytest.raises(httpx.RemoteProtocolError):
        list(stream("fault-cut-events"))
    cut = "name: ollama-cut-between\nturns:\n  - reply: {text: Checking the weather now.}\n"
    cut += "    fault: {truncate: {after_events: 1}, disconnect: close}\n"
    mock.add_scenario(cut)
    parts = list(stream("ollama-cut-between"))
    assert len(parts) == 1 and not parts[0].done  # naive: takes the partial answer as whole
    with pytest.raises(ConnectionError, match="without done"):
        accumulated(stream("ollama-cut-between"))


def test_a_delayed_or_stalled_answer(server: ServerProcess, session: str) -> None:
    slow = client(server, "fault-delay", session)
    assert slow.chat(model=MODEL, messages=[{"role": "user", "content": "x"}]).done
    stalled = client(server, "fault-stall", session, timeout=0.5)
    with pytest.raises(httpx.ReadTimeout):
        stalled.chat(model=MODEL, messages=[{"role": "user", "content": "x"}])


def test_rule_o1_arguments_replayed_as_a_string(
    server: ServerProcess, warn_server: ServerProcess, session: str
) -> None:
    """A harness that replays a call with OpenAI's JSON-string arguments gets Ollama's 400;
    the `ollama` client, which keeps them an object, passes; a warn server only logs it."""
    chat = client(server, "weather-single", session)
    first = chat.chat(
        model=MODEL, messages=[{"role": "user", "content": "Paris?"}], tools=[WEATHER]
    )
    assert len(first.message.tool_calls or ()) == 1
    as_string = {"function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}}
    history: list[Any] = [
        {"role": "user", "content": "Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [as_string]},
        {"role": "tool", "content": "18 °C", "tool_name": "get_weather"},
    ]
    body = {"model": MODEL, "messages": history, "tools": [WEATHER]}
    url = f"{server.url}/s/weather-single/{session}/api/chat"
    refused = httpx.post(url, json=body)
    assert refused.status_code == 400
    assert refused.json() == {"error": "Value looks like object, but can't find closing '}' symbol"}
    assert server.last(session)["violations"][0]["rule"] == "ollama.tool_arguments_not_object"
    # A warn server answers it, and logs what Ollama would have refused.
    lenient = httpx.post(f"{warn_server.url}/s/weather-single/{session}/api/chat", json=body)
    assert lenient.status_code == 200
    assert warn_server.last(session)["violations"][0]["rule"] == "ollama.tool_arguments_not_object"
    history[1] = first.message  # the client's own message: arguments an object
    passed = chat.chat(model=MODEL, messages=history, tools=[WEATHER])
    assert passed.message.content == "It is 18 °C and sunny in Paris." and passed.done
    assert server.last(session)["violations"] == []


def test_malformed_arguments_come_as_content(server: ServerProcess, session: str) -> None:
    """Arguments that are not a JSON object cannot be an Ollama tool call: they come as the
    message's content, as Ollama sends a model's call its parser could not read."""
    chat = client(server, "malformed-arguments", session)
    answer = chat.chat(model=MODEL, messages=[{"role": "user", "content": "x"}], tools=[WEATHER])
    assert answer.message.tool_calls is None
    assert answer.message.content == '{"name": "get_weather", "arguments": {"city": "Par}'
    notes = server.last(session)["response"]["notes"]
    assert any("sent as message content" in n for n in notes)


def test_generate_answers_in_response(server: ServerProcess, session: str) -> None:
    gen = client(server, "hello", session)
    whole = gen.generate(model=MODEL, prompt="Hi")
    parts = list(
        client(server, "hello", f"{session}-s").generate(model=MODEL, prompt="Hi", stream=True)
    )
    assert whole.response and whole.done and whole.done_reason == "stop"
    assert "".join(p.response or "" for p in parts) == whole.response and parts[-1].done


def test_replays_are_byte_identical(server: ServerProcess, session: str) -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": QUESTION}], "tools": [WEATHER]}
    for stream in (False, True):
        first, again = (
            httpx.post(
                f"{server.url}/s/weather-parallel/{session}-{stream}-{n}/api/chat",
                json={**body, "stream": stream},
            ).content
            for n in (1, 2)
        )
        assert first == again


def test_a_bad_request_is_ollamas_error_and_logged(server: ServerProcess, session: str) -> None:
    url = f"{server.url}/s/hello/{session}/api/chat"
    for raw, words in (
        (b"{not json", "invalid character"),
        (b'{"model": "m", "messages": 7}', "cannot unmarshal number"),
        (b'{"messages": []}', "model is required"),
        (b'{"model": "m", "stream": "yes"}', "cannot unmarshal string"),
    ):
        r = httpx.post(url, content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 400 and words in r.json()["error"], (raw, r.text)
    assert len(server.requests(session=session)) == 4


def test_a_session_s_assertions_and_verdict_read_an_ollama_loop(mock: Any) -> None:
    """The session's assertions find the calls the model asked for and the results fed back
    by `tool_name`; a harness that gives up on the malformed call fails the verdict."""
    chat = ollama.Client(host=mock.url("weather-single", api="ollama"))
    history: list[Any] = [{"role": "user", "content": "Paris?"}]
    first = chat.chat(model=MODEL, messages=history, tools=[WEATHER])
    history += [first.message, {"role": "tool", "content": "18 °C", "tool_name": "get_weather"}]
    chat.chat(model=MODEL, messages=history, tools=[WEATHER])
    mock.assert_tool_requested("get_weather", {"city": "Paris"})
    mock.assert_tool_result_fed_back("get_weather", {"city": "Paris"})
    mock.assert_all_tool_calls_answered()
    mock.assert_clean_verdict()
    (call,) = mock.calls()
    assert call.name == "get_weather" and call.result is not None


def test_the_report_and_transcript_show_an_ollama_session(
    server: ServerProcess, session: str
) -> None:
    chat = client(server, "weather-parallel", session)
    chat.chat(model=MODEL, messages=[{"role": "user", "content": QUESTION}], tools=[WEATHER])
    verdict = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    assert verdict["ok"] is False  # the two calls were never answered
    text = server.http.get("/_mockllm/transcript", params={"session": session})
    assert text.status_code == 200
    assert "turn 0 · ollama" in text.text and "get_weather" in text.text


SIDE = """\
name: ollama-side
side_requests:
  - name: title
    match: {system: {contains: title}, api: ollama}
    reply: {text: Weather in Paris}
turns:
  - reply: {text: It is sunny.}
"""


def test_a_side_request_matched_by_api_ollama(mock: Any) -> None:
    """A title request beside the turns, on Ollama's wire (`api: ollama`), answered by its
    rule and logged as a side request; the turn is untouched."""
    mock.add_scenario(SIDE)
    chat = ollama.Client(host=mock.url("ollama-side", api="ollama"))
    title = [{"role": "system", "content": "Write a title"}, {"role": "user", "content": "x"}]
    assert chat.chat(model=MODEL, messages=title).message.content == "Weather in Paris"
    turn = chat.chat(model=MODEL, messages=[{"role": "user", "content": "Paris?"}])
    assert turn.message.content == "It is sunny."
    side, agent = mock.requests()
    assert side.raw["side"]["name"] == "title" and agent.raw.get("side") is None


def test_what_is_not_served_is_a_404_in_ollama_s_shape(server: ServerProcess, session: str) -> None:
    """Model management (pull, push, create, copy, delete) is not served: the client gets
    Ollama's `{"error"}` naming the routes that are, and the request is logged."""
    chat = client(server, "hello", session)
    with pytest.raises(ollama.ResponseError) as caught:
        chat.pull("llama3.2")
    assert caught.value.status_code == 404
    assert "no route POST /api/pull" in caught.value.error
    assert "POST /api/chat" in caught.value.error
    assert server.last(session)["response"]["status"] == 404


PROBE = settings(
    max_examples=examples(25),
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def test_probes_answer_any_body_and_log_nothing(server: ServerProcess, session: str) -> None:
    """POST /api/show with any body (not JSON, no model, a model of any type) and the GET
    probes under any session: always 200 in Ollama's shapes, never logged; the server then
    still serves a turn."""
    models = st.one_of(st.none(), st.integers(), st.text(max_size=40), st.lists(st.text()))
    bodies = st.one_of(
        st.binary(max_size=200),
        st.builds(lambda m: json.dumps({"model": m}).encode(), models),
        st.builds(lambda m: json.dumps({"name": m}).encode(), models),
    )

    @PROBE
    @given(bodies, st.sampled_from(["api/tags", "api/ps", "api/version", ""]))
    def probe(body: bytes, route: str) -> None:
        shown = httpx.post(f"{server.url}/s/hello/{session}/api/show", content=body)
        assert shown.status_code == 200 and "tools" in shown.json()["capabilities"]
        got = httpx.get(f"{server.url}/s/hello/{session}/{route}")
        assert got.status_code == 200
        if route:
            assert isinstance(got.json(), dict)

    probe()
    assert server.requests(session=session) == []
    chat = client(server, "hello", session)
    assert chat.chat(model=MODEL, messages=[{"role": "user", "content": "hi"}]).done


NAMED = """\
name: ollama-named-model
turns:
  - expect: {model: {equals: "mistral-nemo"}}
    reply: {text: hi}
"""


def test_tags_list_the_models_a_scenario_names(server: ServerProcess, mock: Any) -> None:
    """A model a scenario names exactly is listed (`:latest` added), beside the defaults;
    ChatOllama's validate_model_on_init looks there (tests/frameworks/test_langchain.py)."""
    mock.add_scenario(NAMED)
    names = [m.model for m in ollama.Client(host=server.url).list().models]
    assert "mistral-nemo:latest" in names and "llama3.2:latest" in names
    assert "phi4:latest" not in names
