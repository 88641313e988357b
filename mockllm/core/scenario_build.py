"""A scenario built from a mapping that passed the JSON Schema: the frozen model of
core/scenario.py. YAML files and Python mappings (`add_scenario({...})`) go through the
same `build_scenario`, so both produce the same objects and the same errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockllm.core.conversation import ToolChoice
from mockllm.core.embedding_rules import build_rules
from mockllm.core.encoding import compact_json
from mockllm.core.keepalive import KeepAlive
from mockllm.core.mcp import McpServer, build_servers, mcp_ref, names_mcp_tool
from mockllm.core.scenario import (
    CHAOS_KINDS,
    CONTENT_FILTER_MESSAGE,
    Chaos,
    Delay,
    Disconnect,
    Empty,
    Expect,
    Fault,
    Finish,
    HttpFault,
    Misbehave,
    Part,
    Reply,
    RequestMatch,
    ResultMatch,
    Scenario,
    ScriptedCall,
    SideRequest,
    Stall,
    StreamConfig,
    StreamError,
    TextMatch,
    Truncate,
    Turn,
    Usage,
)


def dump_arguments(arguments: object) -> str:
    """A mapping becomes compact JSON, as real models emit it; a string stays verbatim."""
    if isinstance(arguments, str):
        return arguments
    return compact_json(arguments)


def build_scenario(data: Mapping[str, Any], name: str, source: str) -> Scenario:
    """Build from a mapping that already passed the JSON Schema."""
    servers = build_servers(data.get("mcp_servers") or {})
    turns = tuple(_turn(t) for t in data["turns"])
    if servers:
        turns = _from_mcp(turns, servers)
    stream = data.get("stream", {})
    return Scenario(
        name=data.get("name", name),
        turns=turns,
        description=data.get("description", "").strip(),
        validation=data.get("validation"),
        flavor=data.get("flavor"),
        stream=_stream(stream),
        chaos=_chaos(data["chaos"]) if "chaos" in data else None,
        source=source,
        mcp_servers=servers,
        side_requests=tuple(_side(r, origin) for r, origin in _with_origin(data, "side_requests")),
        embeddings=build_rules(data.get("embeddings")),
        seeds=tuple(_text_match_required(m) for m, _ in _with_origin(data, "seed")),
        includes=tuple(data.get("include", ())),
        allow=dict(data.get("allow") or {}),
    )


def _stream(data: Mapping[str, Any]) -> StreamConfig:
    keep_alive = data.get("keep_alive")
    own = {k: v for k, v in data.items() if k != "keep_alive"}
    return StreamConfig(**own, keep_alive=KeepAlive(**keep_alive) if keep_alive else None)


def _from_mcp(turns: tuple[Turn, ...], servers: tuple[McpServer, ...]) -> tuple[Turn, ...]:
    """`from_mcp: true` made concrete: the texts the scripted tool gives the call it
    answers (the previous turn's call at that place), found once, when the scenario is built."""
    from dataclasses import replace

    out = list(turns)
    for i, turn in enumerate(turns):
        results = turn.expect.tool_results if turn.expect else None
        if not results or i == 0 or not any(r.from_mcp is not None for r in results):
            continue
        calls = turns[i - 1].reply.tool_calls
        made = []
        for j, match in enumerate(results):
            if match.from_mcp is not None and j < len(calls):
                match = replace(match, from_mcp=_mcp_texts(calls[j], servers))
            made.append(match)
        assert turn.expect is not None
        out[i] = replace(turn, expect=replace(turn.expect, tool_results=tuple(made)))
    return tuple(out)


def _mcp_texts(call: ScriptedCall, servers: tuple[McpServer, ...]) -> tuple[str, ...]:
    ref = call.mcp or next(
        (
            (s.name, t.name)
            for s in servers
            for t in s.tools
            if names_mcp_tool(call.name, s.name, t.name)
        ),
        None,
    )
    server = next((s for s in servers if ref and s.name == ref[0]), None)
    tool = server.tool(ref[1]) if server and ref else None
    if tool is None:
        return ()
    arguments = call.arguments_object() or {}
    picked = [r for r in tool.results if r.answers(arguments)][:1] or [
        r for r in tool.results if r.when is None
    ]
    return tuple(dict.fromkeys(r.content_text() for r in picked))


def _with_origin(data: Mapping[str, Any], key: str) -> list[tuple[Any, str]]:
    """The scenario's own entries under `key`, then those of the rule sets it includes
    (the loader puts them under `_included`: [(name, rule set), ...])."""
    own = [(item, "") for item in data.get(key, ())]
    for name, rules in data.get("_included", ()):
        own += [(item, name) for item in rules.get(key, ())]
    return own


def _side(data: Mapping[str, Any], origin: str) -> SideRequest:
    fault = data.get("fault")
    return SideRequest(
        name=data["name"],
        match=_request_match(data["match"]),
        reply=_reply(data.get("reply", {})),
        fault=_fault(fault) if fault is not None else None,
        origin=origin,
        has_reply="reply" in data,
    )


def _request_match(data: Mapping[str, Any]) -> RequestMatch:
    tools = data.get("tools")
    api = data.get("api")
    return RequestMatch(
        system=_text_match(data.get("system")),
        user=_text_match(data.get("user")),
        model=_text_match(data.get("model")),
        tool_results=_text_match(data.get("tool_results")),
        no_tools={"none": True, "some": False}.get(tools) if isinstance(tools, str) else None,
        tool=tools.get("includes") if isinstance(tools, Mapping) else None,
        json=data.get("json"),
        api=(api,) if isinstance(api, str) else tuple(api) if api is not None else None,
    )


def _text_match_required(value: str | Mapping[str, str]) -> TextMatch:
    match = _text_match(value)
    assert match is not None
    return match


def _turn(data: Mapping[str, Any]) -> Turn:
    expect = data.get("expect")
    fault = data.get("fault")
    return Turn(
        reply=_reply(data.get("reply", {})),
        expect=_expect(expect) if expect is not None else None,
        repeat=data.get("repeat", False),
        fault=_fault(fault) if fault is not None else None,
        has_reply="reply" in data,
        match=_request_match(data["match"]) if "match" in data else None,
        allow=dict(data.get("allow") or {}),
    )


def _fault(data: Mapping[str, Any]) -> Fault:
    delay = data.get("delay")
    return Fault(_part(data), Delay(**delay) if delay is not None else None, data.get("times"))


def _part(data: Mapping[str, Any]) -> Part | None:
    """The fault's one `Part`: the first given, in scenario_checks.py's `_PARTS` order (the
    checks refuse more than one)."""
    if (http := data.get("http")) is not None:
        return _http(http)
    if (blocked := data.get("content_filter")) is not None:
        return _content_filter(blocked)
    if data.get("stall"):
        return Stall()
    if (error := data.get("stream_error")) is not None:
        return StreamError(**error)
    if (truncate := data.get("truncate")) is not None:
        return _truncate(truncate, data.get("disconnect") or "reset")
    if (kind := data.get("misbehave")) is not None:
        return Misbehave(kind)
    return None


def _truncate(data: Mapping[str, Any], disconnect: Disconnect) -> Truncate:
    call = data.get("call", 0 if "inside" in data else None)  # inside: arguments means call 0
    return Truncate(data.get("after_events"), data.get("after_bytes"), call, disconnect)


def _http(data: Mapping[str, Any]) -> HttpFault:
    headers = tuple((str(k).lower(), _header_value(v)) for k, v in data.get("headers", {}).items())
    return HttpFault(
        data["status"], data.get("type"), data.get("message"), data.get("code"), headers
    )


def _content_filter(data: Mapping[str, Any]) -> HttpFault:
    """The prompt filter's 400 (Azure's words on its routes, the wire's shape elsewhere)."""
    filtered = (data["category"], data.get("severity", "high"))
    return HttpFault(400, None, CONTENT_FILTER_MESSAGE, "content_filter", filtered=filtered)


def _header_value(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _chaos(data: Mapping[str, Any]) -> Chaos:
    rates = tuple((k, float(data[k])) for k in CHAOS_KINDS if k in data)  # a fixed order
    return Chaos(rates, data.get("seed"))


def _reply(data: Mapping[str, Any]) -> Reply:
    calls = tuple(_call(c) for c in data.get("tool_calls", ()))
    usage = data.get("usage", {})
    return Reply(
        text=data.get("text", ""),
        reasoning=data.get("reasoning"),
        tool_calls=calls,
        finish=data.get("finish", _default_finish(data, calls)),
        usage=Usage(usage.get("input"), usage.get("output")),
        json=data.get("json"),
        refusal=data.get("refusal"),
        empty=_empty(data),
        filter=data.get("filter"),
        blocked=data.get("blocked"),
        search=data.get("search_tools"),
    )


def _empty(data: Mapping[str, Any]) -> Empty | None:
    """`empty: null` (Chat content null) or `empty: ""` (content ""); absent: not empty."""
    if "empty" not in data:
        return None
    return "null" if data["empty"] is None else "string"


def _default_finish(data: Mapping[str, Any], calls: tuple[ScriptedCall, ...]) -> Finish:
    if "filter" in data:  # naming the filter says it stopped the reply
        return "content_filter"
    return "tool_calls" if calls else "stop"


def _call(data: Mapping[str, Any]) -> ScriptedCall:
    name = data["name"]
    if isinstance(name, Mapping) and "mcp" in name:
        ref = mcp_ref(name["mcp"])
        return ScriptedCall(
            name=ref[1] if ref else name["mcp"],
            arguments=dump_arguments(data.get("arguments", {})),
            id=data.get("id"),
            generate=data.get("generate"),
            mcp=ref,
        )
    near_miss = isinstance(name, Mapping)
    return ScriptedCall(
        name=name["near_miss"] if near_miss else name,
        arguments=dump_arguments(data.get("arguments", {})),
        id=data.get("id"),
        generate=data.get("generate"),
        near_miss=near_miss,
    )


def _expect(data: Mapping[str, Any]) -> Expect:
    tools = data.get("tools")
    results = data.get("tool_results")
    return Expect(
        user=_text_match(data.get("user")),
        system=_text_match(data.get("system")),
        model=_text_match(data.get("model")),
        tools=tuple(tools) if tools is not None else None,
        tool_choice=_tool_choice(data.get("tool_choice")),
        stream=data.get("stream"),
        tool_results=tuple(_result_match(r) for r in results) if results is not None else None,
    )


def _result_match(data: Mapping[str, Any]) -> ResultMatch:
    from_mcp = () if data.get("from_mcp") else None  # made concrete by _from_mcp
    return ResultMatch(data.get("contains"), data.get("regex"), data.get("is_error"), from_mcp)


def _text_match(value: str | Mapping[str, str] | None) -> TextMatch | None:
    if value is None:
        return None
    if isinstance(value, str):
        return TextMatch("equals", value)
    ((how, text),) = value.items()
    return TextMatch(how, text)  # type: ignore[arg-type]  # the schema allows only the three


def _tool_choice(value: str | Mapping[str, str] | None) -> ToolChoice | None:
    if value is None:
        return None
    if isinstance(value, str):
        return ToolChoice(value)  # type: ignore[arg-type]  # the schema's enum
    return ToolChoice("tool", value["tool"])
