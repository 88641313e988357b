"""The request log (docs/http-api.md): contents, filters, the JSONL file, the ring, clearing."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.support import TOOL_PARAMETERS, ServerProcess, running_server
from tests.support.clients import ChatFactory

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS}}]
JSON = {"content-type": "application/json"}  # the admin routes change state only for JSON


def test_entry_tells_the_whole_story(
    chat: ChatFactory, server: ServerProcess, session: str
) -> None:
    client = chat("weather-single", default_headers={"Authorization": "Bearer sk-secret"})
    completion = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Paris?"}], tools=TOOLS
    )
    entry = server.last(session)
    call = completion.choices[0].message.tool_calls[0]
    assert {k: entry[k] for k in ("session", "scenario", "api", "stream", "turn", "attempt")} == {
        "session": session,
        "scenario": "weather-single",
        "api": "openai-chat",
        "stream": False,
        "turn": 0,
        "attempt": 1,
    }
    assert entry["path"] == f"/s/weather-single/{session}/v1/chat/completions"
    assert entry["request"]["messages"] == [{"role": "user", "content": "Paris?"}]
    assert entry["conversation"] == [{"role": "user", "at": "messages[0]", "text": "Paris?"}]
    assert entry["tools"] == ["get_weather"]
    response = entry["response"]
    assert response["status"] == 200 and response["finish"] == "tool_calls"
    assert response["tool_calls"] == [
        {"id": call.id, "name": "get_weather", "arguments": '{"city":"Paris"}'}
    ]
    assert json.loads(response["body"]) == completion.model_dump(exclude_unset=True)
    assert response["bytes_sent"] == len(response["body"].encode())
    assert entry["duration_ms"] >= 0 and entry["client_disconnected"] is False
    assert (
        entry["headers"]["authorization"].startswith("[redacted ")
        and "sk-secret" not in json.dumps(entry)
        and entry["headers"]["x-stainless-retry-count"] == "0"
    )


def test_stream_entry_keeps_the_bytes_sent(
    chat: ChatFactory, server: ServerProcess, session: str
) -> None:
    stream = chat("hello").chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}], stream=True
    )
    received = "".join(c.choices[0].delta.content or "" for c in stream)
    entry = server.last(session)
    assert entry["stream"] is True
    body = entry["response"]["body"]
    assert body.startswith("data: {") and body.endswith("data: [DONE]\n\n")
    # Byte for byte: the id derives from scenario and turn, `created` is fixed.
    head = (
        'data: {"id":"chatcmpl-QfT2oIkubgVwhh5GsHnL7JmltmaeU","object":"chat.completion.chunk",'
        '"created":1735689600,"model":"m","service_tier":"default","system_fingerprint":"fp_cf2e2ca2b7",'
        '"choices":[{"index":0,'
    )
    tail = '"logprobs":null,"finish_reason":%s}]}\n\n'
    assert body == (
        head + '"delta":{"role":"assistant","content":"","refusal":null},' + tail % "null"
        + head + '"delta":{"content":"Hello! I am mock"},' + tail % "null"
        + head + '"delta":{"content":"llm, a determini"},' + tail % "null"
        + head + '"delta":{"content":"stic fake model."},' + tail % "null"
        + head + '"delta":{"content":" How can I help?"},' + tail % "null"
        + head + '"delta":{},' + tail % '"stop"'
        + "data: [DONE]\n\n"
    )  # fmt: skip
    assert received == entry["response"]["text"]


def test_tool_results_and_conversation_view(
    chat: ChatFactory, server: ServerProcess, session: str
) -> None:
    client = chat("weather-single")
    first = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Paris?"}], tools=TOOLS
    )
    call = first.choices[0].message.tool_calls[0]
    history = [
        {"role": "user", "content": "Paris?"},
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "18 °C"},
    ]
    client.chat.completions.create(model="m", messages=history, tools=TOOLS)
    entry = server.last(session)
    assert entry["tool_results"] == [{"call_id": call.id, "content": "18 °C"}]
    assert entry["conversation"][1] == {
        "role": "assistant",
        "at": "messages[1]",
        "tool_calls": [{"id": call.id, "name": "get_weather", "arguments": '{"city":"Paris"}'}],
    }
    assert entry["conversation"][2] == {
        "role": "tool",
        "at": "messages[2]",
        "tool_results": [{"call_id": call.id, "content": "18 °C"}],
    }


def test_filters_and_gap_free_seq(server: ServerProcess, session: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    for scenario in ("hello", "hello", "loop"):
        httpx.post(f"{server.openai_url(scenario, session)}/chat/completions", json=body)
    mine = server.requests(session=session)
    seqs = [e["seq"] for e in mine]
    assert len(mine) == 3 and seqs == sorted(seqs)
    assert [e["scenario"] for e in server.requests(session=session, scenario="hello")] == [
        "hello",
        "hello",
    ]
    assert [e["seq"] for e in server.requests(session=session, since=seqs[0])] == seqs[1:]


def test_seq_is_gap_free_across_sessions_and_outcomes() -> None:
    """Its own server: other tests clear sessions of the shared one."""
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with running_server() as s, httpx.Client() as client:
        for scenario, session in (("hello", "a"), ("nope", "b"), ("hello", "c"), ("loop", "a")):
            client.post(f"{s.openai_url(scenario, session)}/chat/completions", json=body)
        client.post(f"{s.openai_url('hello', 'd')}/chat/completions", content=b"{not json")
        assert [e["seq"] for e in s.requests()] == [1, 2, 3, 4, 5]
        assert [e["response"]["status"] for e in s.requests()] == [200, 404, 200, 200, 400]


def test_delete_clears_one_session(server: ServerProcess, session: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    for name in (session, session + "-keep"):
        httpx.post(f"{server.openai_url('hello', name)}/chat/completions", json=body)
    deleted = httpx.delete(
        f"{server.url}/_mockllm/requests", params={"session": session}, headers=JSON
    ).json()
    assert deleted == {"deleted": 1}
    assert server.requests(session=session) == []
    assert len(server.requests(session=session + "-keep")) == 1


def _post_hello(url: str, n: int) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    for _ in range(n):
        httpx.post(f"{url}/s/hello/v1/chat/completions", json=body)


def test_ring_keeps_the_last_entries_and_the_file_keeps_all() -> None:
    with running_server("--log-limit", "3") as s:
        _post_hello(s.url, 5)
        assert [e["seq"] for e in s.requests()] == [3, 4, 5]
        lines = s.log_file.read_text().splitlines()  # flushed per entry: readable while serving
        assert [json.loads(line)["seq"] for line in lines] == [1, 2, 3, 4, 5]
        assert all(json.loads(line)["response"]["status"] == 200 for line in lines)


def test_body_cap_limits_stored_bytes_not_bytes_sent() -> None:
    with running_server("--log-body-cap", "40") as s:
        _post_hello(s.url, 1)
        response: dict[str, Any] = s.requests()[-1]["response"]
        assert len(response["body"]) == 40 and response["body_truncated"] is True
        assert response["bytes_sent"] > 40


def test_reset_clears_attempts_and_log_of_a_session(server: ServerProcess, session: str) -> None:
    url = f"{server.openai_url('hello', session)}/chat/completions"
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    httpx.post(url, json=body)
    httpx.post(url, json=body)
    assert server.last(session)["attempt"] == 2
    assert (
        httpx.post(
            f"{server.url}/_mockllm/reset", params={"session": session}, headers=JSON
        ).json()["deleted"]
        == 2
    )
    httpx.post(url, json=body)
    assert [e["attempt"] for e in server.requests(session=session)] == [1]
