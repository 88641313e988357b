"""Messages that say what to do, as the real SDKs surface them from a real server."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest

import mockllm
from mockllm.errors import ClientError
from tests.support import ServerProcess

USER = [{"role": "user", "content": "hi"}]


def test_exhaustion_counts_the_replies_names_the_turns_and_both_fixes(
    server: ServerProcess, session: str
) -> None:
    client = openai.OpenAI(base_url=server.openai_url("hello", session), api_key="k", max_retries=0)
    history = [*USER, {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "?"}]
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="m", messages=history)
    assert raised.value.message == (
        "Error code: 400 - scenario 'hello' has no turn 1: the request's history holds 1 assistant "
        "reply, so it asks for turn 1, and the scenario has only turn 0. Add a turn to the "
        "scenario, or set `repeat: true` on its last turn to answer every later request with it"
    )
    assert raised.value.response.headers["x-mockllm-rule"] == "scenario_exhausted"


def test_an_unknown_scenario_gets_did_you_mean_from_the_server_and_from_url(
    server: ServerProcess, session: str
) -> None:
    client = openai.OpenAI(base_url=server.openai_url("wether-single"), api_key="k", max_retries=0)
    with pytest.raises(openai.NotFoundError) as raised:
        client.chat.completions.create(model="m", messages=USER)
    assert "no scenario named 'wether-single'; did you mean 'weather-single'?" in str(raised.value)
    mock = mockllm.Client(server.url).session(session)
    with pytest.raises(ClientError, match="did you mean 'weather-single'"):
        mock.url("wether-single")
    assert mock.url("weather-single").endswith(f"/s/weather-single/{session}/v1")


def test_a_strict_rule_400_names_the_rule_in_a_header_and_keeps_the_providers_body(
    server: ServerProcess, session: str
) -> None:
    history = [
        *USER,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        },
        {"role": "user", "content": "and?"},
    ]
    client = anthropic.Anthropic(
        base_url=f"{server.url}/s/hello/{session}", api_key="k", max_retries=0
    )
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(model="m", max_tokens=5, messages=history)
    response = raised.value.response
    assert response.headers["x-mockllm-rule"] == "anthropic.tool_use_unanswered"
    assert "mockllm" not in response.text  # the provider's words, exactly
    assert server.last(session)["response"]["error"]["kind"] == "anthropic.tool_use_unanswered"


def refusal(sdk: str, base_url: str) -> str:
    """What a client given `base_url` is told (an SDK's NotFoundError, or the raw body)."""
    if sdk == "ai-sdk":  # the path @ai-sdk/anthropic builds (no Node AI SDK in these tests)
        r = httpx.post(
            base_url + "/messages",
            json={"model": "m", "max_tokens": 5, "messages": USER},
            headers={"anthropic-version": "2023-06-01"},
        )
        assert r.status_code == 404 and r.json()["error"]["type"] == "not_found_error"
        return r.text
    if sdk == "anthropic":
        a = anthropic.Anthropic(base_url=base_url, api_key="k", max_retries=0)
        with pytest.raises(anthropic.NotFoundError) as found:
            a.messages.create(model="m", max_tokens=5, messages=USER)
        return str(found.value)
    o = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.NotFoundError) as raised:
        o.chat.completions.create(model="m", messages=USER)
    return str(raised.value)


@pytest.mark.parametrize(
    ("sdk", "base", "route", "advice"),
    [
        (
            "anthropic",
            "/s/hello/S/v1",
            "/v1/v1/messages",
            "The Anthropic SDK adds /v1 itself: give it base_url='{url}/s/hello/S' (without /v1)",
        ),
        (
            "openai",
            "/s/hello/S/v1/v1",
            "/v1/v1/chat/completions",
            "append /chat/completions to their base URL: give it base_url='{url}/s/hello/S/v1'",
        ),
        (
            "ai-sdk",  # @ai-sdk/anthropic appends /messages to its baseURL (raw: no Node SDK here)
            "/s/hello/S",
            "/messages",
            "@ai-sdk/anthropic appends /messages to its baseURL: give it baseURL='{url}/s/hello/S/v1'",
        ),
    ],
)
def test_a_wrong_base_url_is_logged_and_told_how_to_fix(
    server: ServerProcess, session: str, sdk: str, base: str, route: str, advice: str
) -> None:
    base = base.replace("/S", f"/{session}")
    advice = advice.format(url=server.url).replace("/S", f"/{session}")
    said = refusal(sdk, server.url + base)
    assert advice in said
    entry = server.last(session)
    assert entry["path"].endswith(route) and entry["response"]["status"] == 404
    assert entry["response"]["error"]["kind"] == "route_not_found"
    assert advice.removeprefix(". ") in entry["response"]["notes"][0]


def test_a_session_named_v1_is_served_with_a_warning(server: ServerProcess) -> None:
    client = anthropic.Anthropic(base_url=f"{server.url}/s/hello/v1", api_key="k", max_retries=0)
    reply = client.messages.create(model="m", max_tokens=5, messages=USER)
    assert reply.stop_reason == "end_turn"
    entry = server.last("v1")
    assert entry["response"]["notes"][0].startswith(
        "warning: session 'v1' from /s/hello/v1/v1/messages: an Anthropic SDK given base URL "
        "/s/hello/v1 adds /v1 itself"
    )
    httpx.post(f"{server.url}/_mockllm/reset", params={"session": "v1"})
