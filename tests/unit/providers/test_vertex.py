"""Vertex AI's routes in-process: which wire answers each path shape (versioned, versionless,
express mode), the session prefix read around them, the model from the path, what each
refuses, and the error envelopes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm.errors import RequestError
from mockllm.providers import ADAPTERS
from mockllm.providers.vertex_anthropic import VertexAnthropic
from mockllm.providers.vertex_gemini import VertexGemini
from mockllm.serving.routing import Routes
from mockllm.serving.side_routes import counting_api

ROUTES = Routes([cls() for cls in ADAPTERS.values()])
PLACE = "projects/my-proj/locations/us-east5/publishers"
CASES = [
    (f"v1beta1/{PLACE}/google/models/gemini-2.5-flash:generateContent", "vertex-gemini"),
    (f"v1/{PLACE}/google/models/gemini-2.5-flash:streamGenerateContent", "vertex-gemini"),
    ("v1beta1/publishers/google/models/gemini-2.5-flash:generateContent", "vertex-gemini"),
    (f"v1/{PLACE}/anthropic/models/claude-sonnet-4-6@20260101:rawPredict", "vertex-anthropic"),
    (f"{PLACE}/anthropic/models/claude-sonnet-4-6:streamRawPredict", "vertex-anthropic"),
]


@pytest.mark.parametrize(("route", "api"), CASES)
def test_each_path_shape_finds_its_wire_with_or_without_a_session(route: str, api: str) -> None:
    adapter = ROUTES.post(route)
    assert adapter is not None and adapter.api == api
    assert ROUTES.split(f"/s/hello/{route}") == ("hello", None, route)
    assert ROUTES.split(f"/s/hello/run-1/{route}") == ("hello", "run-1", route)


def test_token_counting_is_a_side_route_not_a_turn() -> None:
    claude = f"v1/{PLACE}/anthropic/models/count-tokens:rawPredict"
    gemini = f"v1beta1/{PLACE}/google/models/gemini-2.5-flash:countTokens"
    assert ROUTES.post(claude) is None and ROUTES.post(gemini) is None
    assert counting_api(claude) == "vertex-anthropic" and counting_api(gemini) == "vertex-gemini"
    assert ROUTES.split(f"/s/hello/run/{claude}") == ("hello", "run", claude)
    assert ROUTES.split(f"/s/hello/{gemini}") == ("hello", None, gemini)


def test_the_model_and_the_stream_come_from_the_path() -> None:
    body = {"anthropic_version": "2026-10-21", "max_tokens": 5, "messages": []}
    route = f"v1/{PLACE}/anthropic/models/claude-opus-4-7@x:streamRawPredict"
    conversation = VertexAnthropic().parse_at({**body, "model": "ignored"}, route).conversation
    assert (conversation.model, conversation.stream) == ("claude-opus-4-7@x", True)
    gemini = VertexGemini().parse_at(
        {"contents": [{"parts": [{"text": "hi"}]}]},
        f"v1/{PLACE}/google/models/gemini-3-pro-preview:streamGenerateContent",
    )
    assert (gemini.conversation.model, gemini.conversation.stream) == ("gemini-3-pro-preview", True)


def test_claude_without_anthropic_version_is_refused_in_anthropic_s_words() -> None:
    route = f"v1/{PLACE}/anthropic/models/m:rawPredict"
    with pytest.raises(RequestError) as refused:
        VertexAnthropic().parse_at({"max_tokens": 5, "messages": []}, route)
    body = json.loads(VertexAnthropic().error_body(refused.value, "req_1"))
    assert body["error"] == {
        "type": "invalid_request_error",
        "message": "anthropic_version: Field required",
    }


def test_vertex_s_quota_429_is_google_s_envelope_on_both_publishers() -> None:
    for adapter in (VertexAnthropic(), VertexGemini()):
        error = adapter.fault_error(429)
        body = json.loads(adapter.error_body(error, "r"))["error"]
        assert (body["code"], body["status"]) == (429, "RESOURCE_EXHAUSTED")
        assert "vertex-ai" in body["message"]


@given(st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=60))
def test_any_path_under_a_project_finds_a_wire_or_none_without_failing(rest: str) -> None:
    route = f"v1/projects/{rest}"
    adapter = ROUTES.post(route)
    assert adapter is None or adapter.api.startswith("vertex-")
    ROUTES.split(f"/s/x/{route}")
