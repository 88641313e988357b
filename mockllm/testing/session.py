"""One session of a server: its URLs, its log, and the assertions over them.

This is what the pytest fixture `mockllm` yields (one session per test), and what
`Client.session(name)` gives a unittest or a script — one implementation for both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

from mockllm.log.records import LogEntry, Verdict
from mockllm.testing import assertions

Api = Literal["openai", "anthropic"]
# YAML text (it has a newline), a file or folder path, or a scenario as a mapping.
ScenarioSource = str | Path | Mapping[str, Any]


class Server(Protocol):
    """What a session needs of its server: `Client` is the one implementation."""

    base_url: str

    def url(self, scenario: str, session: str | None = None, api: Api = "openai") -> str: ...
    def add_scenario(self, source: ScenarioSource) -> str: ...
    def requests(
        self, session: str | None = None, scenario: str | None = None
    ) -> list[LogEntry]: ...
    def verdict(self, session: str, max_calls: int | None = None) -> Verdict: ...
    def clear(self, session: str | None = None) -> int: ...
    def reset(self, session: str | None = None) -> int: ...


class Session:
    def __init__(self, client: Server, name: str) -> None:
        self.client = client
        self.name = name

    def __repr__(self) -> str:
        return f"<mockllm session {self.name!r} on {self.client.base_url}>"

    def url(self, scenario: str, api: Api = "openai") -> str:
        """Base URL for an SDK, carrying this session: `{server}/s/{scenario}/{session}[/v1]`.
        Raises ClientError when the server has no scenario of that name."""
        __tracebackhide__ = True
        return self.client.url(scenario, self.name, api)

    def mcp_url(self, scenario: str, server: str) -> str:
        """The URL of a scripted MCP server of `scenario` (streamable HTTP), carrying this
        session: `{server}/s/{scenario}/{session}/mcp/{server}` (docs/mcp.md)."""
        return f"{self.client.base_url.rstrip('/')}/s/{scenario}/{self.name}/mcp/{server}"

    def add_scenario(self, source: ScenarioSource) -> str:
        """Scenarios are server-wide (sessions isolate requests, not scenarios)."""
        return self.client.add_scenario(source)

    def requests(self, scenario: str | None = None) -> list[LogEntry]:
        """This session's log entries in arrival order (of one scenario, if given)."""
        return self.client.requests(self.name, scenario)

    def verdict(self, max_calls: int | None = None) -> Verdict:
        """The protocol verdict of this session (see `mockllm report`): every check with
        its outcome; `max_calls` as the route's."""
        return self.client.verdict(self.name, max_calls)

    def clear(self) -> int:
        """Forget this session's log (attempt counters stay); returns entries deleted."""
        return self.client.clear(self.name)

    def reset(self) -> int:
        """A fresh start: this session's attempt counters and log; returns entries deleted."""
        return self.client.reset(self.name)

    def transcript(self, full: bool = True) -> str:
        """This session's conversation, turn by turn, as the failing assertions show it;
        `full=False`: the last requests with shorter texts, as pytest's report shows it."""
        from mockllm.log.transcript import transcript

        return transcript(self.requests(), self.name, full)

    def server_errors(self) -> list[LogEntry]:
        """Entries on which mockllm itself failed; each carries the server's traceback."""
        return [e for e in self.requests() if e.server_error]

    # --- assertions: each fails with this session's conversation -------------------------

    def assert_all_tool_calls_answered(self) -> None:
        """Every tool call the model made got a result in a later request, by its id."""
        __tracebackhide__ = True
        assertions.assert_all_tool_calls_answered(self.requests(), self.name)

    def assert_no_unoffered_tool_executed(
        self, refusal: str | re.Pattern[str] | None = None
    ) -> None:
        """No call to a tool the request did not offer was executed (answered with a result
        that is not a refusal). `refusal`: a pattern marking a result as the harness's
        "no such tool" answer."""
        __tracebackhide__ = True
        assertions.assert_no_unoffered_tool_executed(self.requests(), self.name, refusal)

    def assert_model_calls(
        self, *, at_most: int | None = None, exactly: int | None = None, at_least: int | None = None
    ) -> None:
        """The number of model requests this session made is within the given bounds."""
        __tracebackhide__ = True
        entries = self.requests()
        assertions.assert_model_calls(
            entries, self.name, at_most=at_most, exactly=exactly, at_least=at_least
        )

    def assert_tool_executed(
        self,
        tool: str,
        *,
        server: str | None = None,
        arguments: Mapping[str, Any] | None = None,
        times: int | None = None,
    ) -> None:
        """The harness ran scripted MCP tool `tool` (of `server`; with exactly these
        `arguments`; `times` times) on mockllm's MCP server (docs/mcp.md)."""
        __tracebackhide__ = True
        assertions.assert_tool_executed(
            self.requests(), tool, self.name, server=server, arguments=arguments, times=times
        )

    def assert_mcp_loop_closed(self) -> None:
        """Every model call to a scripted MCP tool ran there with its arguments before the
        harness answered it, the result sent back is what the tool returned, and no MCP
        tool ran that the model did not ask for: the verdict's `mcp_*` checks."""
        __tracebackhide__ = True
        assertions.assert_mcp_loop_closed(self.verdict(), self.requests(), self.name)

    def assert_clean_verdict(self) -> None:
        """Every check of the protocol verdict passed."""
        __tracebackhide__ = True
        assertions.assert_clean_verdict(self.verdict(), self.requests(), self.name)
