"""The verdict checks that close the tool loop (docs/mcp.md): did the harness really run
the MCP tool the model asked for, with its arguments, and send back what it returned?

Judged from a session's entries in their JSON form, both sides in one log: model entries
(`response.tool_calls`, the results in later histories) and MCP entries (`api: "mcp"`,
`mcp.method: tools/call`). Which model calls name a scripted MCP tool is known from the
scenario's `mcp_servers` when the server judges (`declared`), and otherwise from the
`tools/list` answers in the log (`mockllm report LOGFILE`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from mockllm.core.mcp import names_mcp_tool

EntryJson = dict[str, Any]
Declared = Mapping[str, Sequence[tuple[str, str]]]  # scenario → its (server, tool) pairs
MCP_CHECK_NAMES = (
    "mcp_calls_executed",
    "mcp_results_fed_back",
    "mcp_calls_asked",
    "mcp_answer_after_tool",
)


def split(entries: list[EntryJson]) -> tuple[list[EntryJson], list[EntryJson]]:
    """(model entries, MCP entries), each in log order."""
    model = [e for e in entries if e.get("api") != "mcp"]
    return model, [e for e in entries if e.get("api") == "mcp"]


def mcp_checks(
    model: list[EntryJson],
    mcp: list[EntryJson],
    says_error: Callable[[dict[str, Any], Any], bool],
    declared: Declared | None = None,
) -> list[dict[str, Any]]:
    """The four loop checks, when the session touched a scripted MCP tool (none otherwise,
    so a verdict without MCP keeps its checks). `says_error`: the verdict's reading of a
    result (and its entry's wire) as an error (judge/verdict.py)."""
    tools = _scripted_tools(model, mcp, declared or {})
    calls = list(_mcp_calls(model, tools))
    if not calls and not _executions(mcp):
        return []
    loop = _Loop(model, mcp, calls)
    return [
        _check("mcp_calls_executed", loop.not_executed()),
        _check("mcp_results_fed_back", loop.not_fed_back(says_error)),
        _check("mcp_calls_asked", loop.not_asked()),
        _check("mcp_answer_after_tool", loop.answered_before_tool()),
    ]


def _check(name: str, problems: Iterable[str]) -> dict[str, Any]:
    found = list(problems)
    return {"name": name, "ok": not found, "message": "; ".join(found)}


def _scripted_tools(
    model: list[EntryJson], mcp: list[EntryJson], declared: Declared
) -> set[tuple[str, str]]:
    tools = {pair for e in model for pair in declared.get(str(e.get("scenario")), ())}
    for e in mcp:
        info = e.get("mcp") or {}
        for name in info.get("tools") or ():
            tools.add((str(info.get("server")), str(name)))
    return tools


# A tool called from a code-mode script: `tools.NAME(` (Codex's `exec` names every nested
# tool so, e.g. `await tools.mcp__orders__lookup_order({...})`).
_SCRIPT_CALL = re.compile(r"\btools\.([A-Za-z_$][\w$]*)\s*\(")


def _executions(mcp: list[EntryJson]) -> list[EntryJson]:
    return [
        e
        for e in mcp
        if (e.get("mcp") or {}).get("method") == "tools/call" and e["mcp"].get("tool")
    ]


def _mcp_calls(
    model: list[EntryJson], tools: set[tuple[str, str]]
) -> Iterator[tuple[EntryJson, dict[str, Any], tuple[str, str]]]:
    """(entry, call, (server, tool)) for each call the model made, whole, to an MCP tool."""
    seen: set[str] = set()
    for e in model:
        response = e.get("response") or {}
        fault = (response.get("fault") or {}).get("kind")
        if response.get("status") != 200 or fault in ("truncate", "stream_error", "stall"):
            continue
        for call in response.get("tool_calls") or ():
            pair = next((p for p in sorted(tools) if names_mcp_tool(call["name"], *p)), None)
            if pair is not None and call["id"] not in seen:  # a retried turn repeats its ids
                seen.add(call["id"])
                yield e, call, pair


def _arguments(text: Any) -> Any:
    if not isinstance(text, str):
        return text if text is not None else {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def _label(entry: EntryJson, call: dict[str, Any]) -> str:
    return (
        f"{call['id']} ({call['name']}, turn {entry.get('turn')}, request (log seq {entry['seq']}))"
    )


class _Loop:
    """Each model call to an MCP tool paired with its execution and the result sent back."""

    def __init__(
        self,
        model: list[EntryJson],
        mcp: list[EntryJson],
        calls: list[tuple[EntryJson, dict[str, Any], tuple[str, str]]],
    ) -> None:
        self.model, self.calls = model, calls
        self.executions = _executions(mcp)
        self.paired: dict[str, EntryJson] = {}  # call id → the execution it got
        self.results: dict[str, tuple[EntryJson, dict[str, Any]]] = {}  # call id → result
        used: set[int] = set()
        for e, call, (server, tool) in calls:
            answered = self._result(e, call["id"])
            if answered is not None:
                self.results[call["id"]] = answered
            until = answered[0]["seq"] if answered else float("inf")
            wanted = _arguments(call.get("arguments"))
            for x in self.executions:
                info = x["mcp"]
                if (
                    x["seq"] > e["seq"]
                    and x["seq"] < until
                    and x["seq"] not in used
                    and info.get("server") == server
                    and info.get("tool") == tool
                    and (info.get("arguments") or {}) == wanted
                ):
                    used.add(x["seq"])
                    self.paired[call["id"]] = x
                    break
        self.used = used

    def _result(self, entry: EntryJson, call_id: str) -> tuple[EntryJson, dict[str, Any]] | None:
        for x in self.model:
            if x["seq"] <= entry["seq"]:
                continue
            for m in x.get("conversation") or ():
                for r in m.get("tool_results") or ():
                    if r.get("call_id") == call_id:
                        return x, r
        return None

    def not_executed(self) -> Iterator[str]:
        for e, call, (server, tool) in self.calls:
            if call["id"] in self.paired:
                continue
            answered = self.results.get(call["id"])
            ran = [
                x for x in self.executions if x["mcp"].get("tool") == tool and x["seq"] > e["seq"]
            ]
            what = f"{_label(e, call)} names MCP tool {server}/{tool}"
            if answered is None:
                yield f"{what}: it was never executed on the MCP server"
            elif ran and ran[0]["seq"] < answered[0]["seq"]:
                got = json.dumps(ran[0]["mcp"].get("arguments") or {}, ensure_ascii=False)
                yield (
                    f"{what}: the tool ran with other arguments ({got[:120]}, MCP entry "
                    f"log seq {ran[0]['seq']}) before request (log seq {answered[0]['seq']}) "
                    "answered it"
                )
            else:
                yield (
                    f"{what}: request (log seq {answered[0]['seq']}) answered it, but the tool "
                    "never ran before that (a result the tool did not produce)"
                )

    def not_fed_back(self, says_error: Callable[[dict[str, Any], Any], bool]) -> Iterator[str]:
        for e, call, _ in self.calls:
            execution, answered = self.paired.get(call["id"]), self.results.get(call["id"])
            if execution is None or answered is None:
                continue
            said_error = says_error(answered[1], answered[0].get("api"))
            problem = _fed_back_problem(execution["mcp"], answered[1], said_error)
            if problem:
                yield f"{_label(e, call)}: request (log seq {answered[0]['seq']}) {problem}"

    def not_asked(self) -> Iterator[str]:
        for x in self.executions:
            if x["seq"] not in self.used and not self._asked_by_script(x):
                info = x["mcp"]
                args = json.dumps(info.get("arguments") or {}, ensure_ascii=False)
                yield (
                    f"MCP entry (log seq {x['seq']}) called {info.get('server')}/{info.get('tool')}"
                    f"({args[:120]}), which no model call asked for"
                )

    def _asked_by_script(self, execution: EntryJson) -> bool:
        """Code mode (Codex's default model): the model calls one tool, `exec`, with a
        script that calls the MCP tool as `tools.NAME(…)`; that script asked for the call."""
        info = execution["mcp"]
        server, tool = str(info.get("server")), str(info.get("tool"))
        for e in self.model:
            if e["seq"] >= execution["seq"]:
                continue
            for call in (e.get("response") or {}).get("tool_calls") or ():
                script = call.get("arguments")
                named = _SCRIPT_CALL.findall(script) if isinstance(script, str) else ()
                if any(names_mcp_tool(n, server, tool) for n in named):
                    return True
        return False

    def answered_before_tool(self) -> Iterator[str]:
        for e, call, (server, tool) in self.calls:
            execution = self.paired.get(call["id"])
            for x in self.model:
                response = x.get("response") or {}
                if x["seq"] <= e["seq"] or response.get("status") != 200:
                    continue
                if response.get("tool_calls") or not response.get("text"):
                    continue
                if execution is None or execution["seq"] > x["seq"]:
                    yield (
                        f"request (log seq {x['seq']}) got the model's answer after "
                        f"{_label(e, call)}, but {server}/{tool} had not run by then"
                    )
                break


def _fed_back_problem(
    info: Mapping[str, Any], result: dict[str, Any], said_error: bool
) -> str | None:
    """What is wrong with the result a harness sent for a call the tool answered."""
    content = str(result.get("content", ""))
    error = info.get("error")
    returned = info.get("result") or {}
    if error:  # a JSON-RPC error: the harness must report an error, not a result
        if said_error or str(error.get("message")) in content:
            return None
        return (
            f"sent {content[:60]!r}, but the tool answered JSON-RPC error {error.get('code')} "
            f"({str(error.get('message'))[:60]!r}): not reported as an error"
        )
    text = str(returned.get("text", ""))
    structured = returned.get("structured")
    carried = (text and text[:2000] in content) or (
        structured is not None and _carries(content, structured)
    )
    if not carried and text.strip():
        return f"sent {content[:80]!r}, not what the tool returned ({text[:80]!r})"
    if returned.get("is_error") and result.get("is_error") is False:
        return "sent the tool's error result with is_error false"
    return None


def _carries(content: str, structured: Any) -> bool:
    try:
        return bool(json.loads(content) == structured)
    except ValueError:
        return json.dumps(structured, separators=(",", ":")) in content
