"""What each wire says about JSON output asked for, read into `OutputFormat` (docs/scenarios.md,
"Structured output"). Lenient: a field this does not recognise asks for nothing (the
provider's own validation of these fields is not modelled)."""

from __future__ import annotations

from typing import Any

from mockllm.core import schema_budget
from mockllm.core.conversation import OutputFormat

_JSON_MIME = "application/json"


def openai_chat(response_format: Any) -> OutputFormat | None:
    """`response_format`: {type: json_schema, json_schema: {name, schema, strict}} or
    {type: json_object}."""
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        return OutputFormat("json_object")
    spec = response_format.get("json_schema")
    if kind == "json_schema" and isinstance(spec, dict):
        return _schema(spec.get("schema"), spec.get("name"))
    return None


def openai_responses(text: Any) -> OutputFormat | None:
    """`text.format`: {type: json_schema, name, schema, strict} or {type: json_object}."""
    found = text.get("format") if isinstance(text, dict) else None
    if not isinstance(found, dict):
        return None
    kind = found.get("type")
    if kind == "json_object":
        return OutputFormat("json_object")
    if kind == "json_schema":
        return _schema(found.get("schema"), found.get("name"))
    return None


def anthropic(body: dict[str, Any]) -> OutputFormat | None:
    """Structured outputs: `output_config.format` (GA), or the beta's `output_format`;
    both {type: json_schema, schema}."""
    config = body.get("output_config")
    found = config.get("format") if isinstance(config, dict) else None
    if found is None:
        found = body.get("output_format")
    if isinstance(found, dict) and found.get("type") == "json_schema":
        return _schema(found.get("schema"), None)
    return None


def gemini(config: Any, get: Any) -> OutputFormat | None:
    """`generationConfig`: responseMimeType application/json, with responseJsonSchema (JSON
    Schema) or responseSchema (the OpenAPI subset: types in capitals), or neither (JSON
    mode). `get(mapping, camelName)` reads a field in either spelling. Types in capitals are
    read as JSON Schema's in either field: Gemini CLI sends its router's schema
    (`Type.OBJECT`) as responseJsonSchema (tests/fixtures/cli_captures/gemini), and JSON
    Schema has no type "OBJECT" to mean anything else."""
    if not isinstance(config, dict) or get(config, "responseMimeType") != _JSON_MIME:
        return None
    schema = get(config, "responseJsonSchema")
    if schema is None:
        schema = get(config, "responseSchema")
    if schema is None:
        return OutputFormat("json_object")
    with schema_budget.walk():
        return _schema(_openapi(schema, 0), None)


def ollama(found: Any) -> OutputFormat | None:
    """`format`: "json" (JSON mode) or a JSON Schema; "" or none asks for nothing."""
    if found == "json":
        return OutputFormat("json_object")
    if isinstance(found, dict):
        return _schema(found, None)
    return None


def _schema(schema: Any, name: Any) -> OutputFormat:
    return OutputFormat(
        "json_schema",
        schema if isinstance(schema, dict | bool) else {},
        name if isinstance(name, str) else None,
    )


_MAX_DEPTH = 64  # a responseSchema nested deeper is cut there (the API bounds it lower)


def _openapi(schema: Any, depth: int) -> Any:
    """Gemini's Schema object as JSON Schema: `type` in lower case ("OBJECT" → "object"),
    `nullable: true` as a null type, `propertyOrdering` dropped; the rest as given (a JSON
    Schema passes through unchanged). Each node is converted once and charged to the
    schema budget (converting `properties` twice once doubled the work per level)."""
    if depth > _MAX_DEPTH:
        return {}
    schema_budget.charge()
    if isinstance(schema, list):
        return [_openapi(s, depth + 1) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _openapi(v, depth + 1) for k, v in schema.items() if k not in _NOT_CONVERTED}
    kind = schema.get("type")
    if isinstance(kind, str):
        out["type"] = kind.lower()
        if schema.get("nullable") is True:
            out["type"] = [kind.lower(), "null"]
    properties = schema.get("properties")
    if isinstance(properties, dict):  # property names stay as written: only values convert
        schema_budget.charge(len(properties))
        out["properties"] = {k: _openapi(v, depth + 1) for k, v in properties.items()}
    elif "properties" in schema:
        out["properties"] = _openapi(properties, depth + 1)
    return out


_NOT_CONVERTED = frozenset(("nullable", "propertyOrdering", "properties"))
