"""A scripted reply made concrete for one request: `generate:` arguments and `near_miss`
names resolved from the tools that request offers — deterministically, so every request
(and the divergence check of every later one) resolves a turn the same way."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache

from mockllm.core.conversation import Conversation
from mockllm.core.scenario import Reply, Scenario, ScriptedCall
from mockllm.errors import RequestError


def concrete(scenario: Scenario, index: int, reply: Reply, conv: Conversation) -> Reply:
    """The reply with `generate:` arguments and `near_miss` names made concrete from the
    tools this request offers — deterministically, so every turn resolves the same way."""
    if not any(c.generate or c.near_miss for c in reply.tool_calls):
        return reply
    calls = tuple(
        _concrete_call(scenario, index, i, call, conv) for i, call in enumerate(reply.tool_calls)
    )
    return replace(reply, tool_calls=calls)


def _concrete_call(
    scenario: Scenario, index: int, i: int, call: ScriptedCall, conv: Conversation
) -> ScriptedCall:
    from mockllm.core.generate import (
        near_miss,  # deferred: only scenarios that use it pay for its tables
    )

    seed = f"{scenario.name}\x1f{index}\x1f{i}"
    name = near_miss(call.name, conv.tool_names, seed) if call.near_miss else call.name
    arguments = call.arguments
    if call.generate is not None:
        where = f"mockllm: scenario {scenario.name!r} turn {index} call {i}"
        tool = next((t for t in conv.tools if t.name == call.name), None)
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


@lru_cache(maxsize=4096)
def _generated(kind: str, schema: str, seed: str, tool: str) -> str:
    """Generation validates with jsonschema: done once per (kind, schema, call)."""
    from mockllm.core.generate import generate_arguments

    return generate_arguments(kind, json.loads(schema), seed, tool=tool)
