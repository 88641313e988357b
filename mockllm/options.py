"""Every option of a server, with its one default and its one description.

`mockllm serve` builds a flag of each field (--NAME, its default, and as its help the
field's doc, `field_help`), and `build_app`, `mockllm.serve()` and the pytest plugin (the
`mockllm_server_options` fixture) all take this object, so a new option is added here once
and reaches every way of starting a server.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

from mockllm.core import disk_cache
from mockllm.core.scenario import Chaos, Flavor, ValidationMode
from mockllm.core.schema_budget import MAX_SCHEMA_WORK

MB = 1024 * 1024


@dataclass(frozen=True)
class ServerOptions:
    """How a server answers: the `mockllm serve` flags, one field each."""

    default: str | None = None
    """The scenario of requests whose URL names none."""
    validation: ValidationMode = "strict"
    """Provider history rules: strict refuses a request that breaks one, warn only logs it,
    off skips them."""
    flavor: Flavor = "openai"
    """The Chat Completions flavour: that provider's rules, texts and wire shape (docs/flavours.md);
    a /f/FLAVOR/ URL chooses one per request."""
    chaos: Chaos | None = None
    """Seeded random faults over every request."""
    seed: int = 0
    """The seed of the chaos draws."""
    real_time: bool = False
    """The real clock in `created` fields, instead of a fixed one (2025-01-01)."""
    log: str | None = None
    """Append every request to this file as JSON lines."""
    log_limit: int = 10_000
    """Log entries kept in memory; the log file keeps all."""
    log_body_cap: int = 65_536
    """Response bytes kept per log entry."""
    log_request_cap: int = 1 * MB
    """Request bytes kept per log entry in memory; a longer body is kept cut, with its size
    and SHA-256, and the entry says `request_truncated` (the log file keeps it whole)."""
    log_bytes: int = 256 * MB
    """Bytes of request and response bodies the in-memory log keeps; past it the oldest
    entries go, as past --log-limit."""
    cache_bytes: int = 16 * MB
    """Bytes of request content (schemas, arguments) each cache of checked and generated
    results keeps; past it the least recently used go."""
    max_body: int = 10 * MB
    """The largest request body accepted; larger gets 413."""
    keep_alive: int = 360
    """Seconds an idle connection stays open for its next request: longer than the idle time
    of the pooled clients' defaults (OkHttp's 5 minutes the longest), so a client that
    pauses between requests never sends one on a connection the server has just closed."""
    max_number_digits: int = 1000
    """Digits one number of a request body may have; a longer one is the provider's 400."""
    max_schema_work: int = MAX_SCHEMA_WORK
    """Steps of work (schema nodes visited, keywords applied) the JSON Schemas of one request
    may cost, in conversion, generation and validation together; past it the provider's 400."""
    max_stall: float = 30.0
    """Seconds a stall fault holds a connection at most."""
    max_sessions: int = 10_000
    """Sessions whose attempt counters are kept; the least recently used beyond start afresh."""
    max_mcp_sessions: int = 1000
    """MCP sessions (the SDK's) open at once over HTTP, across every scripted server; past
    it the least recently used idle one is closed, and when all are busy a new one gets a
    JSON-RPC 503."""
    allow_host: tuple[str, ...] = ()
    """Host names, besides loopback and the bound address, the admin routes answer under."""
    state: str = "memory"
    """Where state shared between requests lives: "memory" (this process) or a Redis URL,
    redis://HOST:PORT/DB, shared by every process pointed at it (docs/scale.md)."""
    state_prefix: str = "mockllm"
    """The namespace of every key on a shared store: servers with one prefix share state."""
    state_ttl: int = 86_400
    """Seconds a shared store keeps a session's attempts and a stored response unused."""
    workers: int = 1
    """Processes serving one port; more than one needs a shared state, a Redis URL."""
    websocket: bool = True
    """Serve the Responses API over WebSocket too (Codex's default transport); off, an
    upgrade gets 426 and the client falls back to HTTP."""


DEFAULTS = ServerOptions()


def field_help(name: str) -> str:
    """The doc of field `name` as a flag's help: one line, lower case first, no full stop
    (argparse's own style), `%` kept literal for argparse's formatting."""
    doc = _field_docs().get(name, "")
    if doc[1:2].islower():
        doc = doc[0].lower() + doc[1:]
    return doc.removesuffix(".").replace("%", "%%")


@cache
def _field_docs() -> dict[str, str]:
    """The string under each field, read from this file (Python keeps no attribute docs),
    once per `mockllm` command: remembered across runs by the file's bytes (disk_cache),
    since parsing it with `ast` was about 2 % of a start's instructions."""
    try:
        source = Path(__file__).read_bytes()
    except OSError:  # installed without sources: flags without help rather than no flags
        return {}
    found = disk_cache.get("options", source)
    if isinstance(found, dict):
        return found
    docs = _docs_in(source)
    disk_cache.put("options", source, docs)
    return docs


def _docs_in(source: bytes) -> dict[str, str]:
    options = next(
        c
        for c in ast.parse(source).body
        if isinstance(c, ast.ClassDef) and c.name == "ServerOptions"
    )
    docs = {}
    for field, doc in pairwise(options.body):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(doc, ast.Expr)
            and isinstance(doc.value, ast.Constant)
            and isinstance(doc.value.value, str)
        ):
            docs[field.target.id] = " ".join(doc.value.value.split())
    return docs
