"""Requests an agent CLI sends besides its turns, answered outside the scenario.

- `HEAD`/`GET` on the base URL (`/`, `/v1`, `/s/SCENARIO[/SESSION]`): a preconnect or
  reachability probe (Claude Code's `HEAD` before its first request). 200, not logged, as
  `GET /v1/models` is not: it is no model request, so the verdict never sees it.
- `GET inference-profiles`: Bedrock's ListInferenceProfiles (its control plane), which
  Claude Code on Bedrock asks at start, at its `ANTHROPIC_BEDROCK_BASE_URL`: an empty list,
  not logged, so it keeps its model id as it is (it got a 404 before, logged).
- Token counting (`POST /v1/messages/count_tokens`, Gemini's `:countTokens`, on Vertex AI
  too, and Claude on Vertex's `count-tokens:rawPredict`): the same
  deterministic estimate the turns' `usage` carries, from the request's conversation.
  Not a turn: logged as a side request (`side.name: count_tokens`), which the verdict
  leaves out as it does the scenario's; a body the provider would refuse gets its 400.
- A WebSocket upgrade where this server takes none (`--no-websocket`, or no WebSocket
  library): 426 Upgrade Required at once, logged, so a client (Codex) falls back to HTTP
  without retrying; the report does not count it against the session.
"""

from __future__ import annotations

import json

from mockllm._version import __version__
from mockllm.core import wirejson
from mockllm.core.engine import input_tokens
from mockllm.errors import RequestError
from mockllm.log.journal import Journal
from mockllm.providers import Adapter
from mockllm.serving.asgi import Receive, Scope, Send, read_body
from mockllm.serving.responder import Responder
from mockllm.serving.routing import (
    ANTHROPIC_COUNT,
    GEMINI_COUNT,
    VERTEX_ANTHROPIC_COUNT,
    VERTEX_GEMINI_COUNT,
)

PROBE_ROUTES = frozenset({"", "v1", "v1beta"})
BEDROCK_PROFILES = "inference-profiles"
# The kind of a refused upgrade: logged, never a failure of the session (cli._refused).
UPGRADE_REQUIRED = "upgrade_required"


def is_probe(scope: Scope, route: str) -> bool:
    route = route.rstrip("/")
    if scope["method"] == "GET" and route == BEDROCK_PROFILES:
        return True
    return scope["method"] in ("HEAD", "GET") and route in PROBE_ROUTES


async def probe(scope: Scope, send: Send, route: str) -> None:
    answer: dict[str, object] = (
        {"inferenceProfileSummaries": []}
        if route.rstrip("/") == BEDROCK_PROFILES
        else {"mockllm": __version__}
    )
    body = b"" if scope["method"] == "HEAD" else json.dumps(answer).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def counting_api(route: str) -> str | None:
    """The API whose token-counting route this is, if any."""
    if route == ANTHROPIC_COUNT:
        return "anthropic"
    if GEMINI_COUNT.fullmatch(route):
        return "gemini"
    if VERTEX_GEMINI_COUNT.fullmatch(route):
        return "vertex-gemini"
    if VERTEX_ANTHROPIC_COUNT.fullmatch(route):  # the model is in the body
        return "vertex-anthropic"
    return None


async def count_tokens(
    scope: Scope,
    receive: Receive,
    send: Send,
    adapter: Adapter,
    route: str,
    max_body: int,
    journal: Journal,
    names: tuple[str | None, str | None],
) -> None:
    """Answer a token count, logged as a side request (`side.name: count_tokens`)."""
    entry = journal.open(scope["path"], scope["headers"], scope["method"])
    entry.api, entry.scenario, entry.session = adapter.api, names[0], names[1] or "default"
    entry.side = {"name": "count_tokens", "why": f"token counting ({route}): outside the turns"}
    raw = b""
    try:
        raw = await read_body(receive, max_body)
        entry.body = raw
        status, out = 200, _counted(adapter, route, raw)
    except RequestError as error:
        status, out = error.status, adapter.error_body(error, "")
        entry.error = {"kind": error.kind, "message": str(error)}
    except Exception as error:  # a body whose types are off: the provider's 400
        refusal = adapter.refusal(error, raw)
        if refusal is None:
            raise
        status, out = refusal.status, adapter.error_body(refusal, "")
        entry.error = {"kind": refusal.kind, "message": str(refusal)}
    entry.status = status
    journal.record_sent(entry, out)
    try:
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": out})
    finally:
        if (written := journal.close(entry)) is not None:
            await written


def _counted(adapter: Adapter, route: str, raw: bytes) -> bytes:
    try:
        body = wirejson.loads(raw)
    except wirejson.InvalidJson as e:
        raise adapter.invalid_json(e.detail) from None
    if adapter.family == "gemini":  # the Gemini API's or Vertex's path
        # countTokens takes `contents`, or a whole `generateContentRequest`.
        inner = body.get("generateContentRequest") if isinstance(body, dict) else None
        request = inner if isinstance(inner, dict) else body
        parsed = adapter.parse_at(request, route.replace(":countTokens", ":generateContent"))
        return json.dumps({"totalTokens": input_tokens(parsed.conversation)}).encode()
    if isinstance(body, dict) and "messages" in body and "model" in body:
        body = {**body, "max_tokens": 1}  # count_tokens takes none
    parsed = adapter.parse(body)
    return json.dumps({"input_tokens": input_tokens(parsed.conversation)}).encode()


def wants_websocket(scope: Scope) -> bool:
    for key, value in scope["headers"]:
        if key == b"upgrade" and value.lower() == b"websocket":
            return True
    return False


async def upgrade_required(
    scope: Scope,
    receive: Receive,
    send: Send,
    journal: Journal,
    adapter: Adapter,
    names: tuple[str | None, str | None],
    why: str,
) -> None:
    """426 in the provider's error shape, logged: the client should use HTTP."""
    error = RequestError(
        426,
        "mockllm: this server takes no WebSocket here; use HTTP (POST /v1/responses). " + why,
        kind=UPGRADE_REQUIRED,
        code="upgrade_required",
        headers=(("upgrade", "websocket"), ("connection", "Upgrade")),
    )
    await _refuse_upgrade(scope, receive, send, journal, adapter, names, why, error)


NOT_A_HANDSHAKE = (
    "Upgrade: websocket on a request that is no WebSocket handshake (a GET with "
    "Connection: Upgrade, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key of 16 bytes)"
)


async def not_a_handshake(
    scope: Scope,
    receive: Receive,
    send: Send,
    journal: Journal,
    adapter: Adapter,
    names: tuple[str | None, str | None],
) -> None:
    """400 in the provider's error shape, logged: what the WebSocket library answered in
    plain text, unlogged (serving/upgrades.py)."""
    error = RequestError(400, "mockllm: " + NOT_A_HANDSHAKE, code="invalid_websocket_handshake")
    await _refuse_upgrade(scope, receive, send, journal, adapter, names, NOT_A_HANDSHAKE, error)


async def _refuse_upgrade(
    scope: Scope,
    receive: Receive,
    send: Send,
    journal: Journal,
    adapter: Adapter,
    names: tuple[str | None, str | None],
    why: str,
    error: RequestError,
) -> None:
    entry = journal.open(scope["path"], scope["headers"], scope["method"])
    entry.api = adapter.api
    entry.scenario, entry.session = names[0], names[1] or "default"
    entry.note(why)
    responder = Responder(journal, entry, send, receive, adapter, 0)
    try:
        await responder.error(error)
    finally:
        if (written := journal.close(entry)) is not None:
            await written
