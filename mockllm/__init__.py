"""mockllm: an offline, deterministic fake LLM server for testing tool-calling harnesses."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .errors import ClientError, MockLLMError, Problem, RequestError, ScenarioError
from .loader import load_mapping, load_paths, load_text
from .scenario import Scenario

if TYPE_CHECKING:
    from .client import Client
    from .records import Check, LogEntry, LogResponse, Verdict
    from .server import RunningServer, serve
    from .session import Session

__version__ = "0.1.0"

# Imported on first use: `mockllm validate` and a plain `import mockllm` need neither
# uvicorn nor urllib.
_LAZY = {
    "Check": "records",
    "Client": "client",
    "LogEntry": "records",
    "LogResponse": "records",
    "RunningServer": "server",
    "Session": "session",
    "Verdict": "records",
    "serve": "server",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'mockllm' has no attribute {name!r}")


__all__ = [
    "Check",
    "Client",
    "ClientError",
    "LogEntry",
    "LogResponse",
    "MockLLMError",
    "Problem",
    "RequestError",
    "RunningServer",
    "Scenario",
    "ScenarioError",
    "Session",
    "Verdict",
    "__version__",
    "load_mapping",
    "load_paths",
    "load_text",
    "serve",
]
