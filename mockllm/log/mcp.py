"""The log entry of an MCP request: the same log, session and limits as a model request
(docs/mcp.md). One entry per JSON-RPC message the fake received over HTTP (or stdio),
with what it was asked (`mcp.method`, `mcp.tool`, `mcp.arguments`) and what it answered
(`mcp.result`, `mcp.error`, `mcp.fault`)."""

from __future__ import annotations

import json
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


def received(journal: Journal, data: dict[str, Any]) -> McpEntry:
    """An entry a `mockllm mcp` stdio process logged elsewhere, opened in this log (numbered
    here, in order with the requests around it); the caller closes it."""
    entry = journal.open_as(McpEntry, str(data.get("path") or "stdio"), [], "POST")
    entry.session = str(data.get("session") or "default")
    entry.scenario = data.get("scenario") if isinstance(data.get("scenario"), str) else None
    request = data.get("request")
    entry.body = (request if isinstance(request, str) else json.dumps(request)).encode()
    entry.mcp = dict(data["mcp"])
    response = data.get("response") if isinstance(data.get("response"), dict) else {}
    status = response.get("status") if response else None
    entry.status = status if isinstance(status, int) else 200
    return entry


def transcript_lines(mcp: Any, seq: int, status: int | None, width: int) -> list[str]:
    """An MCP entry in a transcript: `harness → MCP orders/lookup_order({...}) → 'R'`.
    A notification is one short line; the transport's own requests (the GET stream,
    DELETE) are left out unless refused (they stay in the log)."""
    if not isinstance(mcp, dict):
        return [f"  mcp (log seq {seq}) · {status}"]
    server, method = mcp.get("server", "?"), mcp.get("method")
    head = f"  mcp (log seq {seq}) · server {server} · "
    error = mcp.get("error")
    if method == "tools/call":
        arguments = json.dumps(mcp.get("arguments") or {}, ensure_ascii=False)
        lines = [head + f"harness called {mcp.get('tool')}({_cut(arguments, 80)})"]
        if mcp.get("fault"):
            lines.append(f"     ~ mcp fault: {mcp['fault']}")
        if error:
            lines.append(
                f"     → JSON-RPC error {error.get('code')}: "
                + _cut(str(error.get("message")), width)
            )
        elif isinstance(mcp.get("result"), dict):
            result = mcp["result"]
            flag = " (isError)" if result.get("is_error") else ""
            lines.append(f"     → returned{flag}: {_cut(str(result.get('text', '')), width)}")
        else:
            lines.append("     → (no result: the call did not finish)")
        return lines
    if method is None:  # the GET stream, DELETE: shown only when refused
        return [head + f"refused: HTTP {status}"] if status and status >= 400 else []
    said = (
        f" → error {error.get('code')}: {_cut(str(error.get('message')), width)}" if error else ""
    )
    listed = f" → {', '.join(map(str, mcp['tools']))}" if mcp.get("tools") is not None else ""
    return [head + f"{method}{listed}{said}"]


def _cut(text: str, width: int) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"
