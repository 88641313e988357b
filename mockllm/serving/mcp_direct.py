"""A `tools/call` or `tools/list` answered past the `mcp` SDK's transport (issue 36).

The SDK's streamable HTTP transport costs a call about twice a model request: a starlette
Request, memory streams, and a dispatcher task per message. For the plain case, a session
the SDK has already established (it answered one of its `tools/*` requests) on a server
whose calls answer as one JSON body and at once (no fault that waits or sends anything
first), a request is run here by the SDK's own `ServerRunner`, so the params models, the
middleware (OpenTelemetry, the log), the handler and the result's sieve are the SDK's, and
answered with the SDK's `JSONRPCResponse`/`JSONRPCError` bytes and headers. Anything else
(initialize, notifications, GET, DELETE, batches, another protocol era, a header or body
the SDK would refuse, SSE-mode servers) is not taken here and goes through the SDK.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import anyio
import pydantic_core
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.runner import ServerRunner
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse, RequestId
from mcp_types import jsonrpc_message_adapter as messages
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request

from mockllm.serving.asgi import Scope, Send

SESSION_HEADER = MCP_SESSION_ID_HEADER.encode("latin-1")
METHODS = frozenset({"tools/call", "tools/list"})
DIRECT_KEY = "mockllm.direct"  # in the scope of a request answered here
logger = logging.getLogger(__name__)
_TRANSPORT = TransportContext(kind="streamable-http", can_send_request=False)  # JSON mode's


class Direct:
    """The established sessions of one SDK `Server` (their negotiated protocol version)."""

    def __init__(self, sdk: Server[Any], idle_timeout: float, limit: int = 4096) -> None:
        self.sdk, self.idle_timeout = sdk, idle_timeout
        # MCP session id → a runner on a ready connection of the session's version,
        # oldest first; bounded: a session forgotten is served by the SDK, which marks it again
        self._ready: dict[str, ServerRunner[Any]] = {}
        self._limit = limit
        self._accept: dict[bytes, bool] = {}  # see _accepts_json

    def established(self, sid: str, version: str) -> None:
        """The SDK answered a `tools/*` request of session `sid`: its handshake is done."""
        found = self._ready.get(sid)
        if found is None or found.connection.protocol_version != version:
            connection = Connection.from_envelope(version, None, None)  # born ready
            self._ready[sid] = ServerRunner(self.sdk, connection, {})
            if len(self._ready) > self._limit:
                del self._ready[next(iter(self._ready))]

    def forget(self, sid: str) -> None:
        self._ready.pop(sid, None)

    def request(
        self, manager: StreamableHTTPSessionManager, scope: Scope, sid: str, body: bytes
    ) -> Found | None:
        """What to answer here, or None: the SDK answers it."""
        runner = self._ready.get(sid)
        if runner is None or not manager.json_response or manager.stateless:
            return None
        if manager.security_settings is not None or "user" in scope:
            return None  # Host/Origin checks, a session's owner: mockllm sets neither
        transport = manager._server_instances.get(sid)  # the SDK's sessions (mcp_guard too)
        if transport is None or transport.is_terminated:
            return None
        if transport.idle_scope is not None and transport.idle_scope.cancel_called:
            return None
        sent = _headers(scope["headers"])
        version = sent.get(b"mcp-protocol-version")
        if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None  # the SDK's 2026-era entry
        if sent.get(b"content-type") != b"application/json":
            return None
        if not self._accepts_json(sent.get(b"accept", b"")):
            return None
        try:
            message = messages.validate_python(pydantic_core.from_json(body), by_name=False)
        except ValueError:  # pydantic's ValidationError is one: the SDK answers it
            return None
        if not isinstance(message, JSONRPCRequest) or message.method not in METHODS:
            return None
        scope[DIRECT_KEY] = True  # (our own copy of the request's scope)
        return Found(runner, message, Request(scope), transport.idle_scope)

    def _accepts_json(self, accept: bytes) -> bool:
        """The SDK's own Accept check, remembered by the header's value: a client sends
        the same one on every request (bounded: a value past the bound is checked anew)."""
        found = self._accept.get(accept)
        if found is None:
            asked = Request({"type": "http", "headers": [(b"accept", accept)]})
            found = check_accept_headers(asked)[0]
            if len(self._accept) < 64:
                self._accept[accept] = found
        return found

    async def answer(self, found: Found, sid: str, send: Send) -> None:
        """Run the request as the SDK's dispatcher does and answer as its transport does."""
        runner, message, request = found.runner, found.message, found.request
        metadata = ServerMessageMetadata(request_context=request, can_send_request=False)
        dctx = _Exchange(message.id, metadata)
        reply: JSONRPCResponse | JSONRPCError
        try:
            result = await runner.on_request(dctx, message.method, message.params)
            reply = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
        except Exception as e:  # the dispatcher's one exception-to-wire boundary
            error = handler_exception_to_error_data(e)
            if error is None:
                logger.exception("handler for %r raised", message.method)
                error = ErrorData(code=0, message=str(e))
            reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        body = reply.model_dump_json(by_alias=True, exclude_unset=True).encode()
        # the transport's starlette Response, its headers in its order
        headers = [(b"content-type", b"application/json"), (SESSION_HEADER, sid.encode("latin-1"))]
        headers.append((b"content-length", str(len(body)).encode("latin-1")))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        idle = found.idle
        if idle is not None and idle.deadline != math.inf:
            # the session's idle countdown restarts, as after a request the SDK served
            # (an infinite deadline: another request, e.g. the GET stream, holds it open)
            idle.deadline = anyio.current_time() + self.idle_timeout


def _headers(raw: list[tuple[bytes, bytes]]) -> dict[bytes, bytes]:
    """A request's headers by name, the first of each kept (as starlette's `get` finds):
    read backwards, a later one is overwritten by an earlier one."""
    return dict(reversed(raw))


@dataclass(frozen=True, slots=True)
class Found:
    runner: ServerRunner[Any]
    message: JSONRPCRequest
    request: Request
    idle: anyio.CancelScope | None  # the session's idle countdown (the SDK's transport)


class _Exchange:
    """The dispatch context of one request answered here: JSON-response mode's, with no
    back-channel (what the SDK's transport gives a request in that mode)."""

    transport = _TRANSPORT
    can_send_request = False

    def __init__(self, request_id: RequestId, metadata: ServerMessageMetadata) -> None:
        self.request_id, self.message_metadata = request_id, metadata
        self._cancel: anyio.Event | None = None

    @property
    def cancel_requested(self) -> anyio.Event:
        """Never set: nothing here waits, so nothing is left to cancel."""
        if self._cancel is None:
            self._cancel = anyio.Event()
        return self._cancel

    async def notify(self, method: str, params: Any, opts: Any = None) -> None:
        return None  # a JSON body carries only the response: the SDK drops these too

    async def progress(
        self, progress: float, total: float | None = None, message: Any = None
    ) -> None:
        return None

    async def send_raw_request(self, method: str, params: Any, opts: Any = None) -> Any:
        raise NoBackChannelError(method)

    def close(self) -> None:
        return None
