"""Scripted MCP servers: the tool side of a scenario (docs/mcp.md).

Neutral data, like the rest of the scenario: which tools a server declares and what
each call gets. Serving them (the `mcp` SDK, its transports) is `serving/mcp.py`'s job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mockllm.core import schema_budget
from mockllm.core.encoding import compact_json
from mockllm.errors import Problem, did_you_mean

UnknownTools = Literal["refuse", "error_result"]
# The largest result a `huge_bytes` fault pads to (the schema's maximum, docs/security.md).
HUGE_MAX = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class McpFault:
    """A scripted misbehaviour of an MCP tool call."""

    delay_ms: int = 0
    hang: bool = False
    error: tuple[int, str] | None = None  # a JSON-RPC error (code, message) instead
    huge_bytes: int | None = None
    drop: bool = False
    progress: tuple[float, ...] = ()
    list_changed: bool = False

    def describe(self) -> str:
        parts = []
        if self.delay_ms:
            parts.append(f"delay {self.delay_ms} ms")
        if self.hang:
            parts.append("never answers")
        if self.error:
            parts.append(f"JSON-RPC error {self.error[0]}")
        if self.huge_bytes:
            parts.append(f"padded to {self.huge_bytes} bytes")
        if self.drop:
            parts.append("connection dropped")
        if self.progress:
            parts.append(f"{len(self.progress)} progress notification(s)")
        if self.list_changed:
            parts.append("tools/list_changed")
        return ", ".join(parts) or "none"


@dataclass(frozen=True, slots=True)
class McpResult:
    """One scripted result of an MCP tool, picked by its `when`."""

    when: Mapping[str, Any] | None = None
    text: str | None = None
    structured: Mapping[str, Any] | None = None
    is_error: bool = False
    fault: McpFault | None = None

    def content_text(self) -> str:
        """The text content sent: the text, else the structured content's JSON."""
        if self.text is not None:
            return self.text
        return compact_json(self.structured) if self.structured is not None else ""

    def answers(self, arguments: Mapping[str, Any]) -> bool:
        return self.when is not None and all(
            k in arguments and arguments[k] == v for k, v in self.when.items()
        )


@dataclass(frozen=True, slots=True)
class McpTool:
    """A tool of a scripted MCP server, with its results."""

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] | None = None
    output_schema: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
    listed: bool = True
    results: tuple[McpResult, ...] = ()

    def pick(self, arguments: Mapping[str, Any], served: int) -> McpResult | None:
        """The result for a call: the first whose `when` matches, else the `served`-th of
        those without `when` (the last repeating); None when nothing is scripted."""
        for result in self.results:
            if result.answers(arguments):
                return result
        ordered = [r for r in self.results if r.when is None]
        return ordered[min(served, len(ordered) - 1)] if ordered else None


@dataclass(frozen=True, slots=True)
class McpResource:
    """A resource a scripted MCP server lists and reads."""

    uri: str
    name: str = ""
    description: str = ""
    mime_type: str | None = None
    text: str = ""


@dataclass(frozen=True, slots=True)
class McpPrompt:
    """A prompt a scripted MCP server lists and gets."""

    name: str
    description: str = ""
    arguments: tuple[tuple[str, str, bool], ...] = ()  # (name, description, required)
    text: str = ""


@dataclass(frozen=True, slots=True)
class McpServer:
    """A scripted MCP server of the scenario (`mcp_servers:`)."""

    name: str
    tools: tuple[McpTool, ...] = ()
    resources: tuple[McpResource, ...] = ()
    prompts: tuple[McpPrompt, ...] = ()
    description: str = ""
    unknown_tools: UnknownTools = "refuse"

    def tool(self, name: str) -> McpTool | None:
        return next((t for t in self.tools if t.name == name), None)

    def drops(self) -> bool:
        """Whether a call may drop the connection mid-call (a `drop` fault)."""
        return any(r.fault is not None and r.fault.drop for t in self.tools for r in t.results)

    def streams(self) -> bool:
        """Whether a call may send the client more than its result: progress or
        tools/list_changed notifications before it, or a connection dropped mid-call. Only
        then is a call answered as an SSE stream; else as one JSON body (serving/mcp.py)."""
        return any(
            r.fault is not None and bool(r.fault.progress or r.fault.list_changed or r.fault.drop)
            for t in self.tools
            for r in t.results
        )

    def answers_at_once(self) -> bool:
        """Whether every call answers as soon as it is asked, as one JSON body: no fault
        that waits (delay, hang) or sends anything first (see `streams`). Only such a
        server's calls may be answered past the SDK's transport (serving/mcp_direct.py)."""
        return not self.streams() and not any(
            r.fault is not None and bool(r.fault.delay_ms or r.fault.hang)
            for t in self.tools
            for r in t.results
        )


def build_servers(data: Mapping[str, Any]) -> tuple[McpServer, ...]:
    """From a schema-valid `mcp_servers:` mapping, in the order written."""
    return tuple(_server(name, spec or {}) for name, spec in data.items())


def _server(name: str, data: Mapping[str, Any]) -> McpServer:
    return McpServer(
        name=name,
        tools=tuple(_tool(t) for t in data.get("tools", ())),
        resources=tuple(
            McpResource(
                r["uri"],
                r.get("name", ""),
                r.get("description", ""),
                r.get("mime_type"),
                r.get("text", ""),
            )
            for r in data.get("resources", ())
        ),
        prompts=tuple(
            McpPrompt(
                p["name"],
                p.get("description", ""),
                tuple(
                    (a["name"], a.get("description", ""), a.get("required", False))
                    for a in p.get("arguments", ())
                ),
                p.get("text", ""),
            )
            for p in data.get("prompts", ())
        ),
        description=data.get("description", ""),
        unknown_tools=data.get("unknown_tools", "refuse"),
    )


def _tool(data: Mapping[str, Any]) -> McpTool:
    return McpTool(
        name=data["name"],
        description=data.get("description", ""),
        input_schema=data.get("input_schema"),
        output_schema=data.get("output_schema"),
        annotations=data.get("annotations"),
        listed=data.get("listed", True),
        results=tuple(_result(r) for r in data.get("results", ())),
    )


def _result(data: Mapping[str, Any]) -> McpResult:
    fault = data.get("fault")
    return McpResult(
        when=data.get("when"),
        text=data.get("text"),
        structured=data.get("structured"),
        is_error=data.get("is_error", False),
        fault=_fault(fault) if fault is not None else None,
    )


def _fault(data: Mapping[str, Any]) -> McpFault:
    error = data.get("error")
    return McpFault(
        delay_ms=data.get("delay_ms", 0),
        hang=data.get("hang", False),
        error=(error["code"], error.get("message", "mockllm: scripted JSON-RPC error"))
        if error
        else None,
        huge_bytes=data.get("huge_bytes"),
        drop=data.get("drop", False),
        progress=tuple(float(p) for p in data.get("progress", ())),
        list_changed=data.get("list_changed", False),
    )


Locate = Callable[[tuple[str | int, ...]], Problem]
# How MCP clients name a server's tool to the model: Claude Code `mcp__orders__lookup`,
# the Agents SDK and others the bare name, some `orders_lookup`, `orders.lookup` or
# `orders/lookup`. Matched case-sensitively on the tool name, the separator free.
_SEPARATORS = ("__", "_", ".", "/", "-", ":")


def names_mcp_tool(offered: str, server: str, tool: str) -> bool:
    """Whether a tool name a client offers the model stands for SERVER's TOOL."""
    if offered == tool:
        return True
    for prefix in ("mcp__", "mcp_", ""):
        for sep in _SEPARATORS:
            if offered == f"{prefix}{server}{sep}{tool}":
                return True
    return False


def mcp_ref(name: str) -> tuple[str, str] | None:
    """'orders/lookup_order' → ('orders', 'lookup_order')."""
    server, sep, tool = name.partition("/")
    return (server, tool) if sep and server and tool else None


def check_servers(
    servers: tuple[McpServer, ...], calls: list[tuple[int, int, str]], locate: Locate
) -> list[Problem]:
    """Mistakes the schema cannot see: duplicate names, results that cannot match, and
    scripted `{mcp: SERVER/TOOL}` calls naming no declared tool. `calls`: (turn, call,
    SERVER/TOOL) of every such call."""
    problems = [p for server in servers for p in _check_server(server, locate)]
    by_name = {s.name: s for s in servers}
    for turn, index, ref in calls:
        where = locate(("turns", turn, "reply", "tool_calls", index, "name", "mcp"))
        problem = _unknown_tool(by_name, ref)
        if problem is not None:
            problems.append(where.with_message(problem))
    return problems


def _check_server(server: McpServer, locate: Locate) -> list[Problem]:
    """One server's tools (each once, each result able to answer) and resources (each once)."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, tool in enumerate(server.tools):
        place = ("mcp_servers", server.name, "tools", i)
        if tool.name in seen:
            message = f"tool {tool.name!r} is declared twice on server {server.name!r}"
            problems.append(locate((*place, "name")).with_message(message))
        seen.add(tool.name)
        for j, result in enumerate(tool.results):
            fault = result.fault
            answers = fault is not None and bool(fault.error or fault.hang or fault.drop)
            if result.text is None and result.structured is None and not answers:
                message = "give text or structured (or a fault that answers instead: error, "
                message += "hang, drop)"
                problems.append(locate((*place, "results", j)).with_message(message))
        for key in ("input_schema", "output_schema"):
            schema = getattr(tool, key)
            found = None if schema is None else schema_budget.problem(dict(schema))
            if found is not None:
                problems.append(locate((*place, key, *found[0])).with_message(found[1]))
        if tool.output_schema is not None and tool.output_schema.get("type") not in (
            None,
            "object",
        ):
            message = "an MCP output schema describes a JSON object: its type must be object"
            problems.append(locate((*place, "output_schema", "type")).with_message(message))
    uris = [r.uri for r in server.resources]
    for k, uri in enumerate(uris):
        if uri in uris[:k]:
            where = locate(("mcp_servers", server.name, "resources", k, "uri"))
            problems.append(where.with_message(f"resource {uri!r} is declared twice"))
    return problems


def _unknown_tool(by_name: dict[str, McpServer], ref: str) -> str | None:
    """Why a scripted `{mcp: SERVER/TOOL}` call names nothing declared, if it does not."""
    server_name, tool_name = mcp_ref(ref) or ("", "")
    found = by_name.get(server_name)
    if found is None:
        known = ", ".join(by_name) or "none"
        return f"no MCP server {server_name!r} in this scenario's mcp_servers (declared: {known})"
    if found.tool(tool_name) is None:
        names = list(dict.fromkeys(t.name for t in found.tools))
        known = ", ".join(names) or "none"
        hint = did_you_mean(tool_name, names)
        return f"server {server_name!r} declares no tool {tool_name!r}{hint} (declared: {known})"
    return None
