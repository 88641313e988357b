"""The benchmark's requests: the same bytes for every server.

Kept free of heavy imports: the floors import it, and their start-up time is measured.

Two kinds of workload:
- *warm*: one body sent again and again (what the first tables measured): every request
  after the first is answered from mockllm's prepared-request and render caches;
- *cold*: every request distinct (`DISTINCT` in the body is replaced by a counter), as a
  real test suite sends them, including agent histories of growing length.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

TOOL_CALL = "bench-tool-call"  # non-stream: a reply with one tool call
STREAM = "bench-stream"  # stream: a text reply of exactly 50 SSE `data:` frames
STREAM_EVENTS = 50
DISTINCT = "@@N@@"  # replaced by a request counter: no two cold requests are the same bytes
HISTORY_LENGTHS = (2, 10, 50, 200)  # messages in the history of the agent-loop rows

TOOL = "get_weather"  # the one tool every request offers, and the one the tool-call reply calls

_PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}}
_TOOLS = [{"type": "function", "function": {"name": TOOL, "parameters": _PARAMETERS}}]


def request_body(stream: bool, user: str = "hi") -> bytes:
    """An OpenAI Chat Completions request holding only a user message: always turn 0."""
    body: dict[str, object] = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": user}],
        "tools": _TOOLS,
    }
    if stream:
        body["stream"] = True
    return _dumps(body)


def mockllm_path(scenario: str) -> str:
    return f"/s/{scenario}/v1/chat/completions"


@dataclass(frozen=True)
class Cold:
    """One cold workload: its metric prefix, its request (with `DISTINCT` once), its label."""

    key: str
    label: str
    path: str
    body: bytes


AZURE_ROUTE = "openai/deployments/gpt-4o-mini/chat/completions"
MISTRAL_ROUTE = "v1/chat/completions"


def cold_workloads() -> list[Cold]:
    """The distinct-body rows that need no conversation first (histories: `history_body`)."""
    ask = f"What is the weather in Paris? (request {DISTINCT})"
    anthropic = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": ask}],
        "tools": [{"name": "get_weather", "input_schema": _PARAMETERS}],
    }
    responses = {
        "model": "gpt-4.1",
        "input": ask,
        "tools": [{"type": "function", "name": "get_weather", "parameters": _PARAMETERS}],
    }
    gemini = {
        "contents": [{"role": "user", "parts": [{"text": ask}]}],
        "tools": [
            {"functionDeclarations": [{"name": "get_weather", "parametersJsonSchema": _PARAMETERS}]}
        ],
    }
    gemini_route = "v1beta/models/gemini-2.5-flash:generateContent"
    bedrock = {
        "messages": [{"role": "user", "content": [{"text": ask}]}],
        "toolConfig": {
            "tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": _PARAMETERS}}}]
        },
    }
    bedrock_route = "model/us.anthropic.claude-sonnet-4-6/converse"
    # A RAG agent indexing its corpus, as the openai SDK asks by default (base64 float32),
    # 1536 dimensions (docs/embeddings.md): 16 chunks a request, one of them new (one
    # DISTINCT a body), the others the same corpus again, as every test of a suite sends it
    chunks = [f"Chunk {i} of the help centre: refunds, shipping and passwords" for i in range(15)]
    chunks.append(f"A new chunk about express shipping and refund days ({DISTINCT})")
    embeddings = {"model": "text-embedding-3-small", "input": chunks, "encoding_format": "base64"}
    vertex = "v1/projects/bench/locations/us-east5/publishers"
    vertex_gemini_route = f"{vertex}/google/models/gemini-2.5-flash:generateContent"
    vertex_claude_route = f"{vertex}/anthropic/models/claude-sonnet-4-6:rawPredict"
    vertex_claude = {k: v for k, v in anthropic.items() if k != "model"}
    vertex_claude["anthropic_version"] = "vertex-2023-10-16"
    return [
        Cold("cold_ns", "distinct", mockllm_path(TOOL_CALL), request_body(False, ask)),
        Cold("cold_st", "distinct stream", mockllm_path(STREAM), request_body(True, ask)),
        Cold("cold_anthropic", "distinct Anthropic", _path("v1/messages"), _dumps(anthropic)),
        Cold("cold_responses", "distinct Responses", _path("v1/responses"), _dumps(responses)),
        Cold("cold_gemini", "distinct Gemini", _path(gemini_route), _dumps(gemini)),
        Cold("cold_bedrock", "distinct Bedrock", _path(bedrock_route), _dumps(bedrock)),
        # Chat in two flavours that reshape what it renders: Azure's route (the deployment
        # the body's model, as AzureOpenAI sends it) and Mistral's (whole calls, its ids).
        Cold("cold_azure", "distinct Azure", _path(AZURE_ROUTE), request_body(False, ask)),
        Cold(
            "cold_mistral",
            "distinct Mistral",
            "/f/mistral" + _path(MISTRAL_ROUTE),
            request_body(False, ask),
        ),
        Cold("cold_embeddings", "distinct embeddings", _path("v1/embeddings"), _dumps(embeddings)),
        Cold(
            "cold_vertex_gemini",
            "distinct Vertex Gemini",
            _path(vertex_gemini_route),
            _dumps(gemini),
        ),
        Cold(
            "cold_vertex_claude",
            "distinct Vertex Claude",
            _path(vertex_claude_route),
            _dumps(vertex_claude),
        ),
    ]


def history_body(messages: list[dict[str, object]]) -> bytes:
    """A Chat Completions request resending an agent loop's history."""
    return _dumps({"model": "gpt-4o-mini", "messages": messages, "tools": _TOOLS})


def history_start() -> list[dict[str, object]]:
    """The two messages every history starts with: a system prompt and the (distinct) ask."""
    return [
        {"role": "system", "content": "You are a weather agent. Use the tools."},
        {"role": "user", "content": f"What is the weather in Paris? (request {DISTINCT})"},
    ]


def _path(route: str) -> str:
    return f"/s/{TOOL_CALL}/{route}"


def _dumps(body: object) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()
