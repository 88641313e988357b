"""Structured output: a reply generated from the JSON Schema the request asks for
(docs/scenarios.md, "Structured output"). Deterministic: a hash of (scenario, turn), never
`random`, so every replica sends the same bytes for the same request."""

from __future__ import annotations

import json
from dataclasses import replace

from mockllm.core.cache import sized_cache
from mockllm.core.conversation import Conversation
from mockllm.core.scenario import Reply, Scenario
from mockllm.errors import RequestError

_ANY_OBJECT = json.dumps({"type": "object"})  # what JSON mode (no schema) promises


def structured(
    scenario: Scenario, index: int, reply: Reply, conv: Conversation, what: str
) -> Reply:
    """`reply` with its `json:` kind made into text from the request's schema; `reply`
    itself when it asks for none. `what` names the turn or side request in errors."""
    kind = reply.json
    if kind is None:
        return reply
    output = conv.output
    where = f"mockllm: scenario {scenario.name!r} {what}"
    if output is None:
        message = f"{where}: json: {kind} needs a request that asks for JSON output "
        message += "(response_format, text.format, responseMimeType/responseJsonSchema, "
        message += "output_config.format); this one asks for none"
        raise RequestError(400, message, kind="generate_failed", code="generate_failed")
    schema = output.schema_text() or _ANY_OBJECT
    from mockllm.core.generate import GenerateError

    try:
        text = _text(kind, schema, f"{scenario.name}\x1f{what}\x1fjson", output.name or "")
    except GenerateError as e:
        raise RequestError(
            400, f"{where}: {e}", kind="generate_failed", code="generate_failed"
        ) from None
    return replace(reply, text=text, json=None)


@sized_cache(1024)  # keyed by the request's schema: bounded in bytes too
def _text(kind: str, schema: str, seed: str, name: str) -> str:
    from mockllm.core.generate import generate_arguments

    label = f"the output schema {name!r}" if name else "the output schema"
    if kind in ("not_json", "in_prose"):
        valid = generate_arguments("valid", json.loads(schema), seed, tool=label)
        if kind == "not_json":  # cut half way: what a reply stopped mid-object looks like
            return valid[: max(1, len(valid) // 2)]
        return (
            f"Here is the JSON you asked for:\n\n{valid}\n\nLet me know if you need anything else."
        )
    return generate_arguments(kind, json.loads(schema), seed, tool=label)
