"""A scripted reply made concrete for one request: `generate:` arguments and `near_miss`
names resolved from the tools that request offers — deterministically, so every request
(and the divergence check of every later one) resolves a turn the same way."""

from __future__ import annotations

import json
from dataclasses import replace

from mockllm.core.cache import sized_cache
from mockllm.core.conversation import Conversation
from mockllm.core.encoding import compact_json
from mockllm.core.mcp import names_mcp_tool
from mockllm.core.scenario import Reply, Scenario, ScriptedCall
from mockllm.errors import RequestError


def concrete(scenario: Scenario, index: int, reply: Reply, conv: Conversation) -> Reply:
    """The reply with `generate:` arguments and `near_miss` names made concrete from the
    tools this request offers — deterministically, so every turn resolves the same way.
    Calls of `strict: true` tools get the required properties their script left out; a
    search for tools (`search_tools`) becomes what the request's tool search makes of it."""
    if reply.fixed and (not reply.tool_calls or not conv.strict_tools):
        return reply  # nothing of it depends on the request (decided at load: Reply.fixed)
    if reply.search is not None:
        from mockllm.core.tool_search import searched  # only scenarios that search pay

        reply = searched(scenario, index, reply, conv)
    strict = conv.strict_tools
    if not strict:  # a loop, not any(): it runs for every earlier turn of every request
        for call in reply.tool_calls:
            if call.generate or call.near_miss or call.mcp:
                break
        else:
            return reply
    calls = tuple(
        _conforming(
            scenario, index, i, _concrete_call(scenario, index, i, call, conv), call, strict
        )
        for i, call in enumerate(reply.tool_calls)
    )
    return replace(reply, tool_calls=calls)


def _conforming(
    scenario: Scenario,
    index: int,
    i: int,
    call: ScriptedCall,
    scripted: ScriptedCall,
    strict: dict[str, str],
) -> ScriptedCall:
    """With strict function calling the provider guarantees arguments that match the schema,
    so a scripted call that leaves a required property out gets one, derived from the schema.
    A scenario that asks for a violation (`generate:` other than `valid`) or scripts
    arguments that are not a JSON object keeps them: that is the failure it tests."""
    schema = strict.get(call.name)
    if schema is None or scripted.generate not in (None, "valid"):
        return call
    arguments = _filled(call.arguments, schema, f"{scenario.name}\x1f{index}\x1f{i}", call.name)
    return call if arguments == call.arguments else replace(call, arguments=arguments)


@sized_cache(4096)  # keyed by request content: bounded in bytes too
def _filled(arguments: str, schema: str, seed: str, tool: str) -> str:
    try:
        given = json.loads(arguments)
    except ValueError:
        return arguments
    parsed = json.loads(schema)
    required = parsed.get("required") if isinstance(parsed, dict) else None
    if not isinstance(given, dict) or not isinstance(required, list):
        return arguments
    missing = [k for k in required if isinstance(k, str) and k not in given]
    if not missing:
        return arguments
    from mockllm.core.generate import GenerateError

    try:
        whole = json.loads(_generated("valid", schema, seed, tool))
    except GenerateError:
        return arguments  # the schema cannot produce a value: leave the script as written
    given.update({k: whole[k] for k in missing if k in whole})
    return compact_json(given)


def _concrete_call(
    scenario: Scenario, index: int, i: int, call: ScriptedCall, conv: Conversation
) -> ScriptedCall:
    from mockllm.core.generate import (
        near_miss,  # deferred: only scenarios that use it pay for its tables
    )

    seed = f"{scenario.name}\x1f{index}\x1f{i}"
    name = near_miss(call.name, conv.tool_names, seed) if call.near_miss else call.name
    if call.mcp is not None:  # the offered name standing for SERVER's TOOL, whatever its prefix
        server, bare = call.mcp
        name = next((n for n in conv.tool_names if names_mcp_tool(n, server, bare)), bare)
    arguments = call.arguments
    if call.generate is not None:
        where = f"mockllm: scenario {scenario.name!r} turn {index} call {i}"
        tool = next((t for t in conv.tools if t.name == name), None)
        if tool is None:
            offered = ", ".join(conv.tool_names) or "none"
            message = f"{where}: generate: {call.generate} needs the tool {call.name!r} in the "
            message += f"request's tools (offered: {offered})"
            raise RequestError(400, message, kind="generate_failed", code="generate_failed")
        from mockllm.core.generate import GenerateError

        try:
            arguments = _generated(
                call.generate, json.dumps(tool.parameters, sort_keys=True), seed, call.name
            )
        except GenerateError as e:
            raise RequestError(
                400, f"{where}: {e}", kind="generate_failed", code="generate_failed"
            ) from None
    return ScriptedCall(name, arguments, call.id)


@sized_cache(4096)
def _generated(kind: str, schema: str, seed: str, tool: str) -> str:
    """Generation validates with jsonschema: done once per (kind, schema, call)."""
    from mockllm.core.generate import generate_arguments

    return generate_arguments(kind, json.loads(schema), seed, tool=tool)
