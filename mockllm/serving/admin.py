"""Admin routes under /_mockllm/: health, scenarios, the request log, reset, the viewer."""

from __future__ import annotations

import contextlib
import ctypes
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, Router

from mockllm.core import wirejson
from mockllm.core.scenario import Scenario
from mockllm.errors import RequestError, ScenarioError
from mockllm.judge.allowances import MAX_ALLOW_BODY, allowance_problem
from mockllm.judge.uses import name_of, uses
from mockllm.judge.verdict import DEFAULT_MAX_CALLS, logged_allowance, verdict
from mockllm.loading.loader import decode, load_text
from mockllm.log.allowances import ALLOWANCE, recorded
from mockllm.log.mcp import StdioEntries
from mockllm.serving.asgi import read_body
from mockllm.state import StoreUnavailable
from mockllm.viewer.page import csp, live_page

if TYPE_CHECKING:
    from mockllm.core.engine import Engine
    from mockllm.log.journal import Journal
    from mockllm.state.store import Store


def admin_router(
    engine: Engine,
    journal: Journal,
    reset_app: Callable[[str | None], Awaitable[None]],
    max_body: int,
    store: Store,
) -> Router:
    """The admin routes over the server's engine and log; `reset_app` resets its state;
    `store`, where run-time scenarios are kept (on Redis: every replica serves them)."""
    admin = _Admin(engine, journal, reset_app, max_body, store)
    return Router(
        routes=admin.routes(), middleware=[Middleware(_QueryLimit), Middleware(_StoreErrors)]
    )


class _Admin:
    """One short handler per route, over the same state."""

    def __init__(
        self,
        engine: Engine,
        journal: Journal,
        reset_app: Callable[[str | None], Awaitable[None]],
        max_body: int,
        store: Store,
    ) -> None:
        self.engine, self.journal, self.reset_app = engine, journal, reset_app
        self.max_body, self.store = max_body, store
        self.stdio_entries = StdioEntries()  # MCP messages of stdio processes, still open

    def routes(self) -> list[Route]:
        return [
            Route("/_mockllm/health", self.health, methods=["GET"]),
            Route("/_mockllm/scenarios", self.list_scenarios, methods=["GET"]),
            Route("/_mockllm/scenarios", self.add_scenario, methods=["POST"]),
            Route("/_mockllm/requests", self.requests, methods=["GET"]),
            Route("/_mockllm/requests", self.clear_requests, methods=["DELETE"]),
            Route("/_mockllm/reset", self.reset, methods=["POST"]),
            Route("/_mockllm/release", self.release, methods=["POST"]),
            Route("/_mockllm/verdict", self.verdict_of, methods=["GET"]),
            Route("/_mockllm/verdicts", self.verdicts, methods=["GET"]),
            Route("/_mockllm/allow", self.allow, methods=["PUT"]),
            Route("/_mockllm/calls", self.calls_of, methods=["GET"]),
            Route("/_mockllm/check", self.check, methods=["POST"]),
            Route("/_mockllm/ui", self.ui, methods=["GET"]),
            Route("/_mockllm/mcp/entries", self.mcp_entry, methods=["POST"]),
            Route("/_mockllm/transcript", self.transcript_of, methods=["GET"]),
            Route(
                "/_mockllm/{rest:path}", self.not_found, methods=["GET", "POST", "DELETE", "PUT"]
            ),
        ]

    async def health(self, request: Request) -> Response:
        await self.store.refresh()
        return JSONResponse({"status": "ok", "scenarios": len(self.engine.scenarios)})

    async def list_scenarios(self, request: Request) -> Response:
        await self.store.refresh()
        return JSONResponse(
            [s.summary() for s in sorted(self.engine.scenarios.values(), key=_name)]
        )

    async def add_scenario(self, request: Request) -> Response:
        raw = await _read(request, self.max_body)
        if raw is None:
            message = f"scenario of more than {self.max_body} bytes refused (--max-body)"
            return _error(413, message)
        try:
            # On a worker thread: a big scenario must not hold up the requests being served.
            scenario = await run_in_threadpool(_load, raw)
        except ScenarioError as e:
            problems = [str(p) for p in e.problems]
            return _error(400, "invalid scenario: " + "; ".join(problems), problems=problems)
        # valid, so it decodes: every replica of a shared store loads the same text
        replaced = await self.store.add(scenario, decode(raw, "<POST /_mockllm/scenarios>"))
        return JSONResponse({**scenario.summary(), "replaced": replaced}, 200 if replaced else 201)

    async def requests(self, request: Request) -> Response:
        q = request.query_params
        since = _whole(q, "since", 0)
        if isinstance(since, Response):
            return since
        pieces = self.journal.stream_text(q.get("session"), q.get("scenario"), since)
        first = await anext(pieces)  # a lost shared store raises here: a 503, not a cut body
        return StreamingResponse(_then(first, pieces), media_type="application/json")

    async def verdict_of(self, request: Request) -> Response:
        q = request.query_params
        session = q.get("session", "default")
        max_calls = _whole(q, "max_calls", DEFAULT_MAX_CALLS)
        if isinstance(max_calls, Response):
            return max_calls
        entries = await self.journal.read_json(session, q.get("scenario"))
        if q.get("scenario"):  # the session's allowance is no request of the scenario's
            entries += _allowances(await self.journal.read_json(session))
        tools = _mcp_tools(self.engine)
        return await _rendered(lambda: verdict(session, entries, max_calls, tools))

    async def verdicts(self, request: Request) -> Response:
        """The verdict of every session with an entry after `since`: what the live viewer
        needs after each poll, in one request however many sessions there are."""
        q = request.query_params
        since = _whole(q, "since", 0)
        max_calls = _whole(q, "max_calls", DEFAULT_MAX_CALLS)
        for refused in (since, max_calls):
            if isinstance(refused, Response):
                return refused
        assert isinstance(since, int) and isinstance(max_calls, int)
        grouped = uses(await self.journal.read_touched(since))  # keyed as the viewer's
        tools = _mcp_tools(self.engine)
        return await _rendered(
            lambda: {
                key: verdict(name_of(key), found, max_calls, tools)
                for key, found in grouped.items()
            }
        )

    async def allow(self, request: Request) -> Response:
        """The verdict checks a test waives for its session, each with a reason: a record
        in the log, saying where it came from (`origin`: a test's marker, a client)."""
        session = request.query_params.get("session", "default")
        origin = " ".join(request.query_params.get("origin", "").split()) or "PUT /_mockllm/allow"
        body = await _read(request, MAX_ALLOW_BODY)
        if body is None:
            return _error(413, f"allowances of more than {MAX_ALLOW_BODY} bytes refused")
        try:
            given = json.loads(body or b"{}")
        except ValueError:
            return _error(400, "the body must be a JSON object {check: reason}")
        problem = allowance_problem(given)
        if problem:
            return _error(400, problem)
        await self._record(session, given, origin)
        return JSONResponse({"session": session, "allow": given, "origin": origin})

    async def _record(
        self,
        session: str,
        allow: dict[str, str],
        origin: str,
        route: tuple[str, str] = ("PUT", "/_mockllm/allow"),
    ) -> None:
        entry = recorded(self.journal, session, allow, origin, route)
        if (written := self.journal.close(entry)) is not None:
            await written

    async def transcript_of(self, request: Request) -> Response:
        """The session as pytest shows it, for users of any language (text/plain)."""
        from mockllm.judge.transcript import transcript
        from mockllm.log.records import LogEntry

        q = request.query_params
        session = q.get("session", "default")
        found = await self.journal.read_json(session)
        full = q.get("full", "1") != "0"

        def written() -> str:  # on a worker: a long session's transcript is long to write
            entries = [LogEntry.from_json(e) for e in found]
            return transcript(entries, session, full=full)

        return PlainTextResponse(await run_in_threadpool(written) + "\n")

    async def calls_of(self, request: Request) -> Response:
        """The tool calls the model made in a session, each with the result sent back."""
        from mockllm.judge.calls import matching, tool_uses

        q = request.query_params
        try:
            args = json.loads(q["args"]) if "args" in q else None
        except ValueError:
            args = []
        if args is not None and not isinstance(args, dict):
            return _error(400, 'args must be a JSON object, e.g. args={"order_id":"A2024"}')
        found = await self.journal.read_json(q.get("session", "default"))
        name = q.get("name")
        return await _rendered(lambda: matching(tool_uses(found), name, args))

    async def check(self, request: Request) -> Response:
        """One check of the session's log or verdict (mockllm/judge/checks.py): `{"ok": true}`,
        or the failure's headline, expected and happened, for any client to raise."""
        from mockllm.judge.checks import run_check

        body = await _read(request, MAX_ALLOW_BODY)
        if body is None:
            return _error(413, f"a check of more than {MAX_ALLOW_BODY} bytes refused")
        try:
            spec = json.loads(body or b"{}")
        except ValueError:
            return _error(400, "the body must be a JSON object {check, ...}")
        if not isinstance(spec, dict):
            return _error(400, "the body must be a JSON object {check, ...}")
        session = request.query_params.get("session", "default")
        logged = await self.journal.read_json(session)
        entries = [e for e in logged if e.get("api") != ALLOWANCE]  # requests, not records
        mcp_tools = _mcp_tools(self.engine)
        try:
            failure = await run_in_threadpool(
                run_check,
                entries,
                spec,
                lambda: verdict(session, logged, mcp_tools=mcp_tools),
            )
        except ValueError as e:
            return _error(400, str(e))
        return JSONResponse({"ok": True} if failure is None else failure.to_json())

    async def clear_requests(self, request: Request) -> Response:
        """Forget a session's requests; its allowance stays (recorded again after them)."""
        session = request.query_params.get("session")
        records = await self._allowance_records(session)
        deleted = await self.journal.delete(session) - len(records)
        kept = logged_allowance(records)
        if session is not None and kept.allow:
            await self._record(session, kept.allow, kept.origin)
        await run_in_threadpool(_give_back)
        return JSONResponse({"deleted": deleted})

    async def reset(self, request: Request) -> Response:
        session = request.query_params.get("session")
        client = request.query_params.get("client")
        if client is not None and not CLIENT_ID.fullmatch(client):
            return _error(400, "client: 1 to 64 letters, digits, '.', '_' or '-'")
        await self.reset_app(session)
        records = await self._allowance_records(session)
        deleted = await self.journal.delete(session) - len(records)
        epoch = self.journal.uses.reset(session, client)  # the record below is the new use's
        if session is not None and logged_allowance(records).allow:
            # The --log file keeps the old record: this one ends it there too.
            await self._record(session, {}, "reset", ("POST", "/_mockllm/reset"))
        await run_in_threadpool(_give_back)
        return JSONResponse({"reset": session or "all", "deleted": deleted, "epoch": epoch})

    async def release(self, request: Request) -> Response:
        """A client that reset a session with `?client=` is done with it (docs/http-api.md):
        another client resetting it now is a rerun, not a clash."""
        session, client = request.query_params.get("session"), request.query_params.get("client")
        if session is None or client is None:
            return _error(400, "release needs ?session=NAME&client=ID")
        self.journal.uses.release(session, client)
        return JSONResponse({"released": session})

    async def _allowance_records(self, session: str | None) -> list[dict[str, Any]]:
        """A session's allowance records (none asked for all sessions: a reset of all)."""
        return [] if session is None else _allowances(await self.journal.read_json(session))

    async def mcp_entry(self, request: Request) -> Response:
        """An MCP message a `mockllm mcp` stdio process served, into this log (docs/mcp.md):
        opened when it arrived (`"pending": true`), closed by a post naming its `seq`."""
        raw = await _read(request, self.max_body)
        if raw is None:
            return _error(413, f"entry of more than {self.max_body} bytes refused (--max-body)")
        try:
            data = wirejson.loads(raw)
        except wirejson.InvalidJson as e:
            return _error(400, f"not JSON: {e}")
        if not isinstance(data, dict) or not isinstance(data.get("mcp"), dict):
            return _error(400, "an MCP log entry is a JSON object with an `mcp` object")
        entry, close = self.stdio_entries.take(self.journal, data)
        if close and (written := self.journal.close(entry)) is not None:
            await written
        return JSONResponse({"seq": entry.seq}, 201)

    async def ui(self, request: Request) -> Response:
        """The live viewer: a page that reads `requests` and `verdicts` above as they grow."""
        return HTMLResponse(live_page(), headers=_UI_HEADERS)

    async def not_found(self, request: Request) -> Response:
        return _error(404, f"no admin route {request.method} {request.url.path}")


class _StoreErrors:
    """A lost shared store, from any admin route: a 503 naming it, not a 500."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.app(scope, receive, send)
        except StoreUnavailable as lost:
            await _error(503, str(lost))(scope, receive, send)


def _allowances(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e.get("api") == ALLOWANCE]


class _QueryLimit:
    """An admin query string over MAX_QUERY bytes: a 400 in the admin's shape, as a body
    over --max-body is a 413."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if len(scope.get("query_string", b"")) > MAX_QUERY:
            message = f"a query string of more than {MAX_QUERY} bytes refused"
            await _error(400, message)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _mcp_tools(engine: Engine) -> dict[str, list[tuple[str, str]]]:
    """Each scenario's scripted MCP tools, for the verdict's loop checks (judge/mcp_checks.py)."""
    return {
        s.name: [(m.name, t.name) for m in s.mcp_servers for t in m.tools]
        for s in engine.scenarios.values()
        if s.mcp_servers
    }


MAX_QUERY = 8 * 1024
"""Bytes of an admin route's query string: its values are names and numbers."""
MAX_DIGITS = 18  # a sequence number or a call count: int64 and no more


def _whole(q: Any, name: str, default: int) -> int | Response:
    """The query parameter `name` as a whole number, or the 400 that says what it must be
    (ASCII digits, at most MAX_DIGITS: `int()` refuses 4,300 with a traceback)."""
    text = q.get(name)
    if text is None:
        return default
    if not (text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS):
        return _error(400, f"{name} must be a whole number of at most {MAX_DIGITS} digits")
    return int(text)


async def _rendered(make: Callable[[], Any]) -> Response:
    """A verdict (or several) worked out and written on a worker thread: over a big log it
    checks every call's arguments against its schema, and the loop serves meanwhile."""
    body = await run_in_threadpool(lambda: wirejson.dumps_line(make()).encode())
    return Response(body, media_type="application/json")


async def _then(first: str, rest: AsyncIterator[str]) -> AsyncIterator[str]:
    yield first
    async for piece in rest:
        yield piece


def _give_back() -> None:
    """Hand the heap's free pages back to the system once log entries are gone: glibc
    keeps them, so 300 MB of deleted log left the server's RSS where it was."""
    with contextlib.suppress(OSError, AttributeError):  # not glibc (macOS, musl): no trim
        ctypes.CDLL(None).malloc_trim(0)


async def _read(request: Request, limit: int) -> bytes | None:
    """The request's body, or None past `limit` bytes: each route says what it refused."""
    try:
        return await read_body(request.receive, limit)
    except RequestError:
        return None


def _load(raw: bytes) -> Scenario:
    source = "<POST /_mockllm/scenarios>"
    return load_text(decode(raw, source), source=source)


class JSONResponse(Response):
    """JSON that any string survives (see wirejson.dumps_line)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return wirejson.dumps_line(content).encode()


_UI_HEADERS = {
    # The page may not be framed by another site; nothing else of it leaves the server.
    "content-security-policy": csp() + "; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def _name(s: Any) -> str:
    return str(s.name)


CLIENT_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def _error(status: int, message: str, **extra: Any) -> Response:
    return JSONResponse({"error": {"message": message, **extra}}, status)
