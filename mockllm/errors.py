"""Exceptions raised by mockllm itself (not the provider-shaped errors it serves).

MockLLMError
├── ScenarioError      a scenario file or mapping is wrong: where, and what was allowed
├── RequestError       an incoming request cannot be answered; rendered by the adapter
│   └── SchemaTooCostly   (core/schema_budget.py) a JSON Schema past --max-schema-work
├── GenerateError      (generate.py) a tool schema cannot produce the asked arguments
└── ClientError        `mockllm.Client`: the server refused an admin request, or is unreachable
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class Finding:
    """A named problem with a request (an expectation failure, a rule violation), for the log."""

    rule: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "message": self.message}


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """ "; did you mean 'x'?" for a close name, else nothing."""
    import difflib  # deferred: only a mistyped name needs it

    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


class MockLLMError(Exception):
    """Base class of every error mockllm raises."""


@dataclass(frozen=True)
class Problem:
    """One authoring mistake, located as precisely as the source allows."""

    source: str  # file path, or "<mapping>" for scenarios built in Python
    path: str  # YAML path such as "turns[0].reply.finish"; "" for the document
    message: str
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based

    def with_message(self, message: str) -> Problem:
        return replace(self, message=message)

    def __str__(self) -> str:
        where = self.source
        if self.line is not None:
            where += f":{self.line}:{self.column}"
        at = f" {self.path}:" if self.path else ""
        return f"{where}:{at} {self.message}"


class ScenarioError(MockLLMError):
    """One or more problems in scenario sources; loading is all-or-nothing."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class RequestError(MockLLMError):
    """A request mockllm refuses; `kind` is the stable name used in the log."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        kind: str = "invalid_request",
        param: str | None = None,
        code: str | None = None,
        error_type: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
        filtered: tuple[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.param = param
        self.code = code
        self.error_type = error_type  # the provider's error `type`; None: derived from status
        self.headers = headers
        self.filtered = filtered  # Azure's prompt filter: (category, severity) it flagged


class WireError(MockLLMError):
    """A third-party wire (entry-point group `mockllm.wires`) could not be loaded."""


class ClientError(MockLLMError):
    """An admin request failed; `status` is None when the server could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
