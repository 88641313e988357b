"""Every option of a server, with its one default.

`mockllm serve` builds its flags from these fields, and `build_app`, `mockllm.serve()`
and the pytest plugin (the `mockllm_server_options` fixture) all take this object, so a
new option is added here once and reaches every way of starting a server.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockllm.core.scenario import Chaos, Flavor, ValidationMode

MB = 1024 * 1024


@dataclass(frozen=True)
class ServerOptions:
    default: str | None = None
    """The scenario of requests whose URL names none."""
    validation: ValidationMode = "strict"
    """Provider history rules: reject (strict), log only (warn), skip (off)."""
    flavor: Flavor = "openai"
    """Chat Completions flavour: "deepseek" for DeepSeek's rules, texts and wire shape."""
    chaos: Chaos | None = None
    """Seeded random faults over every request."""
    seed: int = 0
    """The seed of the chaos draws."""
    real_time: bool = False
    """The real clock in `created` fields, instead of a fixed one."""
    log: str | None = None
    """Append every request to this file as JSON lines."""
    log_limit: int = 10_000
    """Log entries kept in memory (the `log` file keeps all)."""
    log_body_cap: int = 65_536
    """Response bytes kept per log entry."""
    max_body: int = 10 * MB
    """The largest request body accepted; larger gets 413."""
    max_number_digits: int = 1000
    """Digits one number of a request body may have; a longer one is the provider's 400."""
    max_stall: float = 30.0
    """Seconds a `stall` fault holds a connection at most."""
    max_sessions: int = 10_000
    """Sessions whose attempt counters are kept; the least recently used beyond go."""
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
    """Processes serving one port; more than one needs a shared `state`."""
    websocket: bool = True
    """Serve the Responses API over WebSocket too (Codex's default transport); off, an
    upgrade gets 426 and the client falls back to HTTP."""


DEFAULTS = ServerOptions()
