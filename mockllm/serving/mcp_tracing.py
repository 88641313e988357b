"""The `mcp` SDK's OpenTelemetry middleware, run only where its spans record something.

The SDK's low-level `Server` wraps every message in an OpenTelemetry span. With no tracer
provider configured (the API's default proxy provider, or its no-op one) each span is a
no-op that still costs about a tenth of a `tools/call` to build (issue 36), so it is
skipped then. Wherever a provider is configured (in code, by `opentelemetry-instrument`,
or named by `OTEL_PYTHON_TRACER_PROVIDER`), even one set after start-up, the SDK's
middleware runs as before.
"""

from __future__ import annotations

from typing import Any

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, get_tracer_provider

_UNRECORDED = (ProxyTracerProvider, NoOpTracerProvider)  # the API's, recording nothing


def recording() -> bool:
    """Whether a tracer provider is configured. One named by `OTEL_PYTHON_TRACER_PROVIDER`
    is loaded by the API when the SDK imports its tracer (`get_tracer`), before any call."""
    return not isinstance(get_tracer_provider(), _UNRECORDED)


class WhenRecording:
    """One of the SDK's middleware, passed through while no provider records spans."""

    def __init__(self, traced: ServerMiddleware[Any]) -> None:
        self.traced = traced

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if recording():
            return await self.traced(ctx, call_next)
        return await call_next(ctx)


def traced_only_when_recording(middleware: list[ServerMiddleware[Any]]) -> None:
    """Wrap the SDK's OpenTelemetry middleware in a `Server`'s list, in place."""
    middleware[:] = [
        WhenRecording(m) if isinstance(m, OpenTelemetryMiddleware) else m for m in middleware
    ]
