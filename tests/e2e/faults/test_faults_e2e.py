"""Faults × API × {stream, non-stream}: what the official SDK observes (docs/scenarios.md)
and what the log records (fault name, bytes sent, client_disconnected)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors

from tests.support import TOOL_PARAMETERS, ServerProcess, running_server
from tests.support.drivers import merged

CHAT_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS}}
]
RESP_TOOLS = [
    {"type": "function", "name": "get_weather", "parameters": TOOL_PARAMETERS, "strict": False}
]
CLAUDE_TOOLS = [{"name": "get_weather", "input_schema": TOOL_PARAMETERS}]
GEMINI_TOOLS = [
    {"function_declarations": [{"name": "get_weather", "parameters_json_schema": TOOL_PARAMETERS}]}
]
ASK = [{"role": "user", "content": "Weather in Paris?"}]
APIS = ("chat", "responses", "anthropic")
ALL_APIS = (*APIS, "gemini")


@pytest.fixture(scope="module")
def faulty() -> Iterator[ServerProcess]:
    """Its own server: a stall must be bounded quickly (--max-stall) to keep the suite fast."""
    with running_server("--max-stall", "2") as s:
        yield s


def call(
    server: ServerProcess, scenario: str, session: str, api: str, stream: bool, **client: Any
) -> Any:
    """One request through the SDK's usual path: create(), or the stream helper's final object."""
    if api == "gemini":
        return call_gemini(server, scenario, session, stream, **client)
    options = {"api_key": "k", "max_retries": 0, **client}
    if api == "anthropic":
        with anthropic.Anthropic(base_url=f"{server.url}/s/{scenario}/{session}", **options) as a:
            kwargs = {
                "model": "claude-sonnet-4-6",
                "max_tokens": 100,
                "messages": ASK,
                "tools": CLAUDE_TOOLS,
            }
            if not stream:
                return a.messages.create(**kwargs)
            with a.messages.stream(**kwargs) as s:
                return s.get_final_message()
    with openai.OpenAI(base_url=server.openai_url(scenario, session), **options) as o:
        if api == "chat":
            kwargs = {"model": "gpt-4o-mini", "messages": ASK, "tools": CHAT_TOOLS}
            if not stream:
                return o.chat.completions.create(**kwargs)
            with o.chat.completions.stream(**kwargs) as s:
                return s.get_final_completion()
        kwargs = {"model": "gpt-4.1", "input": ASK, "tools": RESP_TOOLS}
        if not stream:
            return o.responses.create(**kwargs)
        with o.responses.stream(**kwargs) as s:
            return s.get_final_response()


def call_gemini(
    server: ServerProcess, scenario: str, session: str, stream: bool, **client: Any
) -> Any:
    """google-genai: generate_content, or the streamed chunks merged into one response."""
    http: dict[str, Any] = {"base_url": f"{server.url}/s/{scenario}/{session}"}
    if "timeout" in client:
        http["timeout"] = int(client["timeout"] * 1000)  # milliseconds
    if "retry_options" in client:
        http["retry_options"] = client["retry_options"]
    config = {"tools": GEMINI_TOOLS, "automatic_function_calling": {"disable": True}}
    kwargs = {"model": "gemini-2.5-flash", "contents": "Weather in Paris?", "config": config}
    with genai.Client(api_key="k", http_options=http) as g:
        if not stream:
            return g.models.generate_content(**kwargs)
        return merged(list(g.models.generate_content_stream(**kwargs)))


def google_error(
    kind: type[genai_errors.APIError], code: int, status: str
) -> Callable[[Any], None]:
    """google-genai's error class, HTTP code and google.rpc status name."""

    def check(outcome: Any) -> None:
        assert isinstance(outcome, kind), f"expected {kind.__name__}, got {outcome!r}"
        assert (outcome.code, outcome.status) == (code, status)

    return check


def raised(kind: type[BaseException]) -> Callable[[Any], None]:
    def check(outcome: Any) -> None:
        assert isinstance(outcome, kind), f"expected {kind.__name__}, got {outcome!r}"

    return check


def partial_chat(outcome: Any) -> None:
    """A clean close: the chat helper returns its snapshot, unfinished, arguments cut."""
    choice = outcome.choices[0]
    assert (
        choice.finish_reason is None
        and choice.message.tool_calls[0].function.arguments == '{"city":"Pa'
    )


def partial_claude(outcome: Any) -> None:
    """A clean close: the Anthropic helper returns the message, no stop_reason."""
    assert outcome.stop_reason is None and outcome.content[-1].type == "tool_use"


def served(outcome: Any) -> None:
    assert not isinstance(outcome, BaseException), outcome


JSON_CUT = raised(json.JSONDecodeError)  # a cleanly ended, cut JSON body: the SDKs do not wrap it
NO_COMPLETED = raised(
    RuntimeError
)  # responses.stream(): "Didn't receive a `response.completed` event."
OPENAI_ABORT = raised(openai.APIConnectionError)
CLAUDE_ABORT_STREAM = raised(
    httpx2.RemoteProtocolError
)  # the Anthropic stream helper does not wrap it


def same(check: Callable[[Any], None]) -> dict[tuple[str, bool], Callable[[Any], None]]:
    return {(api, stream): check for api in APIS for stream in (False, True)}


def by_sdk(
    openai_check: Callable[[Any], None], claude_check: Callable[[Any], None]
) -> dict[tuple[str, bool], Callable[[Any], None]]:
    return {
        (api, stream): claude_check if api == "anthropic" else openai_check
        for api in APIS
        for stream in (False, True)
    }


EXPECTED: dict[str, tuple[str, dict[tuple[str, bool], Callable[[Any], None]]]] = {
    "fault-429": ("http", by_sdk(raised(openai.RateLimitError), raised(anthropic.RateLimitError))),
    "fault-500": (
        "http",
        by_sdk(raised(openai.InternalServerError), raised(anthropic.InternalServerError)),
    ),
    "fault-503": (
        "http",
        by_sdk(raised(openai.InternalServerError), raised(anthropic.ServiceUnavailableError)),
    ),
    "fault-529": (
        "http",
        by_sdk(raised(openai.InternalServerError), raised(anthropic.OverloadedError)),
    ),
    "fault-stream-error": (
        "stream_error",
        {
            ("chat", False): raised(openai.InternalServerError),
            ("chat", True): raised(openai.APIError),
            ("responses", False): raised(openai.InternalServerError),
            ("responses", True): NO_COMPLETED,
            ("anthropic", False): raised(anthropic.OverloadedError),
            ("anthropic", True): raised(anthropic.APIStatusError),
        },
    ),
    "fault-cut-reset": (
        "truncate",
        {
            **same(OPENAI_ABORT),
            ("anthropic", False): raised(anthropic.APIConnectionError),
            ("anthropic", True): CLAUDE_ABORT_STREAM,
        },
    ),
    "fault-cut-close": (
        "truncate",
        {
            ("chat", False): JSON_CUT,
            ("chat", True): partial_chat,
            ("responses", False): JSON_CUT,
            ("responses", True): NO_COMPLETED,
            ("anthropic", False): JSON_CUT,
            ("anthropic", True): partial_claude,
        },
    ),
    "fault-delay": ("delay", same(served)),
}
# google-genai neither retries by default nor wraps transport errors (docs/http-api.md, Gemini).
GEMINI: dict[str, tuple[Callable[[Any], None], Callable[[Any], None]]] = {  # (plain, stream)
    "fault-429": (google_error(genai_errors.ClientError, 429, "RESOURCE_EXHAUSTED"),) * 2,
    "fault-500": (google_error(genai_errors.ServerError, 500, "INTERNAL"),) * 2,
    "fault-503": (google_error(genai_errors.ServerError, 503, "UNAVAILABLE"),) * 2,
    "fault-529": (google_error(genai_errors.ServerError, 503, "UNAVAILABLE"),) * 2,  # no 529
    # in-band `data: {"error": …}` mid-stream: the SDK raises it while iterating
    "fault-stream-error": (google_error(genai_errors.ServerError, 503, "UNAVAILABLE"),) * 2,
    "fault-cut-reset": (raised(httpx2.RemoteProtocolError),) * 2,
    # a clean close inside the call's frame: the body / the last frame is cut JSON
    "fault-cut-close": (JSON_CUT, raised(genai_errors.UnknownApiResponseError)),
    "fault-delay": (served, served),
}
for _fault, (_plain, _stream) in GEMINI.items():
    EXPECTED[_fault][1].update({("gemini", False): _plain, ("gemini", True): _stream})
CASES = [(f, api, s) for f in EXPECTED for api in ALL_APIS for s in (False, True)]


@pytest.mark.parametrize(
    ("fault", "api", "stream"),
    CASES,
    ids=[f"{f}-{a}-{'stream' if s else 'plain'}" for f, a, s in CASES],
)
def test_what_the_sdk_sees_and_the_log_says(
    faulty: ServerProcess, session: str, fault: str, api: str, stream: bool
) -> None:
    kind, checks = EXPECTED[fault]
    started = time.monotonic()
    try:
        outcome: Any = call(faulty, fault, session, api, stream)
    except Exception as e:
        outcome = e
    elapsed = time.monotonic() - started
    checks[(api, stream)](outcome)
    entry = faulty.last(session)
    assert entry["response"]["fault"]["kind"] == kind
    assert entry["response"]["fault"]["why"] == "scripted: attempt 1"
    if fault == "fault-delay":
        assert elapsed >= 0.2
    if kind == "truncate":
        body = entry["response"]["body"]
        assert entry["response"]["bytes_sent"] == len(body.encode())
        assert (
            "[DONE]" not in body and "message_stop" not in body and "response.completed" not in body
        )


def test_truncation_points_are_exact(faulty: ServerProcess, session: str) -> None:
    """after_bytes sends exactly N bytes; after_events exactly N frames; inside arguments stops
    after half of the call's fragments."""
    body = {"model": "m", "messages": ASK, "tools": CHAT_TOOLS, "stream": True}
    with httpx.Client() as client:
        for scenario in ("fault-cut-bytes", "fault-cut-events", "fault-cut-close"):
            with contextlib.suppress(httpx.RemoteProtocolError):  # fault-cut-events aborts
                client.post(
                    f"{faulty.openai_url(scenario, session)}/chat/completions", json=body
                ).read()
    entries = {e["scenario"]: e["response"] for e in faulty.requests(session=session)}
    assert entries["fault-cut-bytes"]["bytes_sent"] == 120
    frames = entries["fault-cut-events"]["body"].split("\n\n")
    assert len([f for f in frames if f]) == 2
    inside = [json.loads(f[6:]) for f in entries["fault-cut-close"]["body"].split("\n\n") if f]
    fragments = [
        c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        for c in inside
        if c["choices"][0]["delta"].get("tool_calls")
    ]
    assert fragments == ["", '{"city":"Pa']  # the call's start, then 1 of its 3 fragments


@pytest.mark.parametrize("api", ALL_APIS)
@pytest.mark.parametrize("stream", [False, True])
def test_stall_times_out_and_logs_the_hang_up(
    faulty: ServerProcess, session: str, api: str, stream: bool
) -> None:
    with pytest.raises((openai.APITimeoutError, anthropic.APITimeoutError, httpx2.ReadTimeout)):
        call(faulty, "fault-stall", session, api, stream, timeout=0.3)
    deadline = time.monotonic() + 3
    while (entry := faulty.last(session))["duration_ms"] is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert entry["client_disconnected"] is True
    assert entry["response"]["fault"]["kind"] == "stall" and entry["response"]["bytes_sent"] == 0


def test_stall_is_bounded_by_max_stall(faulty: ServerProcess, session: str) -> None:
    """A client with no timeout is not held forever: after --max-stall the server aborts."""
    started = time.monotonic()
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(
            f"{faulty.openai_url('fault-stall', session)}/chat/completions",
            json={"model": "m", "messages": ASK},
            timeout=10,
        )
    assert 2 <= time.monotonic() - started < 5
    entry = faulty.last(session)
    assert "stalled for --max-stall 2 s, then reset" in entry["response"]["notes"][0]
    assert entry["client_disconnected"] is False


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [False, True])
def test_429_twice_then_served_by_the_sdks_own_retries(
    faulty: ServerProcess, session: str, api: str, stream: bool
) -> None:
    outcome = call(faulty, "fault-429-twice", session, api, stream, max_retries=2)
    served(outcome)
    entries = faulty.requests(session=session)
    assert [(e["attempt"], e["response"]["status"]) for e in entries] == [
        (1, 429),
        (2, 429),
        (3, 200),
    ]
    assert [e["response"]["fault"] and e["response"]["fault"]["why"] for e in entries] == [
        "scripted: attempt 1 of times: 2",
        "scripted: attempt 2 of times: 2",
        None,
    ]
    assert entries[0]["response"]["retry_after"] == 0.03
    assert [e["headers"]["x-stainless-retry-count"] for e in entries] == ["0", "1", "2"]
    verdict = httpx.get(f"{faulty.url}/_mockllm/verdict", params={"session": session}).json()
    assert {c["name"]: c["ok"] for c in verdict["checks"]}["retry_after_honoured"] is True


@pytest.mark.parametrize("stream", [False, True])
def test_gemini_429_twice_then_served_by_opt_in_sdk_retries(
    faulty: ServerProcess, session: str, stream: bool
) -> None:
    """google-genai retries only when asked (HttpRetryOptions); it reads no retry header."""
    retry = {"attempts": 3, "initial_delay": 0.01, "max_delay": 0.05}
    served(call(faulty, "fault-429-twice", session, "gemini", stream, retry_options=retry))
    entries = faulty.requests(session=session)
    assert [(e["attempt"], e["response"]["status"]) for e in entries] == [
        (1, 429),
        (2, 429),
        (3, 200),
    ]


def test_gemini_error_shape_carries_retry_info(faulty: ServerProcess, session: str) -> None:
    """Google's clients read the delay from a google.rpc.RetryInfo detail, not a header: the
    scripted retry-after(-ms) goes there too, as a protobuf Duration."""
    url = f"{faulty.url}/s/fault-429/{session}/v1beta/models/gemini-2.5-flash:generateContent"
    r = httpx.post(url, json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    assert r.status_code == 429 and r.headers["retry-after-ms"] == "1"
    assert r.json()["error"] == {
        "code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details. "
        "For more information on this error, head to: "
        "https://ai.google.dev/gemini-api/docs/rate-limits.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.001s"}],
    }


def test_http_fault_headers_and_texts(faulty: ServerProcess, session: str) -> None:
    r = httpx.post(
        f"{faulty.openai_url('fault-429', session)}/chat/completions",
        json={"model": "m", "messages": ASK},
    )
    assert r.status_code == 429 and r.headers["retry-after-ms"] == "1"
    assert (
        r.json()["error"]["type"] == "requests"
        and r.json()["error"]["code"] == "rate_limit_exceeded"
    )
    r = httpx.post(
        f"{faulty.url}/s/fault-529/{session}/v1/messages",
        json={"model": "m", "max_tokens": 5, "messages": ASK},
    )
    assert r.json()["error"] == {"type": "overloaded_error", "message": "Overloaded"}


# --- seeded chaos ----------------------------------------------------------------------------------


def chaos_run(*args: str) -> list[tuple[int, int, Any]]:
    with running_server(*args) as s:
        with httpx.Client() as client:
            for i in range(30):
                client.post(
                    f"{s.url}/s/hello/chaos-{i % 3}/v1/chat/completions",
                    json={"model": "m", "messages": ASK},
                )
        return [
            (e["attempt"], e["response"]["status"], e["response"]["fault"]) for e in s.requests()
        ]


def test_chaos_replays_exactly_with_the_same_seed_and_differs_with_another() -> None:
    flags = ("--chaos", "429=0.3,500=0.2", "--seed")
    first, again, other = chaos_run(*flags, "7"), chaos_run(*flags, "7"), chaos_run(*flags, "8")
    assert first == again
    assert first != other
    faults = [f for _, _, f in first if f]
    assert faults and {f["kind"] for f in faults} == {"http"}
    assert all(f["why"].startswith("chaos: seed 7, draw 0.") for f in faults)
    assert {s for _, s, _ in first} <= {200, 429, 500}
    # The draws themselves, pinned: the same seed replays on any machine and any release.
    assert [s for _, s, _ in first] == [
        200, 429, 500, 500, 200, 200, 429, 429, 200, 500,
        200, 200, 500, 200, 200, 500, 200, 200, 500, 500,
        429, 200, 429, 500, 200, 200, 429, 500, 200, 429,
    ]  # fmt: skip


def test_scenario_chaos_overrides_and_is_logged(server: ServerProcess, session: str) -> None:
    name = f"chaotic-{session}"
    scenario = {
        "name": name,
        "chaos": {"529": 1.0, "seed": 3},
        "turns": [{"reply": {"text": "never"}}],
    }
    assert httpx.post(f"{server.url}/_mockllm/scenarios", json=scenario).status_code == 201
    r = httpx.post(
        f"{server.url}/s/{name}/{session}/v1/chat/completions", json={"model": "m", "messages": ASK}
    )
    assert r.status_code == 529
    assert server.last(session)["response"]["fault"]["why"].startswith("chaos: seed 3, draw ")
