"""The `mcp` SDK's OpenTelemetry middleware runs only where a tracer provider records its
spans (serving/mcp_tracing.py), in process through the ASGI app: with none configured it
is not entered and every answer is byte for byte what it answers when it runs; with a
provider configured (even after start-up) every message gets the SDK's span, on the SDK's
transport and past it (serving/mcp_direct.py) alike; the API's no-op provider counts as
none."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp.shared._otel as sdk_otel
import pytest
from mcp.server._otel import OpenTelemetryMiddleware
from opentelemetry import trace
from opentelemetry.environment_variables import OTEL_PYTHON_TRACER_PROVIDER
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mockllm.loading.loader import load_text
from mockllm.serving import mcp_tracing
from mockllm.serving.server import build_app
from tests.e2e.mcp.test_mcp_direct_app import SCENARIO, Http, call

PATH = "/s/direct/one/mcp/orders"
ASKS = [
    call(1, "lookup_order", {"order_id": "A1"}),  # the session's first: the SDK's transport
    call(2, "lookup_order", {"order_id": "A1"}),  # past it from here on
    call(3, "broken"),
    call(4, "nope"),
    {"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
]
# the messages of a session: its handshake, then ASKS
METHODS = ["initialize", "notifications/initialized", *["tools/call"] * 4, "tools/list"]


def answered(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[str]]:
    """ASKS on a fresh app's session: the answers, the messages the SDK's middleware saw."""
    entered: list[str] = []
    original = OpenTelemetryMiddleware.__call__

    async def counting(self: Any, ctx: Any, call_next: Any) -> Any:
        entered.append(ctx.method)
        return await original(self, ctx, call_next)

    monkeypatch.setattr(OpenTelemetryMiddleware, "__call__", counting)

    async def go() -> list[Any]:
        http = Http(build_app([load_text(SCENARIO)]))
        session = await http.open(PATH)
        answers = []
        for ask in ASKS:
            status, headers, body = await http.post(PATH, json.dumps(ask).encode(), session)
            headers.pop(b"mcp-session-id")
            answers.append((status, headers, body))
        return answers

    return asyncio.run(go()), entered


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    """A tracer provider configured for this test only (the API sets one once per process):
    the SDK's proxy tracer made anew, so that it does not keep it past the test."""
    exporter = InMemorySpanExporter()
    configured = TracerProvider()
    configured.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", configured)
    monkeypatch.setattr(sdk_otel, "_tracer", trace.ProxyTracer("mcp-python-sdk"))
    return exporter


def test_with_no_tracer_provider_the_middleware_is_skipped_and_nothing_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(OTEL_PYTHON_TRACER_PROVIDER, raising=False)
    assert not mcp_tracing.recording()
    answers, entered = answered(monkeypatch)
    assert entered == []
    with monkeypatch.context() as forced:  # the other side: the SDK's middleware run anyway
        forced.setattr(mcp_tracing, "recording", lambda: True)
        traced, traced_entered = answered(forced)
    assert traced_entered == METHODS
    assert answers == traced
    bodies = [json.loads(body) for _, _, body in answers]
    assert bodies[1]["result"]["content"][0]["text"] == "Order A1: shipped"
    assert bodies[2]["error"] == {"code": -32000, "message": "down"}


def test_a_configured_provider_gets_the_sdks_span_for_every_message(
    monkeypatch: pytest.MonkeyPatch, provider: InMemorySpanExporter
) -> None:
    monkeypatch.delenv(OTEL_PYTHON_TRACER_PROVIDER, raising=False)
    assert mcp_tracing.recording()
    answers, entered = answered(monkeypatch)
    assert entered == METHODS
    spans = provider.get_finished_spans()
    assert [s.attributes["mcp.method.name"] for s in spans if s.attributes] == METHODS
    calls = [s for s in spans if s.name.startswith("tools/call")]
    assert [s.name for s in calls] == ["tools/call lookup_order"] * 2 + [
        "tools/call broken",
        "tools/call nope",
    ]
    assert [s.attributes["jsonrpc.request.id"] for s in calls if s.attributes] == list("1234")
    assert [s.status.status_code for s in calls] == [trace.StatusCode.UNSET] * 2 + [
        trace.StatusCode.ERROR
    ] * 2
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)  # the same answers untraced
    assert answered(monkeypatch)[0] == answers


def test_the_apis_no_op_provider_records_nothing_either(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", trace.NoOpTracerProvider())
    assert not mcp_tracing.recording()
    assert answered(monkeypatch)[1] == []
