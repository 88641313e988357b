"""Typed views of what the admin routes return: log entries, verdicts, scenario listings.

They are read from JSON (a server's `/_mockllm/requests`, a `--log` file), so they
reuse the neutral conversation dataclasses and tolerate fields they do not know yet;
`raw` always keeps the whole object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from mockllm.core.conversation import Message, Role, ToolCall, ToolResult
from mockllm.errors import Finding

Json = Mapping[str, Any]


@dataclass(frozen=True)
class LogResponse:
    """What mockllm answered to one request."""

    status: int
    finish: str | None = None
    # A valid reply that is still wrong (refusal, content_filter, empty, reasoning_only,
    # blocked_prompt: core/misbehaviour.py), else None.
    misbehaviour: str | None = None
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()  # with the ids as sent on this wire
    fault: Mapping[str, str] | None = field(default=None, compare=False)  # {kind, detail, why}
    error: Mapping[str, str] | None = field(default=None, compare=False)  # {kind, message}
    notes: tuple[str, ...] = ()
    bytes_sent: int = 0
    body: str = field(default="", repr=False)
    body_truncated: bool = False
    reasoning: str | None = None  # as the client could read it; None when the wire hid it
    # What the client got of a reply that did not arrive whole: text, reasoning, tool_calls
    # (name, arguments as delivered) and the cut {by, in}; None when it arrived whole.
    delivered: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    retry_after: float | None = None  # seconds an error answer asked the client to wait

    @classmethod
    def from_json(cls, data: Json) -> LogResponse:
        return cls(
            status=int(data["status"]),
            finish=data.get("finish"),
            misbehaviour=data.get("misbehaviour"),
            text=data.get("text"),
            tool_calls=tuple(_call(c) for c in data.get("tool_calls") or ()),
            fault=data.get("fault"),
            error=data.get("error"),
            notes=tuple(data.get("notes") or ()),
            bytes_sent=int(data.get("bytes_sent") or 0),
            body=data.get("body") or "",
            body_truncated=bool(data.get("body_truncated")),
            reasoning=data.get("reasoning"),
            delivered=data.get("delivered"),
            retry_after=data.get("retry_after"),
        )


@dataclass(frozen=True)
class LogEntry:
    """One request in the log (docs/http-api.md, "A log entry")."""

    seq: int
    time: str
    session: str | None
    scenario: str | None
    api: str | None
    path: str
    stream: bool
    turn: int | None
    attempt: int | None
    conversation: tuple[Message, ...]  # empty when the body did not parse
    tools: tuple[str, ...]  # names offered
    tool_results: tuple[ToolResult, ...]  # sent after the last assistant reply
    violations: tuple[Finding, ...]
    expectation_failures: tuple[Finding, ...]
    response: LogResponse | None  # None while the response is still being sent
    server_error: str | None = field(default=None, repr=False)  # a traceback
    duration_ms: float | None = None
    client_disconnected: bool = False
    headers: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    request: Any = field(default=None, compare=False, repr=False)  # the body as received
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    method: str = "POST"
    why: str | None = None  # which rule picked the turn (docs/scenarios.md)
    side: Mapping[str, str] | None = None  # a side request: {name, why, rules?}; turn is None
    run: str | None = None  # the run id the session name carries (`TEST-HASH~RUN`)
    epoch: str | None = None  # the use of the session it belongs to: a new one at each reset
    clients: tuple[str, ...] = ()  # two clients that used the session at the same time

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The calls mockllm sent in its reply (none for an error or a pending reply)."""
        return self.response.tool_calls if self.response else ()

    @classmethod
    def from_json(cls, data: Json) -> LogEntry:
        response = data.get("response")
        return cls(
            seq=int(data["seq"]),
            time=str(data.get("time", "")),
            session=data.get("session"),
            scenario=data.get("scenario"),
            api=data.get("api"),
            path=data.get("path", ""),
            stream=bool(data.get("stream")),
            turn=data.get("turn"),
            attempt=data.get("attempt"),
            conversation=tuple(_message(m) for m in data.get("conversation") or ()),
            tools=tuple(data.get("tools") or ()),
            tool_results=tuple(_result(r) for r in data.get("tool_results") or ()),
            violations=tuple(_finding(f) for f in data.get("violations") or ()),
            expectation_failures=tuple(_finding(f) for f in data.get("expectation_failures") or ()),
            response=LogResponse.from_json(response) if response else None,
            server_error=data.get("server_error"),
            duration_ms=data.get("duration_ms"),
            client_disconnected=bool(data.get("client_disconnected")),
            headers=data.get("headers") or {},
            request=data.get("request"),
            raw=data,
            method=str(data.get("method", "POST")),
            why=data.get("why"),
            side=data.get("side"),
            run=data.get("run"),
            epoch=data.get("epoch"),
            clients=tuple(data.get("clients") or ()),
        )


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool  # not failed: passed or waived
    message: str
    status: str = "passed"  # passed, failed or waived
    waived: str | None = None  # the reason, when waived


@dataclass(frozen=True)
class Verdict:
    """The server's judgement of a session's tool protocol (GET /_mockllm/verdict)."""

    session: str
    ok: bool
    checks: tuple[Check, ...]
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.ok)

    @classmethod
    def from_json(cls, data: Json) -> Verdict:
        checks = tuple(
            Check(
                str(c["name"]),
                bool(c["ok"]),
                str(c.get("message", "")),
                str(c.get("status") or ("passed" if c["ok"] else "failed")),
                c.get("waived"),
            )
            for c in data.get("checks") or ()
        )
        return cls(str(data["session"]), bool(data["ok"]), checks, data)

    @property
    def label(self) -> str:
        """The words every view shows: `✓ verdict: pass`, `✗ verdict: FAIL`."""
        return str(self.raw.get("label") or ("✓ verdict: pass" if self.ok else "✗ verdict: FAIL"))

    @property
    def waived(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.status == "waived")


def _call(data: Json) -> ToolCall:
    return ToolCall(str(data["id"]), str(data["name"]), str(data.get("arguments", "")))


def _result(data: Json) -> ToolResult:
    return ToolResult(
        str(data["call_id"]), str(data.get("content", "")), data.get("is_error"), data.get("paired")
    )


def _finding(data: Json) -> Finding:
    return Finding(str(data["rule"]), str(data["message"]))


def _message(data: Json) -> Message:
    return Message(
        role=cast(Role, data["role"]),
        text=data.get("text") or "",
        tool_calls=tuple(_call(c) for c in data.get("tool_calls") or ()),
        tool_results=tuple(_result(r) for r in data.get("tool_results") or ()),
        reasoning=data.get("reasoning"),
    )


@dataclass(frozen=True)
class ScenarioInfo:
    """One scenario a server serves, as `GET /_mockllm/scenarios` lists it."""

    name: str
    turns: int
    description: str = ""
    source: str = ""

    @classmethod
    def from_json(cls, data: Json) -> ScenarioInfo:
        return cls(
            name=str(data["name"]),
            turns=int(data["turns"]),
            description=str(data.get("description") or ""),
            source=str(data.get("source") or ""),
        )


@dataclass(frozen=True)
class ToolUse:
    """One tool call the model made (mockllm served it whole) and the result the harness
    sent back for it, if any (`GET /_mockllm/calls`; `Session.calls()`)."""

    id: str  # the call id as sent on this wire
    name: str
    arguments: str  # as the model sent them
    args: Any  # the arguments parsed; None when they are not JSON
    turn: int | None  # the turn whose reply made the call
    seq: int  # the log seq of the request that reply answered
    result: ToolResult | None  # what the harness sent back; None: never answered
    answered_in: int | None  # the log seq of the request that carried the result

    @classmethod
    def from_json(cls, data: Json) -> ToolUse:
        result = data.get("result")
        return cls(
            id=str(data["id"]),
            name=str(data["name"]),
            arguments=str(data.get("arguments", "")),
            args=data.get("args"),
            turn=data.get("turn"),
            seq=int(data["seq"]),
            result=None
            if result is None
            else ToolResult(
                str(data["id"]), str(result.get("content", "")), result.get("is_error")
            ),
            answered_in=data.get("answered_in"),
        )


class Calls(tuple[ToolUse, ...]):
    """Tool uses in the order the model made them; `.last`, `.first` (None when empty)."""

    @property
    def last(self) -> ToolUse | None:
        return self[-1] if self else None

    @property
    def first(self) -> ToolUse | None:
        return self[0] if self else None
