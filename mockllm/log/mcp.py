"""The log entry of an MCP request: the same log, session and limits as a model request
(docs/mcp.md). One entry per JSON-RPC message the fake received over HTTP (or stdio),
with what it was asked (`mcp.method`, `mcp.tool`, `mcp.arguments`) and what it answered
(`mcp.result`, `mcp.error`, `mcp.fault`, or `mcp.unfinished` when it never answered).

`asked`, `answered`, `failed` and `unfinished` write that record; both transports go
through them (serving/mcp.py), so a message logged over stdio reads as over HTTP.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from mockllm.log.journal import Journal, LiveEntry

# Text of a result kept in the log: a `huge_bytes` result is cut here, its size kept.
RESULT_TEXT_CAP = 64 * 1024


class McpEntry(LiveEntry):
    __slots__ = ("mcp",)

    def __init__(
        self, seq: int, path: str, headers: list[tuple[bytes, bytes]], method: str = "POST"
    ) -> None:
        super().__init__(seq, path, headers, method)
        self.api = "mcp"
        self.mcp: dict[str, Any] = {}

    def to_json(self) -> dict[str, Any]:
        shown = super().to_json()
        shown["mcp"] = self.mcp or None
        return shown


def result_summary(result: dict[str, Any]) -> dict[str, Any]:
    """A tool's wire result as the log keeps it: its text (capped), whether it is an error,
    its structured content, and how big it was."""
    texts = [
        str(block.get("text", ""))
        for block in result.get("content") or ()
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    text = "\n".join(texts)
    summary: dict[str, Any] = {
        "text": text[:RESULT_TEXT_CAP],
        "is_error": bool(result.get("isError")),
    }
    if len(text) > RESULT_TEXT_CAP:
        summary["text_chars"] = len(text)
    if result.get("structuredContent") is not None:
        summary["structured"] = result["structuredContent"]
    return summary


# --- the record of one message, on every transport -------------------------------------


def asked(server: str, method: str, request_id: Any, params: Any) -> dict[str, Any]:
    """What a message asked: its method and id, a call's tool and arguments, a read's
    target. Logged when the message arrives, so a call that never answers is still there."""
    params = params if isinstance(params, dict) else {}
    info: dict[str, Any] = {"server": server, "method": method}
    if request_id is not None:
        info["id"] = request_id
    if method == "tools/call":
        info["tool"] = params.get("name")
        info["arguments"] = params.get("arguments")
    elif method in ("resources/read", "prompts/get"):
        info["target"] = params.get("uri") or params.get("name")
    return info


def answered(info: dict[str, Any], result: Any) -> None:
    """What the message's handler returned: a call's result, a list's tool names."""
    if not isinstance(result, dict):
        return
    if info.get("method") == "tools/call":
        info["result"] = result_summary(result)
    elif info.get("method") == "tools/list":
        info["tools"] = [t.get("name") for t in result.get("tools") or ()]


def failed(info: dict[str, Any], code: int, message: str) -> None:
    """The JSON-RPC error the message was answered with."""
    info["error"] = {"code": code, "message": message[:500]}


def unfinished(info: dict[str, Any], why: str) -> None:
    """The message ended with no answer (a `drop` fault, a cancelled `hang`); the first
    reason given is kept."""
    info.setdefault("unfinished", why)


# --- entries a `mockllm mcp` stdio process sends to this server's log -----------------------

PENDING_MAX = 1000  # stdio entries opened and not yet closed, per server


def received(journal: Journal, data: dict[str, Any]) -> McpEntry:
    """An entry a `mockllm mcp` stdio process logged elsewhere, opened in this log (numbered
    here, in order with the requests around it); the caller closes it."""
    entry = journal.open_as(McpEntry, str(data.get("path") or "stdio"), [], "POST")
    entry.session = str(data.get("session") or "default")
    entry.scenario = data.get("scenario") if isinstance(data.get("scenario"), str) else None
    request = data.get("request")
    entry.body = (request if isinstance(request, str) else json.dumps(request)).encode()
    _update(entry, data)
    return entry


def _update(entry: McpEntry, data: dict[str, Any]) -> None:
    entry.mcp = dict(data["mcp"])
    response = data.get("response") if isinstance(data.get("response"), dict) else {}
    status = response.get("status") if response else None
    entry.status = status if isinstance(status, int) else 200


class StdioEntries:
    """The stdio entries of this log still open: a message is logged when it arrives
    (`"pending": true`: numbered then, in order with the model requests around it, as over
    HTTP) and closed by a second post naming its `seq` with what was answered. A call
    that hangs or drops is so in the log from the moment it was asked."""

    def __init__(self, limit: int = PENDING_MAX) -> None:
        self._open: OrderedDict[int, McpEntry] = OrderedDict()
        self._limit = limit

    def take(self, journal: Journal, data: dict[str, Any]) -> tuple[McpEntry, bool]:
        """(the entry, whether to close it now)."""
        pending, seq = data.get("pending") is True, data.get("seq")
        found = self._open.pop(seq, None) if isinstance(seq, int) and not pending else None
        if found is not None:
            _update(found, data)
            return found, True
        entry = received(journal, data)
        if not pending:
            return entry, True
        entry.status = None  # in flight, as an HTTP request is until answered
        self._open[entry.seq] = entry
        if len(self._open) > self._limit:  # a process that died mid-call never closes its own
            _, lost = self._open.popitem(last=False)
            unfinished(lost.mcp, "the stdio process never said how this message ended")
            lost.status = 200
            journal.close(lost)
        return entry, False
