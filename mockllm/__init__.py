"""mockllm: an offline, deterministic fake LLM server for testing tool-calling harnesses."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from mockllm._version import __version__
from mockllm.core.compiled import remembered as _remembered

with _remembered():  # the dataclasses they make take code compiled at an earlier start
    from mockllm.core.scenario import Scenario
    from mockllm.errors import ClientError, MockLLMError, Problem, RequestError, ScenarioError
    from mockllm.loading.loader import load_mapping, load_paths, load_text

if TYPE_CHECKING:
    from mockllm.log.records import Check, LogEntry, LogResponse, ScenarioInfo, Verdict
    from mockllm.options import ServerOptions
    from mockllm.testing.background import RunningServer, serve
    from mockllm.testing.client import Client
    from mockllm.testing.session import Session


# Imported on first use: `mockllm validate` and a plain `import mockllm` need neither
# uvicorn nor urllib.
_LAZY = {
    "Check": "log.records",
    "Client": "testing.client",
    "LogEntry": "log.records",
    "LogResponse": "log.records",
    "RunningServer": "testing.background",
    "ScenarioInfo": "log.records",
    "ServerOptions": "options",
    "Session": "testing.session",
    "Verdict": "log.records",
    "serve": "testing.background",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'mockllm' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The lazy names too (PEP 562), so `dir(mockllm)` lists all of `__all__`."""
    return sorted({*globals(), *_LAZY})


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
    "ScenarioInfo",
    "ServerOptions",
    "Session",
    "Verdict",
    "__version__",
    "load_mapping",
    "load_paths",
    "load_text",
    "serve",
]
