"""Scripted MCP servers, served with the official `mcp` SDK (docs/mcp.md).

`/s/SCENARIO[/SESSION]/mcp/SERVER` is the SDK's streamable HTTP transport in front of
its low-level `Server`, one per (scenario, server), started on first use; `mockllm mcp`
runs the same `Server` over the SDK's stdio transport (`serving/mcp_stdio.py`). Every
HTTP request is logged as an `McpEntry` in the server's one log, and a middleware on the
`Server` writes into it what the message asked and what was answered.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mockllm.core.cache import Lru
from mockllm.core.encoding import compact_json
from mockllm.core.mcp import HUGE_MAX, McpResult, McpServer, McpTool
from mockllm.core.scenario import Scenario
from mockllm.log.journal import Journal
from mockllm.log.mcp import McpEntry, answered, asked, failed, unfinished
from mockllm.serving import mcp_guard
from mockllm.serving.asgi import Receive, Scope, Send
from mockllm.serving.mcp_direct import DIRECT_KEY, Direct
from mockllm.serving.mcp_direct import METHODS as DIRECT_METHODS
from mockllm.serving.mcp_tracing import traced_only_when_recording

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
ENTRY_KEY = "mockllm.entry"  # where the HTTP wrapper leaves the entry for the middleware
IDLE_TIMEOUT = 600  # seconds an MCP session may idle before the SDK ends it


@dataclass
class _Counts:
    """One session's state on one server: calls served per tool, the list changed."""

    served: dict[str, int] = field(default_factory=dict)
    changed: bool = False


class Scripted:
    """The `mcp` SDK `Server` of one scripted server. The scenario is looked up on every
    message, so a scenario replaced at run time is served from its next message on."""

    def __init__(
        self,
        scenario: Callable[[], Scenario | None],
        server: str,
        max_stall: float,
        max_sessions: int,
        session_of: Callable[[Any], str],
    ) -> None:
        self.scenario, self.server_name, self.max_stall = scenario, server, max_stall
        self.session_of = session_of  # the mockllm session a handler's context belongs to
        self._counts: OrderedDict[str, _Counts] = OrderedDict()  # LRU by session
        self._max_sessions = max_sessions
        self.log: McpLog = HttpLog()
        self._entries: dict[int, McpEntry | None] = {}  # by id(ctx), while a message is handled
        self._problems: Lru[tuple[McpTool, str | None]] = Lru(256)  # see _arguments_problem
        found = scenario()
        spec = found.mcp_server(server) if found else None
        self.sdk: Server[Any] = _Sdk(
            server,
            version="mockllm",
            instructions=spec.description or None if spec else None,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        traced_only_when_recording(self.sdk.middleware)
        self.sdk.middleware.append(self._observe)
        self.direct = Direct(self.sdk, IDLE_TIMEOUT)

    def spec(self) -> McpServer:
        scenario = self.scenario()
        server = scenario.mcp_server(self.server_name) if scenario else None
        if server is None:
            raise MCPError(INVALID_PARAMS, f"mockllm: no MCP server {self.server_name!r} any more")
        return server

    def counts(self, session: str) -> _Counts:
        found = self._counts.get(session)
        if found is None:
            found = self._counts[session] = _Counts()
            if len(self._counts) > self._max_sessions:
                self._counts.popitem(last=False)
        else:
            self._counts.move_to_end(session)
        return found

    def reset(self, session: str | None) -> None:
        if session is None:
            self._counts.clear()
        else:
            self._counts.pop(session, None)

    # --- what every message goes through: the log --------------------------------------

    async def _observe(self, ctx: Any, call_next: Any) -> Any:
        info = asked(self.server_name, ctx.method, ctx.request_id, ctx.params)
        entry = await self.log.start(ctx, info)
        if entry is not None:
            entry.mcp.update(info)
        self._entries[id(ctx)] = entry
        try:
            result = await call_next(ctx)
        except MCPError as e:
            failed(info, e.code, e.message)
            raise
        except anyio.get_cancelled_exc_class():
            unfinished(info, "cancelled before it answered (the client cancelled or left)")
            raise
        except Exception as e:  # a params model refused them: the SDK answers -32602
            failed(info, INVALID_PARAMS, str(e))
            raise
        else:
            answered(info, result)
            if ctx.method in DIRECT_METHODS or ctx.method == "initialize":
                self._established(ctx)
        finally:
            self._entries.pop(id(ctx), None)
            if entry is not None:  # what a fault said first (a drop) stays
                entry.mcp.update({k: v for k, v in info.items() if k not in entry.mcp})
            if entry is not None and self.log.finishes:
                with anyio.CancelScope(shield=True):  # a cancelled call is logged too
                    await self.log.finish(entry)
        return result

    def _established(self, ctx: Any) -> None:
        """A `tools/*` request answered over HTTP: its session's handshake is done, so its
        next ones may be answered past the SDK's transport (serving/mcp_direct.py). An
        `initialize` again on a session may change its version: the SDK serves it until
        its next `tools/*` answer says which."""
        scope = _scope(ctx)
        if scope.get(DIRECT_KEY):
            return  # answered past the transport: known already
        sid = mcp_guard.session_of(scope.get("headers") or [])
        if sid is None:
            return
        if ctx.method == "initialize" or ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            self.direct.forget(sid)  # (the 2026 era has no sessions of this kind)
        else:
            self.direct.established(sid, ctx.protocol_version)

    def entry_of(self, ctx: Any) -> McpEntry | None:
        return self._entries.get(id(ctx))

    # --- tools -----------------------------------------------------------------------

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        server, counts = self.spec(), self.counts(self.session_of(ctx))
        shown = [t for t in server.tools if t.listed or counts.changed]
        entry = self.entry_of(ctx)
        if entry is not None:  # what all_mcp_answers_served reads (judge/verdict.py)
            entry.mcp["scripted"] = {t.name: len(t.results) for t in shown}
        return types.ListToolsResult(tools=[_tool(t) for t in shown])

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        server, counts = self.spec(), self.counts(self.session_of(ctx))
        tool = server.tool(params.name)
        if tool is not None and not (tool.listed or counts.changed):
            tool = None
        arguments = params.arguments or {}
        entry = self.entry_of(ctx)
        if tool is None:
            declared = ", ".join(t.name for t in server.tools if t.listed or counts.changed)
            message = f"Unknown tool: {params.name} (mockllm server {server.name!r} declares: "
            message += f"{declared or 'none'})"
            if entry is not None:
                entry.mcp["problem"] = "unknown tool"
            if server.unknown_tools == "refuse":
                raise MCPError(INVALID_PARAMS, message)
            return _error_result(message)
        problem = self._arguments_problem(tool, arguments)
        if problem is not None:
            if entry is not None:
                entry.mcp["problem"] = problem
            return _error_result(f"Input validation error: {problem}")
        served = counts.served.get(tool.name, 0)
        counts.served[tool.name] = served + 1
        result = tool.pick(arguments, served)
        if result is None:
            args = compact_json(arguments)
            if entry is not None:
                entry.mcp["problem"] = "no scripted result"
            return _error_result(f"mockllm: no scripted result of {tool.name} answers {args}")
        if entry is not None:  # which scripted answer, of how many (all_mcp_answers_served)
            entry.mcp["answer"] = next(i for i, r in enumerate(tool.results) if r is result)
            entry.mcp["scripted"] = {tool.name: len(tool.results)}
        return await self._deliver(ctx, tool, result, counts, entry)

    def _arguments_problem(self, tool: McpTool, arguments: dict[str, Any]) -> str | None:
        """`_arguments_problem`, remembered by the arguments' text: an agent calls one tool
        with the same arguments again and again (the schema check costs a JSON round trip)."""
        if not tool.input_schema:
            return None
        key = (id(tool), compact_json(arguments))
        found = self._problems.get(key)
        if found is not None and found[0] is tool:  # the key holds its id()
            return found[1]
        problem = _arguments_problem(tool, arguments)
        if len(key[1]) <= 4096:
            self._problems.put(key, (tool, problem))
        return problem

    async def _deliver(
        self, ctx: Any, tool: McpTool, result: McpResult, counts: _Counts, entry: McpEntry | None
    ) -> types.CallToolResult:
        fault = result.fault
        if fault is not None:
            if entry is not None:
                entry.mcp["fault"] = fault.describe()
            for step, value in enumerate(fault.progress):
                await ctx.session.report_progress(value, fault.progress[-1], f"step {step + 1}")
            if fault.delay_ms:
                await anyio.sleep(fault.delay_ms / 1000)
            if fault.drop:
                await self.log.drop(ctx, entry)
                await anyio.sleep(self.max_stall)
            if fault.hang:
                await anyio.sleep(self.max_stall)
                raise MCPError(
                    INTERNAL_ERROR, f"mockllm: hung for --max-stall {self.max_stall:g} s"
                )
            if fault.error:
                raise MCPError(*fault.error)
            if fault.list_changed and not counts.changed:
                counts.changed = True
                await ctx.session.send_tool_list_changed()
        text = result.content_text()
        if fault is not None and fault.huge_bytes:
            size = min(fault.huge_bytes, HUGE_MAX)
            text = (text + " " + "x" * size)[:size] if len(text) < size else text
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content=dict(result.structured) if result.structured is not None else None,
            is_error=result.is_error,
        )

    # --- resources and prompts ----------------------------------------------------------

    async def _list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=r.uri,
                    name=r.name or r.uri,
                    description=r.description or None,
                    mime_type=r.mime_type,
                )
                for r in self.spec().resources
            ]
        )

    async def _read_resource(self, ctx: Any, params: Any) -> types.ReadResourceResult:
        uri = str(params.uri)
        found = next((r for r in self.spec().resources if r.uri == uri), None)
        if found is None:
            raise MCPError(-32002, f"Resource not found: {uri}")
        contents = types.TextResourceContents(uri=uri, text=found.text, mime_type=found.mime_type)
        return types.ReadResourceResult(contents=[contents])

    async def _list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=p.name,
                    description=p.description or None,
                    arguments=[
                        types.PromptArgument(name=n, description=d or None, required=r)
                        for n, d, r in p.arguments
                    ],
                )
                for p in self.spec().prompts
            ]
        )

    async def _get_prompt(self, ctx: Any, params: Any) -> types.GetPromptResult:
        found = next((p for p in self.spec().prompts if p.name == params.name), None)
        if found is None:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {params.name}")
        message = types.PromptMessage(role="user", content=types.TextContent(text=found.text))
        return types.GetPromptResult(description=found.description or None, messages=[message])


def _tool(tool: McpTool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        description=tool.description or None,
        input_schema=dict(tool.input_schema or {"type": "object"}),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        annotations=types.ToolAnnotations.model_validate(dict(tool.annotations))
        if tool.annotations
        else None,
    )


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def _arguments_problem(tool: McpTool, arguments: dict[str, Any]) -> str | None:
    if not tool.input_schema:
        return None
    from mockllm.core.call_problem import call_problem  # one schema check for both sides

    problem = call_problem(tool.name, json.dumps(arguments), {tool.name: dict(tool.input_schema)})
    return problem.removeprefix("arguments break the schema: ") if problem else None


class _Sdk(Server[Any]):
    """The SDK's server, saying it may send `tools/list_changed` (a scripted fault does)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class McpLog(ABC):
    """Where a message's entry comes from and goes: over HTTP the wrapper opened it for
    the request and closes it; over stdio (serving/mcp_stdio.py) it is one per message.
    `info` is what the message asked (log/mcp.py `asked`), the same on both."""

    finishes = False  # whether `finish` does anything (a shielded await per message else)

    @abstractmethod
    async def start(self, ctx: Any, info: dict[str, Any]) -> McpEntry | None: ...

    async def finish(self, entry: McpEntry) -> None:
        return None

    @abstractmethod
    async def drop(self, ctx: Any, entry: McpEntry | None) -> None:
        """A `drop` fault: end the connection mid-call, the entry saying so."""


class HttpLog(McpLog):
    async def start(self, ctx: Any, info: dict[str, Any]) -> McpEntry | None:
        found = _scope(ctx).get(ENTRY_KEY)
        return found if isinstance(found, McpEntry) else None

    async def drop(self, ctx: Any, entry: McpEntry | None) -> None:
        """Tell the HTTP wrapper to abort this request's response."""
        if entry is not None:
            unfinished(entry.mcp, "drop fault: the response was aborted mid-call")
        event = _scope(ctx).get("mockllm.drop")
        if isinstance(event, asyncio.Event):
            event.set()


def _scope(ctx: Any) -> dict[str, Any]:
    scope = getattr(getattr(ctx, "request", None), "scope", None)
    return scope if isinstance(scope, dict) else {}


class McpRoutes:
    """Every scripted server this process serves over HTTP, each started on first use."""

    def __init__(
        self,
        scenarios: Callable[[str], Scenario | None],
        journal: Journal,
        max_body: int,
        max_stall: float,
        max_sessions: int,
        max_mcp_sessions: int = 1000,
    ) -> None:
        self.scenarios, self.journal = scenarios, journal
        self.max_body, self.max_stall, self.max_sessions = max_body, max_stall, max_sessions
        self.sessions = mcp_guard.Sessions(max_mcp_sessions)  # the SDK's, over every server
        # by (scenario, server, whether its calls stream): one SDK manager each, started once
        self._served: dict[
            tuple[str, str, bool], tuple[Scripted, StreamableHTTPSessionManager]
        ] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._kinds: Lru[tuple[McpServer, _Kind]] = Lru(256)  # see _kind

    def _kind(self, spec: McpServer) -> _Kind:
        """How a server's calls are served, decided once per server of a loaded scenario
        (the scan of every result's fault is a per-request cost otherwise)."""
        found = self._kinds.get(id(spec))
        if found is not None and found[0] is spec:  # the key holds its id()
            return found[1]
        kind = _Kind(spec.streams(), spec.drops(), spec.answers_at_once())
        self._kinds.put(id(spec), (spec, kind))
        return kind

    def reset(self, session: str | None = None) -> None:
        for scripted, _ in self._served.values():
            scripted.reset(session)

    async def _manager(
        self, scenario: str, server: str, streams: bool
    ) -> tuple[Scripted, StreamableHTTPSessionManager]:
        """The SDK's session manager of a scripted server. A server whose calls only ever
        answer (most) answers each call as one JSON body (the SDK's `json_response`, which
        every MCP client must accept): about half the CPU of an SSE stream per call. One
        whose calls send notifications first, or drop mid-call, streams them (SSE). A
        scenario replaced by one of the other kind gets a manager of that kind: the old
        sessions get the SDK's 404, and the clients open new ones, as the spec has them."""
        key = (scenario, server, streams)
        found = self._served.get(key)
        if found is not None:
            return found
        scripted = next(
            (s for (name, srv, _), (s, _) in self._served.items() if (name, srv) == key[:2]),
            None,
        ) or Scripted(
            lambda: self.scenarios(scenario), server, self.max_stall, self.max_sessions, _session
        )
        manager = StreamableHTTPSessionManager(
            scripted.sdk,
            json_response=not streams,
            max_request_body_size=self.max_body,
            session_idle_timeout=IDLE_TIMEOUT,
            max_sessions=max(1, self.sessions.limit),  # a backstop: mcp_guard counts them all
        )
        self._served[key] = (scripted, manager)
        started = asyncio.Event()

        async def run() -> None:
            async with manager.run():
                started.set()
                await asyncio.Event().wait()  # until the loop ends

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        await started.wait()
        return scripted, manager

    async def handle(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        scenario: str | None,
        session: str,
        server: str,
    ) -> None:
        entry = self.journal.open_as(McpEntry, scope["path"], scope["headers"], scope["method"])
        entry.session = sys.intern(session)
        entry.scenario = scenario
        entry.mcp = {"server": server, "transport": "streamable-http"}
        found = self.scenarios(scenario) if scenario else None
        try:
            spec = found.mcp_server(server) if found is not None else None
            if found is None or spec is None:
                await self._refuse(entry, send, scenario, server, found)
                return
            kind = self._kind(spec)
            scripted, manager = await self._manager(found.name, server, kind.streams)
            await self._serve((scripted, manager), entry, scope, receive, send, session, kind)
        except Exception:
            if entry.client_disconnected and entry.status is None:
                # The client hung up before its request was read (Claude Code 2.1 does so
                # with a `server/discover` probe): no one to answer, and no server fault.
                entry.note("the client hung up before its request was read")
                return
            entry.server_error = traceback.format_exc()
            if entry.status is None:
                await _answer(
                    self.journal,
                    entry,
                    send,
                    500,
                    INTERNAL_ERROR,
                    "mockllm internal error; see server_error in the request log",
                )
        finally:
            if (written := self.journal.close(entry)) is not None:
                await written

    async def _serve(
        self,
        served: tuple[Scripted, StreamableHTTPSessionManager],
        entry: McpEntry,
        scope: Scope,
        receive: Receive,
        send: Send,
        session: str,
        kind: _Kind,
    ) -> None:
        """The request to the SDK, past mcp_guard's checks: its body read whole first, an
        id already in flight in its MCP session refused, a new session admitted under
        --max-mcp-sessions; what the SDK's transport refuses in plain text made JSON-RPC."""
        key: tuple[str, str] = (entry.scenario or "", str(entry.mcp.get("server")))
        sid = mcp_guard.session_of(scope["headers"])
        ids: list[mcp_guard.IdKey] = []
        body: bytes | None = None
        if scope["method"] == "POST":
            try:
                body = await mcp_guard.read_whole(receive, self.max_body)
            except mcp_guard.HungUp:
                entry.client_disconnected = True
                entry.note("the client hung up before its request was read")
                return
            if body is None:
                message = f"mockllm: MCP request body over the server's limit of {self.max_body}"
                await self._guard_refusal(entry, send, 413, message + " bytes (--max-body)")
                return
            entry.body = body
            receive = mcp_guard.replay(body, receive)
            ids = mcp_guard.request_ids(body) if sid is not None else []
            if sid is None and not await self._admit(entry, send):
                return
        if sid is not None:
            self.sessions.touch(key, sid)
            taken = self.sessions.claim(key, sid, ids)
            if taken is not None:
                message = f"mockllm: request id {mcp_guard.id_of(taken)!r} is already in flight "
                message += "in this MCP session (JSON-RPC ids must be unique among pending "
                message += "requests): its first request would never be answered"
                await self._guard_refusal(entry, send, 409, message, mcp_guard.id_of(taken))
                return
        try:
            direct = body if kind.direct else None
            await self._serve_sdk(
                served, entry, scope, receive, send, session, key, sid, kind, direct
            )
        finally:
            if sid is not None:
                self.sessions.release(key, sid, ids)

    async def _admit(self, entry: McpEntry, send: Send) -> bool:
        """Room for the session this request may open; a JSON-RPC 503 when there is none."""
        if len(self.sessions) < self.sessions.limit or await self.sessions.make_room():
            return True
        limit = self.sessions.limit
        message = f"mockllm: {limit} MCP sessions are open, each with a request in flight "
        message += f"(--max-mcp-sessions {limit}): close one (DELETE) or try again"
        await self._guard_refusal(entry, send, 503, message)
        return False

    async def _guard_refusal(
        self, entry: McpEntry, send: Send, status: int, message: str, id_: Any = None
    ) -> None:
        entry.mcp["error"] = {"code": mcp_guard.INVALID_REQUEST, "message": message}
        await _answer(self.journal, entry, send, status, mcp_guard.INVALID_REQUEST, message, id_)

    async def _serve_sdk(
        self,
        served: tuple[Scripted, StreamableHTTPSessionManager],
        entry: McpEntry,
        scope: Scope,
        receive: Receive,
        send: Send,
        session: str,
        key: tuple[str, str],
        sid: str | None,
        kind: _Kind,
        body: bytes | None = None,
    ) -> None:
        """The SDK's answer, logged; raced against a `drop` fault's abort only where the
        server scripts one (the race is two tasks per call). `body`: a POST to a server
        whose calls may be answered past the SDK's transport, where it can be."""
        scripted, manager = served
        drop = asyncio.Event()
        inner = {**scope, ENTRY_KEY: entry, "mockllm.session": session, "mockllm.drop": drop}
        shaped = mcp_guard.shaped(send)

        async def reading() -> Any:
            message = await receive()
            if message.get("type") == "http.disconnect":
                entry.client_disconnected = True
            return message

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                entry.status = int(message["status"])
                self._track(key, sid, scope["method"], message, manager)
            elif message["type"] == "http.response.body":
                self.journal.record_sent(entry, message.get("body", b""))
            await shaped(message)

        if body is not None and sid is not None:
            found = scripted.direct.request(manager, inner, sid, body)
            if found is not None:
                await scripted.direct.answer(found, sid, sending)
                return
        if not kind.drops:
            await manager.handle_request(inner, reading, sending)
        else:
            await _raced(manager.handle_request(inner, reading, sending), drop, entry, send)

    def _track(
        self, key: tuple[str, str], sid: str | None, method: str, start: Any, manager: Any
    ) -> None:
        """The session the SDK opened (its id in the answer) or closed (a DELETE)."""
        status = int(start["status"])
        if sid is None and status < 400:
            opened = mcp_guard.session_of(list(start.get("headers") or []))
            if opened is not None:
                self.sessions.opened(key, opened, manager)
        elif sid is not None and method == "DELETE" and status < 400:
            self.sessions.closed(key, sid)

    async def _refuse(
        self,
        entry: McpEntry,
        send: Send,
        scenario: str | None,
        server: str,
        found: Scenario | None,
    ) -> None:
        if found is None:
            message = (
                f"mockllm: no scenario {scenario!r}"
                if scenario
                else ("mockllm: an MCP route needs a scenario: /s/SCENARIO[/SESSION]/mcp/SERVER")
            )
        else:
            declared = ", ".join(s.name for s in found.mcp_servers) or "none"
            message = f"mockllm: scenario {found.name!r} has no MCP server {server!r} "
            message += f"(declared: {declared})"
        entry.mcp["error"] = {"code": INVALID_PARAMS, "message": message}
        await _answer(self.journal, entry, send, 404, INVALID_PARAMS, message)


@dataclass(frozen=True, slots=True)
class _Kind:
    streams: bool  # its calls answer as SSE streams (McpServer.streams)
    drops: bool  # a call may drop the connection: raced against the abort
    direct: bool  # may be answered past the SDK's transport (McpServer.answers_at_once)


async def _raced(
    answering: Coroutine[Any, Any, None], drop: asyncio.Event, entry: McpEntry, send: Send
) -> None:
    """The SDK's answer raced against a `drop` fault's abort."""
    app = asyncio.ensure_future(answering)
    dropped = asyncio.ensure_future(drop.wait())
    await asyncio.wait((app, dropped), return_when=asyncio.FIRST_COMPLETED)
    if drop.is_set():
        app.cancel()
        entry.note("drop fault: the response was aborted mid-call")
        if entry.status is None:
            entry.status = 200
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
        await send({"type": "http.response.body", "body": b"", "more_body": True})
        return  # the body unfinished: uvicorn drops the connection
    dropped.cancel()
    app.result()


def _session(ctx: Any) -> str:
    found = _scope(ctx).get("mockllm.session")
    return found if isinstance(found, str) else "default"


async def _answer(
    journal: Journal,
    entry: McpEntry,
    send: Send,
    status: int,
    code: int,
    message: str,
    id_: Any = None,
) -> None:
    """A JSON-RPC error answered by mockllm itself (no SDK behind it)."""
    body = json.dumps({"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}})
    entry.status = status
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    journal.record_sent(entry, body.encode())
    await send({"type": "http.response.body", "body": body.encode()})
