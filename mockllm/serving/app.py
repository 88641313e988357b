"""The ASGI application: routes each request to its place.

Model routes are raw ASGI (the hot path, exchange.py); admin routes under /_mockllm/ are
starlette, imported on the first admin request so that start-up does not pay for it.
"""

from __future__ import annotations

import json
from importlib.util import find_spec
from typing import Any

from mockllm.core.cache import set_cache_bytes
from mockllm.core.engine import Engine
from mockllm.core.scenario import FLAVORS
from mockllm.errors import RequestError, did_you_mean
from mockllm.log.journal import Journal
from mockllm.options import DEFAULTS, ServerOptions
from mockllm.providers import ADAPTERS, Adapter, Parsed, SharedResponses
from mockllm.providers.vertex import UNDER_PROJECT
from mockllm.serving import guard, side_routes
from mockllm.serving.asgi import Receive, Scope, Send
from mockllm.serving.embedding_routes import EmbeddingRoutes
from mockllm.serving.exchange import CONTROL, Exchanges, bad_path, store_error
from mockllm.serving.responder import Responder
from mockllm.serving.routing import MCP_PREFIX, Routes, embedding_wire
from mockllm.state import StoreUnavailable
from mockllm.state.memory import MemoryStore
from mockllm.state.store import Store

_POSTS_KEPT = 1024  # model-route paths remembered, and MCP paths (a session per path)
_LONGEST_POST_KEPT = 512  # characters: a longer path is routed per request, not kept


class MockLLM:
    def __init__(
        self,
        engine: Engine,
        journal: Journal,
        options: ServerOptions = DEFAULTS,
        store: Store | None = None,
    ) -> None:
        """`store`: where attempts and stored responses live (default: this process)."""
        self.engine = engine
        self.journal = journal
        self.options = options
        set_cache_bytes(options.cache_bytes)  # module-wide: the caches live in core/ and log/
        self.store = MemoryStore(engine, options.max_sessions) if store is None else store
        self.adapters = [cls() for cls in ADAPTERS.values()]
        for adapter in self.adapters:
            adapter.flavor = options.flavor
        self.routes = Routes(self.adapters)
        self.by_api = {adapter.api: adapter for adapter in self.adapters}
        self.families: dict[str, Adapter] = {}
        for adapter in self.adapters:  # the first of each family answers its shared routes
            self.families.setdefault(adapter.family, adapter)
        self.exchanges = Exchanges(engine, journal, options, self.store)
        shapes = {
            "openai": self.families["openai"],
            "gemini": self.families["gemini"],
            "ollama": self.families["ollama"],  # the Ollama wire's errors and fault texts
            "bedrock": self.families["bedrock"],
        }
        self.embeddings = EmbeddingRoutes(engine, journal, options, shapes)
        self._admin: Any = None
        self._mcp: Any = None  # serving/mcp.py's routes, imported on the first MCP request
        # A model route's path → (adapter, route, scenario, session): what the path decides
        # (the routes are fixed at start-up), worked out on its first POST only.
        self._posts: dict[str, tuple[Adapter, str, str | None, str | None]] = {}
        # An MCP server's path → (scenario, session, server), the same way, for any method.
        self._mcps: dict[str, tuple[str | None, str | None, str]] = {}

    async def admin(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._admin is None:
            from mockllm.serving.admin import admin_router

            self._admin = admin_router(
                self.engine, self.journal, self.reset, self.options.max_body, self.store
            )
        refused = guard.refusal(scope, self.options.allow_host)
        if refused is not None:
            status, why = refused
            body = json.dumps({"error": {"message": f"mockllm: {why}"}}).encode()
            await _send(send, status, body, b"application/json")
            return
        await self._admin(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":  # (first: nearly every call is a model route's POST)
            path: str = scope["path"]
            known = self._posts.get(path)
            if known is not None and scope["method"] == "POST":
                await self.exchanges.handle(scope, receive, send, *known)
            else:
                await self._route(scope, receive, send, path)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "lifespan":
            await _lifespan(receive, send)

    async def _route(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        """An HTTP request whose path was not seen before as a model route's POST."""
        mcp = self._mcps.get(path)
        if mcp is not None:
            await self.mcp(scope, receive, send, *mcp)
            return
        if path.startswith("/_mockllm/"):
            await self.admin(scope, receive, send)
            return
        flavor, path = self.routes.flavour(path)
        scenario, session, route = self.routes.split(path)
        if route.startswith(MCP_PREFIX) and "/" not in route[len(MCP_PREFIX) :]:
            mcp = (scenario, session, route[len(MCP_PREFIX) :])
            if len(self._mcps) < _POSTS_KEPT and len(scope["path"]) <= _LONGEST_POST_KEPT:
                self._mcps[scope["path"]] = mcp
            await self.mcp(scope, receive, send, *mcp)
            return
        adapter = self.routes.post(route)
        if flavor is not None and flavor not in FLAVORS:
            await self._refuse(scope, receive, send, unknown_flavour(flavor))
            return
        if adapter is not None and flavor is not None:
            adapter = adapter.variant(flavor)
        if adapter is not None:
            adapter = adapter.for_route(route)
        if adapter is not None and adapter.api == "bedrock-invoke" and embedding_wire(route):
            adapter = None  # a Titan or Cohere embedding model: answered beside the turns
        if adapter is not None and scope["method"] == "POST":  # refuses a bad path, logged
            if len(self._posts) < _POSTS_KEPT and len(scope["path"]) <= _LONGEST_POST_KEPT:
                self._posts[scope["path"]] = (adapter, route, scenario, session)
            await self.exchanges.handle(scope, receive, send, adapter, route, scenario, session)
        elif CONTROL.search(path):
            await self._bad_path(scope, send, path)
        elif self._side(scope, route):
            await self._side_route(scope, receive, send, route)
        elif scope["method"] != "GET":
            await self._not_found(scope, receive, send, route)
        elif (listing := self.routes.listing(route)) is not None:
            await self._models(scope, send, route, listing)
        elif (getter := self.routes.getter(route)) is not None:
            await self._get(send, getter, route.removeprefix(getter.get_prefix or ""))
        else:
            await self._not_found(scope, receive, send, route)

    async def mcp(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        scenario: str | None,
        session: str | None,
        server: str,
    ) -> None:
        """A scripted MCP server of the scenario (docs/mcp.md), with the model routes'
        session rules: the path's session, else `X-Mockllm-Session`, else default."""
        if not session or not scenario:  # the path names both where a suite's sessions do
            sent = dict(scope["headers"])
            session = session or sent.get(b"x-mockllm-session", b"").decode("latin-1") or None
            scenario = scenario or sent.get(b"x-mockllm-scenario", b"").decode("latin-1") or None
        session = session or "default"
        if self._mcp is None:
            try:
                from mockllm.serving.mcp import McpRoutes
            except ImportError as missing:  # the optional extra is not installed
                body = json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {
                            "code": -32603,
                            "message": (
                                "mockllm: MCP routes need the mcp extra: "
                                f"pip install 'mockllm-server[mcp]' "
                                f"({missing})"
                            ),
                        },
                    }
                ).encode()
                await _send(send, 501, body, _JSON)
                return
            options = self.options
            self._mcp = McpRoutes(
                self.engine.scenarios.get,
                self.journal,
                options.max_body,
                options.max_stall,
                options.max_sessions,
                options.max_mcp_sessions,
            )
        await self._mcp.handle(
            scope, receive, send, scenario or self.engine.default, session, server
        )

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        from mockllm.serving import websocket  # loaded by the first WebSocket client

        scenario, session, route = self.routes.split(scope["path"])
        adapter = self.routes.post(route)
        names = (scenario, session)
        await websocket.serve(
            scope, receive, send, adapter, route, names, self.exchanges, self.options
        )

    def _side(self, scope: Scope, route: str) -> bool:
        method = scope["method"]
        return (
            side_routes.is_probe(scope, route)
            or (method == "POST" and side_routes.counting_api(route) is not None)
            or (method == "POST" and embedding_wire(route) is not None)
            or (
                method == "GET"
                and side_routes.wants_websocket(scope)
                and self.routes.post(route) is not None
            )
        )

    async def _side_route(self, scope: Scope, receive: Receive, send: Send, route: str) -> None:
        """What an agent CLI sends besides its turns (side_routes.py)."""
        if side_routes.is_probe(scope, route):
            scenarios = list(self.engine.scenarios.values())
            await side_routes.probe(scope, receive, send, route, scenarios)
            return
        if embedding_wire(route) is not None:
            scenario, session, _ = self.routes.split(scope["path"])
            await self.embeddings.handle(scope, receive, send, route, (scenario, session))
            return
        api = side_routes.counting_api(route)
        if api is not None:
            counter = next(a for a in self.adapters if a.api == api)
            scenario, session, _ = self.routes.split(scope["path"])
            await side_routes.count_tokens(
                scope,
                receive,
                send,
                counter,
                route,
                self.options.max_body,
                self.journal,
                (scenario, session),
            )
            return
        adapter = self.routes.post(route)
        assert adapter is not None
        why = "WebSocket is off on this server (--no-websocket, or no WebSocket library)"
        scenario, session, _ = self.routes.split(scope["path"])
        names = (scenario, session)
        if self.options.websocket and find_spec("websockets") is not None:
            # served here as HTTP: uvicorn upgrades only a real handshake (upgrades.py)
            j = self.journal
            await side_routes.not_a_handshake(scope, receive, send, j, adapter, names)
            return
        await side_routes.upgrade_required(scope, receive, send, self.journal, adapter, names, why)

    def family_of(self, scope: Scope, among: list[Adapter] | None = None) -> Adapter:
        """Routes the providers share answer in the shape of the SDK that asks, told by its
        marker headers (`anthropic-version`, `x-goog-api-key`); OpenAI's otherwise. A path
        under Ollama's `/api/` is Ollama's (its clients send no marker header)."""
        candidates = among or list(self.families.values())
        ollama = self.families.get("ollama")
        if ollama in candidates and _route_of(scope["path"]).startswith("api/"):
            return ollama
        sent = {k for k, _ in scope["headers"]}
        for adapter in candidates:
            if any(h in sent for h in adapter.family_headers):
                return adapter
        openai = self.families.get("openai")
        return openai if openai in candidates else candidates[0]

    async def reset(self, session: str | None = None) -> None:
        """Forget attempts and cuts of `session`, or of all and every stored response."""
        await self.store.reset(session)
        if self._mcp is not None:
            self._mcp.reset(session)
        if session is None:
            for adapter in self.adapters:
                adapter.reset()

    # --- other routes --------------------------------------------------------------------

    async def _get(self, send: Send, getter: Adapter, rest: str) -> None:
        """GET of something an adapter stores (a Responses response, by id)."""
        if self.store.keeps_responses and isinstance(getter, SharedResponses):
            try:
                getter.adopt(rest, await self.store.response(rest))
            except StoreUnavailable as lost:
                await _send(send, 503, getter.error_body(store_error(lost), ""), _JSON)
                return
        status, body = getter.get(rest)
        await _send(send, status, body, _JSON)

    async def _models(self, scope: Scope, send: Send, route: str, listing: str) -> None:
        serving = [a for a in self.families.values() if listing in a.models_routes]
        adapter = self.family_of(scope, serving)
        model = route.removeprefix(listing).removeprefix("/")
        body = adapter.model_body(model) if model else adapter.models_body()
        await _send(send, 200, body, b"application/json")

    async def _bad_path(self, scope: Scope, send: Send, path: str) -> None:
        body = self.family_of(scope).error_body(bad_path(path), "")
        await _send(send, 400, body, b"application/json")

    async def _not_found(self, scope: Scope, receive: Receive, send: Send, route: str) -> None:
        """Answered in the SDK's error shape, and logged like any request: a wrong base URL
        is the commonest first mistake, so the message says how to fix it."""
        posts = [r for r in self.routes.posts if r.startswith("v1/")]
        posts += [r for a in self.adapters for r in a.route_help]
        known = ", ".join(sorted({"POST /" + r for r in posts}))
        apis = ", ".join(a.api for a in self.adapters)
        message = (
            f"mockllm: no route {scope['method']} /{route}; APIs served: {apis}; model "
            f"routes: {known}, GET /v1/models; optionally behind /s/SCENARIO[/SESSION], "
            "itself behind /f/FLAVOR"
        )
        hint = base_url_hint(scope, route)
        error = RequestError(404, message + hint, kind="route_not_found", code="route_not_found")
        # Under a Vertex AI project, Vertex answers, whichever SDK asks: Google's envelope.
        vertex = self.by_api.get("vertex-gemini") if UNDER_PROJECT.match(route) else None
        await self._refuse(scope, receive, send, error, hint.removeprefix(". "), vertex)

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        error: RequestError,
        note: str = "",
        adapter: Adapter | None = None,
    ) -> None:
        """Answer `error` in the asking SDK's shape (or `adapter`'s), and log the request
        like any other."""
        adapter = adapter or self.family_of(scope)  # an AWS SDK's: the Bedrock wire's shape
        entry = self.journal.open(scope["path"], scope["headers"], scope["method"])
        if note:
            entry.note(note)
        scenario, session, _ = self.routes.split(self.routes.flavour(scope["path"])[1])
        entry.scenario, entry.session = scenario, session or "default"
        responder = Responder(self.journal, entry, send, receive, adapter, self.options.max_stall)
        try:
            await responder.error(error)
        finally:
            if (written := self.journal.close(entry)) is not None:
                await written


def _route_of(path: str) -> str:
    """The route of a path without its /f/FLAVOR and /s/NAME[/SESSION] prefixes, for telling
    the family of a path no adapter serves (no Routes at hand: a route of any session)."""
    parts = path.lstrip("/").split("/")
    if parts[:1] == ["f"]:
        parts = parts[2:]
    if parts[:1] == ["s"]:
        parts = parts[2:]
        if parts and parts[0] != "api":
            parts = parts[1:]
    return "/".join(parts)


def unknown_flavour(flavor: str) -> RequestError:
    message = (
        f"mockllm: no flavour {flavor!r}{did_you_mean(flavor, FLAVORS)} in /f/{flavor}/; "
        f"flavours: {', '.join(FLAVORS)} (docs/flavours.md)"
    )
    return RequestError(404, message, kind="flavour_not_found", code="flavour_not_found")


def base_url_hint(scope: Scope, route: str) -> str:
    """For a path an SDK built from a wrong base URL: the base URL it should have had."""
    path: str = scope["path"]
    host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "HOST")
    base = "http://" + host + path[: len(path) - len(route)].rstrip("/")
    if route == "v1/v1/messages":
        return (
            f". The Anthropic SDK adds /v1 itself: give it base_url={base!r} (without /v1). "
            "The Vercel AI SDK's @ai-sdk/anthropic is the one that wants the /v1"
        )
    if route in ("v1/v1/chat/completions", "v1/v1/responses", "v1/v1/embeddings"):
        return (
            f". The OpenAI SDKs (and @ai-sdk/openai) append /{route[6:]} to their base URL: "
            f"give it base_url={base + '/v1'!r} (one /v1)"
        )
    if route == "messages":
        return (
            ". The Vercel AI SDK's @ai-sdk/anthropic appends /messages to its baseURL: give it "
            f"baseURL={base + '/v1'!r} (the Anthropic SDK, unlike it, adds /v1 itself)"
        )
    return ""


_JSON = b"application/json"


async def _send(send: Send, status: int, body: bytes, content_type: bytes) -> None:
    headers = [(b"content-type", content_type)]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


__all__ = ["MockLLM", "Parsed"]
