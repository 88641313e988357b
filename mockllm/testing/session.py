"""One session of a server: its URLs, its log, and the assertions over them.

This is what the pytest fixture `mockllm` yields (one session per test), and what
`Client.session(name)` gives a unittest or a script — one implementation for both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from mockllm.core.scenario import Flavor
from mockllm.judge import calls
from mockllm.log.allowances import ALLOWANCE
from mockllm.log.records import Calls, LogEntry, ToolUse, Verdict
from mockllm.testing import assertions

# The wire an SDK speaks, for its base URL: OpenAI's SDKs want `/v1` on it, Anthropic's
# and Google's (google-genai, @google/genai) add their own version path, and AWS's
# (boto3's endpoint_url, AnthropicBedrock's base_url) their `/model/{modelId}/...`, and
# `openai.AzureOpenAI` (its azure_endpoint) its `/openai/deployments/{deployment}/...`. On
# Vertex AI, google-genai adds `v1beta1/projects/...` itself, while AnthropicVertex's
# (and Claude Code's) base URL ends in `/v1`, as Google's regional endpoint does. Ollama's
# (ollama.Client's host, ChatOllama's base_url) add their `/api/...`.
Api = Literal[
    "openai",
    "anthropic",
    "gemini",
    "bedrock",
    "vertex-gemini",
    "vertex-anthropic",
    "azure",
    "ollama",
]
APIS: tuple[Api, ...] = get_args(Api)  # the names, written once
# The SDKs whose base URL carries `/v1`.
WITH_V1: tuple[Api, ...] = ("openai", "vertex-anthropic")
# YAML text (it has a newline), a file or folder path, or a scenario as a mapping.
ScenarioSource = str | Path | Mapping[str, Any]


class Server(Protocol):
    """What a session needs of its server: `Client` is the one implementation."""

    base_url: str

    def url(
        self,
        scenario: str,
        session: str | None = None,
        api: Api = "openai",
        flavor: Flavor | None = None,
    ) -> str: ...
    def add_scenario(self, source: ScenarioSource) -> str: ...
    def requests(
        self, session: str | None = None, scenario: str | None = None
    ) -> list[LogEntry]: ...
    def verdict(self, session: str, max_calls: int | None = None) -> Verdict: ...
    def clear(self, session: str | None = None) -> int: ...
    def allow(self, session: str, allow: Mapping[str, str], origin: str | None = None) -> None: ...
    def reset(self, session: str | None = None) -> int: ...
    def release(self, session: str) -> None: ...


class Session:
    def __init__(self, client: Server, name: str) -> None:
        self.client = client
        self.name = name
        self.allowed: dict[str, str] = {}  # the checks `allow` waived

    def __repr__(self) -> str:
        return f"<mockllm session {self.name!r} on {self.client.base_url}>"

    def url(self, scenario: str, api: Api = "openai", flavor: Flavor | None = None) -> str:
        """Base URL for an SDK, carrying this session: `{server}/s/{scenario}/{session}[/v1]`;
        `flavor` prefixes `/f/FLAVOR` (docs/flavours.md). Raises ClientError when the
        server has no scenario of that name."""
        __tracebackhide__ = True
        return self.client.url(scenario, self.name, api, flavor)

    def mcp_url(self, scenario: str, server: str) -> str:
        """The URL of a scripted MCP server of `scenario` (streamable HTTP), carrying this
        session: `{server}/s/{scenario}/{session}/mcp/{server}` (docs/mcp.md)."""
        return f"{self.client.base_url.rstrip('/')}/s/{scenario}/{self.name}/mcp/{server}"

    def add_scenario(self, source: ScenarioSource) -> str:
        """Scenarios are server-wide (sessions isolate requests, not scenarios)."""
        return self.client.add_scenario(source)

    def requests(
        self,
        scenario: str | None = None,
        *,
        turn: int | None = None,
        status: int | None = None,
        side: bool | None = None,
    ) -> list[LogEntry]:
        """This session's log entries in arrival order; only those of one `scenario`, at
        one `turn`, answered with one `status`, or (`side=True`/`False`) the side requests
        or the agent's own (an entry's `side` mark). `.request` is the body as parsed."""
        found = self.client.requests(self.name, scenario)
        return [
            e
            for e in found
            if e.api != ALLOWANCE  # the record of this session's allowance: no request
            and (turn is None or e.turn == turn)
            and (status is None or (e.response is not None and e.response.status == status))
            and (side is None or bool(e.raw.get("side")) == side)
        ]

    def calls(self, name: str | None = None, args: Mapping[str, Any] | None = None) -> Calls:
        """The tool calls the model made (of tool `name`; with `args`, a subset match of
        their parsed arguments), each with the result the harness sent back:
        `calls("refund").last.args["order_id"]`, `.result.content`."""
        uses = calls.matching(calls.tool_uses(e.raw for e in self.requests()), name, args)
        return Calls(ToolUse.from_json(u) for u in uses)

    def verdict(self, max_calls: int | None = None) -> Verdict:
        """The protocol verdict of this session (see `mockllm report`): every check with
        its outcome; `max_calls` as the route's."""
        return self.client.verdict(self.name, max_calls)

    def allow(self, allow: Mapping[str, str], origin: str | None = None) -> None:
        """Waive verdict checks for this session, each with its reason
        (`{"calls_answered": "the agent stops at max_steps"}`): the server's log records
        it (with `origin`, where it came from: `Session.allow()` unless said), so every
        view of the server and `mockllm report` on its `--log` show them as waived, not
        passed. Replaces what was given before; reset clears it."""
        self.client.allow(self.name, allow, origin or "Session.allow()")
        self.allowed = dict(allow)

    def clear(self) -> int:
        """Forget this session's log (attempt counters stay); returns entries deleted."""
        return self.client.clear(self.name)

    def reset(self) -> int:
        """A fresh start: this session's attempt counters, log and allowances; returns
        entries deleted."""
        self.allowed = {}
        return self.client.reset(self.name)

    def release(self) -> None:
        """Done with the session (the pytest fixture's teardown): another client may reset
        it now without the log calling it a clash."""
        self.client.release(self.name)

    def clash(self, entries: list[LogEntry] | None = None) -> str | None:
        """What says another client used this session since this one reset it, or None."""
        from mockllm.judge.uses import clash

        mine = getattr(self.client, "epochs", {}).get(self.name)
        found = self.requests() if entries is None else entries
        if mine is not None and any(e.epoch not in (None, mine) for e in found):
            return clash([{"epoch": mine}, *(e.raw for e in found)])
        return clash(e.raw for e in found)

    def transcript(self, full: bool = True) -> str:
        """This session's conversation, turn by turn, as the failing assertions show it;
        `full=False`: the last requests with shorter texts, as pytest's report shows it."""
        from mockllm.judge.transcript import transcript

        return transcript(self.logged(), self.name, full)

    def logged(self) -> list[LogEntry]:
        """Every entry of this session's log: its requests and its allowance's record,
        which the transcript and the verdict read."""
        return self.client.requests(self.name)

    def server_errors(self) -> list[LogEntry]:
        """Entries on which mockllm itself failed; each carries the server's traceback."""
        return [e for e in self.requests() if e.server_error]

    # --- assertions: each fails with this session's conversation -------------------------

    def assert_all_tool_calls_answered(self) -> None:
        """Every tool call the model made got a result in a later request, by its id."""
        __tracebackhide__ = True
        assertions.assert_all_tool_calls_answered(self.logged(), self.name)

    def assert_all_turns_served(self) -> None:
        """Every turn the session's scenarios script was served: the agent went the whole
        way (respx's assert_all_called). Not a verdict check: using part of a scenario is
        fine unless a test says otherwise."""
        __tracebackhide__ = True
        assertions.assert_all_turns_served(self.logged(), self.name)

    def assert_all_mcp_answers_served(self) -> None:
        """Every result the session's scripted MCP tools script answered a `tools/call`
        (aimock's MCP fakes fail on unconsumed entries): asked for, like
        `assert_all_turns_served`."""
        __tracebackhide__ = True
        assertions.assert_all_mcp_answers_served(self.logged(), self.name)

    def assert_no_unoffered_tool_executed(
        self, refusal: str | re.Pattern[str] | None = None
    ) -> None:
        """No call to a tool the request did not offer was executed (answered with a result
        that is not a refusal). `refusal`: a pattern marking a result as the harness's
        "no such tool" answer."""
        __tracebackhide__ = True
        assertions.assert_no_unoffered_tool_executed(self.logged(), self.name, refusal)

    def assert_model_calls(
        self, *, at_most: int | None = None, exactly: int | None = None, at_least: int | None = None
    ) -> None:
        """The number of model requests this session made is within the given bounds."""
        __tracebackhide__ = True
        entries = self.logged()
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
            self.logged(), tool, self.name, server=server, arguments=arguments, times=times
        )

    def assert_mcp_loop_closed(self) -> None:
        """Every model call to a scripted MCP tool ran there with its arguments before the
        harness answered it, the result sent back is what the tool returned, and no MCP
        tool ran that the model did not ask for: the verdict's `mcp_*` checks."""
        __tracebackhide__ = True
        assertions.assert_mcp_loop_closed(self.verdict(), self.logged(), self.name)

    def assert_tool_requested(
        self, name: str, args: Mapping[str, Any] | None = None, times: int | None = None
    ) -> Calls:
        """The model asked for tool `name` (with `args`: every key given, equal; others may
        be there too), at least once or exactly `times`. Says nothing of the harness running
        it: that is `assert_tool_result_fed_back`. Returns those calls."""
        __tracebackhide__ = True
        entries = self.logged()
        assertions.assert_tool_requested(entries, name, args, times, self.name)
        return self._calls(entries, name, args)

    def assert_tool_result_fed_back(
        self, name: str, args: Mapping[str, Any] | None = None, times: int | None = None
    ) -> Calls:
        """The model asked for tool `name` (with `args`), and the harness ran it and sent
        its result back: every such call was answered, by its id, in a later request (at
        least once, or exactly `times` calls). Returns those calls."""
        __tracebackhide__ = True
        entries = self.logged()
        assertions.assert_tool_result_fed_back(entries, name, args, times, self.name)
        return self._calls(entries, name, args)

    def assert_tool_called(
        self, name: str, args: Mapping[str, Any] | None = None, times: int | None = None
    ) -> Calls:
        """Deprecated: `assert_tool_requested`, the same check under an honest name (the
        model asked for the tool; whether it ran is `assert_tool_result_fed_back`)."""
        __tracebackhide__ = True
        assertions.warn_renamed("assert_tool_called", "assert_tool_requested")
        return self.assert_tool_requested(name, args, times)

    @staticmethod
    def _calls(entries: list[LogEntry], name: str, args: Mapping[str, Any] | None) -> Calls:
        uses = calls.matching(calls.tool_uses(e.raw for e in entries), name, args)
        return Calls(ToolUse.from_json(u) for u in uses)

    def assert_called_before(self, first: str, then: str) -> None:
        """`first` was called and its result sent back before the model called `then`."""
        __tracebackhide__ = True
        assertions.assert_called_before(self.logged(), first, then, self.name)

    def assert_result_reached_model(
        self, call: ToolUse | str, content: str | None = None, is_error: bool | None = None
    ) -> None:
        """The result of `call` (a `ToolUse` or its id) reached the model unchanged: a later
        request carried it (equal to `content`, the text your tool produced, if given; equal
        as JSON when both parse), flagged `is_error` if given, and kept it in the history."""
        __tracebackhide__ = True
        call_id = call if isinstance(call, str) else call.id
        assertions.assert_result_reached_model(self.logged(), call_id, content, is_error, self.name)

    def assert_clean_verdict(self) -> None:
        """Every check of the protocol verdict passed."""
        __tracebackhide__ = True
        assertions.assert_clean_verdict(self.verdict(), self.logged(), self.name)
