"""The Gemini API through the official google-genai SDK on real HTTP: generate_content and
generate_content_stream, automatic function calling off and on, results paired by name and
position (no ids on this wire), thought signatures, calls the wire cannot carry, errors in
Google's shape, listings, and byte-identical replays."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors, types

from tests.support import TOOL_PARAMETERS, ServerProcess, running_server
from tests.support.drivers import merged

QUESTION = "北京和上海?"
NO_AFC = {"automatic_function_calling": {"disable": True}}
WEATHER = [
    {"function_declarations": [{"name": "get_weather", "parameters_json_schema": TOOL_PARAMETERS}]}
]


@pytest.fixture
def gemini(server: ServerProcess, session: str) -> Iterator[Any]:
    """`gemini("weather-single")` → a google-genai client on that scenario and session."""
    clients: list[genai.Client] = []

    def make(scenario: str, **http: Any) -> genai.Client:
        base = f"{server.url}/s/{scenario}/{session}"
        client = genai.Client(api_key="k", http_options={"base_url": base, **http})
        clients.append(client)
        return client

    yield make
    for c in clients:
        c.close()


def url(server: ServerProcess, scenario: str, session: str, method: str = "generateContent") -> str:
    return f"{server.url}/s/{scenario}/{session}/v1beta/models/gemini-2.5-flash:{method}"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def test_round_trip_with_parallel_calls_paired_by_name_and_position(
    gemini: Any, server: ServerProcess, session: str
) -> None:
    client = gemini("weather-parallel")
    config = {"tools": WEATHER, **NO_AFC}
    first = client.models.generate_content(
        model="gemini-2.5-flash", contents=QUESTION, config=config
    )
    assert first.text == "我先查一下。"
    assert [(c.id, c.name, c.args) for c in first.function_calls] == [
        (None, "get_weather", {"city": "北京"}),  # no id: the API sends none
        (None, "get_weather", {"city": "上海"}),
    ]
    assert first.candidates[0].finish_reason == types.FinishReason.STOP
    answers = [
        types.Part.from_function_response(name="get_weather", response={"result": r})
        for r in ("25度", "22度")
    ]
    history = [
        user(QUESTION),
        first.candidates[0].content,
        types.Content(role="user", parts=answers),
    ]
    second = client.models.generate_content(
        model="gemini-2.5-flash", contents=history, config=config
    )
    assert second.text == "北京多云25℃，上海小雨22℃。"
    entry = server.last(session)
    assert entry["violations"] == [] and entry["turn"] == 1
    assert entry["tool_results"] == [
        {
            "call_id": "turn0.call0",
            "content": "25度",
            "is_error": False,
            "paired": "by name and position",
        },
        {
            "call_id": "turn0.call1",
            "content": "22度",
            "is_error": False,
            "paired": "by name and position",
        },
    ]
    served = server.requests(session=session)[0]["response"]["tool_calls"]
    assert [c["id"] for c in served] == ["turn0.call0", "turn0.call1"]


def test_stream_chunks_add_up_to_the_plain_reply(gemini: Any) -> None:
    client = gemini("reasoning")
    config = {"tools": WEATHER, **NO_AFC}
    plain = client.models.generate_content(
        model="gemini-2.5-flash", contents="Oslo?", config=config
    )
    chunks = list(
        client.models.generate_content_stream(
            model="gemini-2.5-flash", contents="Oslo?", config=config
        )
    )
    assert len(chunks) > 3  # thought in 5-character pieces, the call whole, the closing frame
    assert [p.thought for p in chunks[0].candidates[0].content.parts] == [True]
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    both = [plain, merged(chunks)]
    parts = [[p.model_dump(exclude_none=True) for p in r.candidates[0].content.parts] for r in both]
    assert (
        parts[0]
        == parts[1]
        == [
            {"text": "The user wants the weather; I should call the tool.", "thought": True},
            {"function_call": {"args": {"city": "Oslo"}, "name": "get_weather"}},
        ]
    )
    usage = plain.usage_metadata
    assert usage.thoughts_token_count == 13 and usage.prompt_token_count > 0
    assert usage.total_token_count == (
        usage.prompt_token_count + usage.candidates_token_count + usage.thoughts_token_count
    )
    assert merged(chunks).usage_metadata == usage


def weather(city: str) -> str:
    """Current weather in a city."""
    return {"北京": "25度", "上海": "22度"}[city]


@pytest.mark.parametrize("stream", [False, True])
def test_automatic_function_calling_runs_the_calls_and_pairs_them_by_name(
    gemini: Any, server: ServerProcess, session: str, stream: bool
) -> None:
    """AFC answers with {"result": …} parts that carry no id; streamed, it replays one model
    content per chunk, which the API (and mockllm) read as one turn."""
    name = "weather-parallel-afc"
    scenario = {
        "name": name,
        "turns": [
            {
                "reply": {
                    "text": "我先查一下。",
                    "tool_calls": [
                        {"name": "weather", "arguments": {"city": "北京"}},
                        {"name": "weather", "arguments": {"city": "上海"}},
                    ],
                }
            },
            {
                "expect": {"tool_results": [{"contains": "25"}, {"contains": "22"}]},
                "reply": {"text": "好"},
            },
        ],
    }
    assert httpx.post(f"{server.url}/_mockllm/scenarios", json=scenario).status_code in (200, 201)
    client = gemini(name)
    config = types.GenerateContentConfig(tools=[weather])
    if stream:
        chunks = list(
            client.models.generate_content_stream(
                model="gemini-2.5-flash", contents=QUESTION, config=config
            )
        )
        text = "".join(c.text or "" for c in chunks)
        assert text.endswith("好")
    else:
        response = client.models.generate_content(
            model="gemini-2.5-flash", contents=QUESTION, config=config
        )
        assert response.text == "好"
        assert len(response.automatic_function_calling_history) == 3
    entries = server.requests(session=session)
    assert [e["response"]["status"] for e in entries] == [200, 200]
    last = entries[-1]
    assert last["violations"] == [] and last["expectation_failures"] == []
    assert [(r["call_id"], r["paired"]) for r in last["tool_results"]] == [
        ("turn0.call0", "by name and position"),
        ("turn0.call1", "by name and position"),
    ]
    verdict = httpx.get(f"{server.url}/_mockllm/verdict", params={"session": session}).json()
    assert verdict["ok"], verdict


def test_results_pair_by_id_when_present_and_the_log_says_so(
    warn_server: ServerProcess, session: str
) -> None:
    call = {"functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}}
    body = {
        "contents": [
            user("Weather?"),
            {
                "role": "model",
                "parts": [call, {**call, "functionCall": {**call["functionCall"], "id": "c2"}}],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "c2",
                            "name": "get_weather",
                            "response": {"output": "b"},
                        }
                    },
                    {"functionResponse": {"name": "get_weather", "response": {"error": "boom"}}},
                ],
            },
        ]
    }
    r = httpx.post(url(warn_server, "rules", session), json=body)
    assert r.status_code == 200  # --validation warn: this history is not the one `rules` served
    results = warn_server.last(session)["tool_results"]
    assert results == [
        {"call_id": "turn0.call1", "content": "b", "is_error": False, "paired": "by id"},
        {
            "call_id": "turn0.call0",
            "content": "boom",
            "is_error": True,
            "paired": "by name and position",
        },
    ]


def test_gemini_3_signs_its_calls_and_takes_them_back_as_the_sdk_replays_them(
    gemini: Any, server: ServerProcess, session: str
) -> None:
    client = gemini("weather-single")
    config = {"tools": WEATHER, **NO_AFC}
    model = "gemini-3-pro-preview"
    first = client.models.generate_content(model=model, contents="Paris?", config=config)
    parts = first.candidates[0].content.parts
    signed = [p for p in parts if p.thought_signature]
    assert signed == [p for p in parts if p.function_call][:1]  # on the first call only
    raw = server.last(session)["response"]["body"]
    assert f'"thoughtSignature":"{base64.b64encode(signed[0].thought_signature).decode()}"' in raw
    answer = types.Part.from_function_response(name="get_weather", response={"result": "18 °C"})
    history = [
        user("Paris?"),
        first.candidates[0].content,
        types.Content(role="user", parts=[answer]),
    ]
    second = client.models.generate_content(model=model, contents=history, config=config)
    assert "18" in (second.text or "")
    sent = server.last(session)["request"]["contents"][1]["parts"][0]["thoughtSignature"]
    assert base64.urlsafe_b64decode(sent) == signed[0].thought_signature  # replayed url-safe
    assert server.last(session)["violations"] == []


def test_gemini_2_5_sends_no_signature(gemini: Any, server: ServerProcess, session: str) -> None:
    gemini("weather-single").models.generate_content(
        model="gemini-2.5-flash", contents="Paris?", config={"tools": WEATHER, **NO_AFC}
    )
    assert "thoughtSignature" not in server.last(session)["response"]["body"]


@pytest.mark.parametrize(
    ("scenario", "reason"), [("prose-args", "MALFORMED_FUNCTION_CALL"), ("cut-args", "MAX_TOKENS")]
)
@pytest.mark.parametrize("stream", [False, True])
def test_arguments_a_function_call_cannot_carry(
    gemini: Any, server: ServerProcess, session: str, scenario: str, reason: str, stream: bool
) -> None:
    """A call is sent whole with an object `args`: one that is not an object goes out as the
    API sends a call the model could not form — no content, only the finish reason."""
    client = gemini(scenario)
    kwargs = {
        "model": "gemini-2.5-flash",
        "contents": "Paris?",
        "config": {"tools": WEATHER, **NO_AFC},
    }
    if stream:
        response = merged(list(client.models.generate_content_stream(**kwargs)))
    else:
        response = client.models.generate_content(**kwargs)
    candidate = response.candidates[0]
    assert candidate.content is None and candidate.finish_reason.value == reason
    assert response.function_calls is None and response.text is None
    assert response.usage_metadata.total_token_count == response.usage_metadata.prompt_token_count
    logged = server.last(session)["response"]
    assert logged["tool_calls"] == []
    (note,) = logged["notes"]
    assert note.startswith("call 0 (get_weather): arguments ")
    assert note.endswith(f"the reply was sent as finishReason {reason} with no content")


def test_tool_config_is_checked_as_tool_choice(
    gemini: Any, server: ServerProcess, session: str
) -> None:
    client = gemini("forced")
    forced = {"function_calling_config": {"mode": "ANY", "allowed_function_names": ["get_weather"]}}
    response = client.models.generate_content(
        model="gemini-2.5-flash",
        contents="Lima?",
        config={"tools": WEATHER, "tool_config": forced, **NO_AFC},
    )
    assert response.function_calls[0].args == {"city": "Lima"}
    with pytest.raises(
        errors.ClientError, match="expected tool_choice \\{tool: get_weather\\}, got auto"
    ):
        client.models.generate_content(
            model="gemini-2.5-flash", contents="Lima?", config={"tools": WEATHER, **NO_AFC}
        )


def test_afc_schemas_in_gemini_s_dialect_feed_generate(
    gemini: Any, server: ServerProcess, session: str
) -> None:
    """`parameters` from a Python callable says type: OBJECT / STRING; generate: reads it as
    JSON Schema: valid arguments have the required string, missing_required lacks it."""
    name = f"generated-{session}"
    calls = [{"name": "weather", "generate": k} for k in ("valid", "missing_required")]
    scenario = {"name": name, "turns": [{"reply": {"tool_calls": calls}}]}
    assert httpx.post(f"{server.url}/_mockllm/scenarios", json=scenario).status_code in (200, 201)
    client = gemini(name)
    declaration = types.FunctionDeclaration.from_callable(
        client=client._api_client, callable=weather
    )
    assert declaration.parameters.type == types.Type.OBJECT
    config = {"tools": [types.Tool(function_declarations=[declaration])], **NO_AFC}
    response = client.models.generate_content(model="gemini-2.5-flash", contents="?", config=config)
    valid, missing = (c.args for c in response.function_calls)
    assert isinstance(valid["city"], str) and "city" not in missing


@pytest.mark.parametrize("version", ["v1", "v1beta"])
def test_routes_listings_and_auth(server: ServerProcess, session: str, version: str) -> None:
    with genai.Client(
        api_key="any",
        http_options={"base_url": f"{server.url}/s/hello/{session}", "api_version": version},
    ) as client:
        reply = client.models.generate_content(model="gemini-2.5-pro", contents="hi")
        assert (reply.text or "").startswith("Hello!")
        assert client.models.get(model="gemini-2.5-pro").name == "models/gemini-2.5-pro"
        names = [m.name for m in client.models.list()]
        assert "models/gemini-2.5-flash" in names
    key = httpx.post(  # ?key= instead of the header, and no session in the path
        f"{server.url}/s/hello/{version}/models/gemini-2.5-flash:generateContent?key=x",
        json={"contents": [user("hi")]},
    )
    assert key.status_code == 200 and key.json()["modelVersion"] == "gemini-2.5-flash"
    shared = f"{server.url}/v1/models"
    assert "models" in httpx.get(shared, headers={"x-goog-api-key": "k"}).json()
    assert "data" in httpx.get(shared).json()  # OpenAI's shape without Google's header


def test_bad_requests_get_google_errors_and_are_logged(server: ServerProcess, session: str) -> None:
    cases = [
        ({}, "* GenerateContentRequest.contents: contents is not specified\n"),
        (
            {"contents": [user("hi"), {"role": "model", "parts": []}]},
            "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.\n",
        ),
        (
            {"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]},
            "Please use a valid role: user, model.",
        ),
    ]
    for body, message in cases:
        r = httpx.post(url(server, "hello", session), json=body)
        assert r.status_code == 400
        assert r.json() == {
            "error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}
        }
    r = httpx.post(
        url(server, "hello", session),
        content=b"{nope",
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 400 and r.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert len(server.requests(session=session)) == 4
    assert (
        httpx.post(url(server, "hello", session), json={"contents": [user("hi")]}).status_code
        == 200
    )


def test_replays_are_byte_identical(server: ServerProcess) -> None:
    """The same request to the same turn, on another server run: the same bytes, headers too."""
    body = {
        "contents": [user("Paris?")],
        "tools": [{"functionDeclarations": [{"name": "get_weather"}]}],
    }
    methods = ("generateContent", "streamGenerateContent?alt=sse")
    first = [httpx.post(url(server, "weather-single", "det-gemini", m), json=body) for m in methods]
    with running_server() as other:
        again = [
            httpx.post(url(other, "weather-single", "det-gemini", m), json=body) for m in methods
        ]
    for one, two in zip(first, again, strict=True):
        assert one.status_code == 200 and one.content == two.content
        assert one.headers == two.headers
    frames = first[1].content.split(b"\r\n\r\n")
    assert frames[-1] == b"" and all(f.startswith(b"data: {") for f in frames[:-1])


HOSTILE: list[Any] = [
    [],
    "contents",
    {"contents": "hi"},
    {"contents": [None, 5]},
    {"contents": [{"role": "model", "parts": "x"}]},
    {"contents": [{"parts": [{"functionCall": "f"}, {"functionResponse": 3}, 7]}]},
    {"contents": [user("a"), {"role": "model", "parts": [{"functionCall": {"args": "no"}}]}]},
    {"contents": [{"parts": [{"functionResponse": {"name": 1, "response": [1, {"a": None}]}}]}]},
    {"contents": [user("a")], "tools": {"functionDeclarations": 1}},
    {"contents": [user("a")], "tools": [{"functionDeclarations": [{"name": None}]}]},
    {
        "contents": [user("a")],
        "tools": [{"function_declarations": [{"name": "f", "parameters": 5}]}],
    },
    {"contents": [user("a")], "toolConfig": {"functionCallingConfig": {"mode": "SOMETIMES"}}},
    {"contents": [user("a")], "systemInstruction": 42},
]


@pytest.mark.parametrize("body", HOSTILE, ids=[str(i) for i in range(len(HOSTILE))])
def test_hostile_bodies_get_google_errors_never_a_crash(
    server: ServerProcess, session: str, body: Any
) -> None:
    r = httpx.post(url(server, "hello", session), json=body)
    assert r.status_code in (200, 400), r.text
    if r.status_code == 400:
        assert set(r.json()["error"]) == {"code", "message", "status"}
    entry = server.last(session)
    assert entry["server_error"] is None and entry["response"]["status"] == r.status_code


@pytest.mark.parametrize(
    "path",
    [
        "v1beta/models/:generateContent",
        "v1beta/models/gemini-2.5-flash:generateContent/extra",
        "v2/models/gemini-2.5-flash:generateContent",
        "v1beta/models/a/b:generateContent",
    ],
)
def test_paths_that_are_not_gemini_methods_are_404(server: ServerProcess, path: str) -> None:
    r = httpx.post(f"{server.url}/s/hello/{path}", json={"contents": [user("hi")]})
    assert r.status_code == 404 and "route_not_found" in r.text
