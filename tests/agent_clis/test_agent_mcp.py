"""MCP servers through the real agent CLIs (docs/agents.md, docs/mcp.md): Claude Code and
Codex, each run by its `*-mcp` recipe of docs/agents.md, offline as in test_agent_clis.py.

- A team's own MCP server (shelf_server.py, the official `mcp` SDK's MCPServer over stdio):
  the model calls its tool, the tool really runs (it records the call), and the next model
  request carries what the tool returned.
- mockllm's own scripted MCP server (the fake of docs/mcp.md) over streamable HTTP (and,
  for Claude Code, `mockllm mcp` over stdio): the loop closes in the verdict; and tool-side
  faults (a JSON-RPC error, a tool that never answers, a dropped call) with what each CLI
  sends back to the model and its exit code asserted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from .cli_run import BIN, HERE, ROOT, Run, unshare
from .test_agent_clis import go, needs, parallel, report_ok, statuses

pytestmark = pytest.mark.skipif(
    unshare() is None,
    reason="needs a network namespace (unshare -n as root, or unshare -rn)",
)

SHELF = HERE / "shelf_server.py"
SCENARIOS = HERE / "scenarios"
QUESTION = "Where is my order A1?"
# The code shelf_server.py computes for "Dune" (the first 8 hex digits of its SHA-256):
# the model cannot know it, so seeing it in a request means the tool ran and was fed back.
DUNE = "SH-baa25eb4"


def shelf_calls(run: Run) -> list[str]:
    assert run.log is not None
    calls = run.log.parent / "shelf-calls.txt"
    return calls.read_text().splitlines() if calls.exists() else []


def mcp_entries(run: Run, method: str | None = None) -> list[dict[str, Any]]:
    found = [e for e in run.entries if e.get("api") == "mcp"]
    return [e for e in found if method is None or e["mcp"].get("method") == method]


def verdict(run: Run) -> dict[str, dict[str, Any]]:
    """`mockllm report`'s verdict of the run's one session, its checks by name (from the
    log file alone, as CI would run it)."""
    from mockllm.judge.verdict import verdict as judge

    result = judge("run", run.entries, 50)
    return {c["name"]: c for c in result["checks"]}


def loop_checks(run: Run) -> dict[str, bool]:
    return {name: c["ok"] for name, c in verdict(run).items() if name.startswith("mcp_")}


# --- Claude Code ---------------------------------------------------------------------------


def claude(tmp: Path, scenario: str, servers: dict[str, Any], **variables: str) -> Run:
    config = json.dumps({"mcpServers": servers})
    return go(tmp, "claude-code-mcp", scenario, QUESTION, MCP_CONFIG=config, **variables)


MCP_DOC = (ROOT / "docs" / "mcp.md").read_text()


def doc_config(name: str, scenario: str) -> str:
    """docs/mcp.md's ```LANG file=NAME block, pointed at this run: its server, scenario and
    session, the scenarios directory, and `mockllm` run by this Python."""
    block = MCP_DOC.split(f" file={name}\n", 1)[1].split("```", 1)[0]
    block = block.replace("http://127.0.0.1:8000", "{url}").replace("orders-loop", scenario)
    block = block.replace("run-1", "run").replace('"orders.yaml"', json.dumps(str(SCENARIOS)))
    return block


def fake_http(scenario: str) -> dict[str, Any]:
    servers: dict[str, dict[str, Any]] = json.loads(doc_config("claude-code-mcp.json", scenario))
    return servers["mcpServers"]


def fake_stdio(scenario: str) -> dict[str, Any]:
    servers: dict[str, dict[str, Any]] = json.loads(
        doc_config("claude-code-mcp-stdio.json", scenario)
    )
    orders = servers["mcpServers"]["orders"]
    assert orders["command"] == "mockllm"
    # This Python's mockllm (the tree under test), not whatever `mockllm` is on a PATH.
    orders.update(command=sys.executable, args=["-m", "mockllm", *orders["args"]])
    orders["env"] = {"PYTHONPATH": str(ROOT)}
    return servers["mcpServers"]


def test_claude_code_with_mcp_servers(tmp_path: Path) -> None:
    needs(BIN / "claude")
    marker = str(tmp_path / "shelf" / "shelf-calls.txt")
    shelf = {"shelf": {"command": sys.executable, "args": [str(SHELF), marker]}}
    stdio = fake_stdio("claude-code-mcp-fake")
    real, http, over_stdio, error, hang, drop = parallel(
        lambda: go(
            tmp_path / "shelf",
            "claude-code-mcp",
            "claude-code-mcp-shelf",
            "Which shelf is Dune on?",
            MCP_CONFIG=json.dumps({"mcpServers": shelf}),
            MCP_SERVER="shelf",
        ),
        lambda: claude(
            tmp_path / "http",
            "claude-code-mcp-fake",
            fake_http("claude-code-mcp-fake"),
            MCP_SERVER="orders",
        ),
        lambda: claude(tmp_path / "stdio", "claude-code-mcp-fake", stdio, MCP_SERVER="orders"),
        lambda: claude(
            tmp_path / "error",
            "claude-code-mcp-error",
            fake_http("claude-code-mcp-error"),
            MCP_SERVER="orders",
        ),
        lambda: claude(
            tmp_path / "hang",
            "claude-code-mcp-hang",
            fake_http("claude-code-mcp-hang"),
            MCP_SERVER="orders",
            MCP_TOOL_TIMEOUT="2000",
        ),
        lambda: claude(
            tmp_path / "drop",
            "claude-code-mcp-drop",
            fake_http("claude-code-mcp-drop"),
            MCP_SERVER="orders",
            MCP_TOOL_TIMEOUT="3000",
        ),
    )
    # A team's own server: offered as mcp__shelf__shelf_code from the first request
    # (MCP_CONNECTION_NONBLOCKING=false), run once, and what it returned is the tool result
    # of the next request. Claude Code sends the structured content's JSON, not the text.
    assert real.returncode == 0, real.describe()
    assert statuses(real) == [(0, 200), (1, 200)], real.describe()
    assert shelf_calls(real) == [f"Dune\t{DUNE}"]
    (result,) = real.model_requests()[1]["tool_results"]
    assert result["is_error"] is False
    assert json.loads(result["content"]) == {"result": f"Dune is on shelf {DUNE}"}
    assert json.loads(real.stdout)["result"] == "Dune is on the shelf the tool named."
    report_ok(real)

    # The fake, over HTTP and over stdio (`mockllm mcp --url` logs into the server's log):
    # the scripted result is fed back (`from_mcp`) and the loop closes in the verdict.
    for run in (http, over_stdio):
        assert run.returncode == 0, run.describe()
        assert statuses(run) == [(0, 200), (1, 200)], run.describe()
        (call,) = mcp_entries(run, "tools/call")
        assert call["mcp"]["arguments"] == {"order_id": "A1"}
        assert call["seq"] < run.model_requests()[1]["seq"]
        assert loop_checks(run) == dict.fromkeys(
            [
                "mcp_calls_executed",
                "mcp_results_fed_back",
                "mcp_calls_asked",
                "mcp_answer_after_tool",
            ],
            True,
        ), run.describe()
        report_ok(run)
    assert {e["mcp"]["transport"] for e in mcp_entries(over_stdio)} == {"stdio"}
    assert {e["mcp"]["transport"] for e in mcp_entries(http)} == {"streamable-http"}

    # A JSON-RPC error: Claude Code sends the model an is_error result carrying the error's
    # message, and goes on (exit 0); the verdict counts it as an error reported back.
    assert error.returncode == 0, error.describe()
    assert statuses(error) == [(0, 200), (1, 200)], error.describe()
    (result,) = error.model_requests()[1]["tool_results"]
    assert result["is_error"] is True and "database is down" in result["content"]
    assert loop_checks(error)["mcp_results_fed_back"] is True
    report_ok(error)

    # A tool that never answers: after MCP_TOOL_TIMEOUT (2 s here) an is_error result
    # saying it timed out; exit 0.
    assert hang.returncode == 0, hang.describe()
    assert statuses(hang) == [(0, 200), (1, 200)], hang.describe()
    (result,) = hang.model_requests()[1]["tool_results"]
    assert result["is_error"] is True
    assert 'tool "lookup_order" timed out after 2s' in result["content"], hang.describe()

    # The call's response aborted mid-call: Claude Code does not notice the dropped
    # connection; the call is answered as timed out once MCP_TOOL_TIMEOUT (3 s) is up.
    assert drop.returncode == 0, drop.describe()
    assert statuses(drop) == [(0, 200), (1, 200)], drop.describe()
    (result,) = drop.model_requests()[1]["tool_results"]
    assert result["is_error"] is True
    assert 'tool "lookup_order" timed out after 3s' in result["content"], drop.describe()


def test_claude_code_finds_an_mcp_tool_by_tool_search(tmp_path: Path) -> None:
    """Claude Code's default configuration (tool search on): the MCP tool is deferred
    behind its `ToolSearch` and absent from `tools` until a search found it. The scenario
    scripts the search in one line (`search_tools`), Claude Code answers it with a
    `tool_reference` and offers the tool from then on; the call reaches the fake."""
    needs(BIN / "claude")
    scenario = "claude-code-mcp-search"
    run = claude(tmp_path, scenario, fake_http(scenario), MCP_SERVER="orders", TOOL_SEARCH="1")
    assert run.returncode == 0, run.describe()
    assert statuses(run) == [(0, 200), (1, 200), (2, 200)], run.describe()
    first, second, _ = run.model_requests()
    # Deferred at first: named only in a system message, the placeholder alone deferred.
    assert "mcp__orders__lookup_order" not in first["tools"], run.describe()
    deferred = [t["name"] for t in first["request"]["tools"] if t.get("defer_loading")]
    assert "mcp__orders__lookup_order" not in deferred
    (use,) = [b for b in first_reply(run) if b["type"] == "tool_use"]
    assert use["name"] == "ToolSearch"
    assert use["input"] == {"query": "select:mcp__orders__lookup_order"}
    # Found: sent with defer_loading, offered (the tool_reference is in the history).
    sent = {t["name"]: t for t in second["request"]["tools"]}
    assert sent["mcp__orders__lookup_order"].get("defer_loading") is True
    assert "mcp__orders__lookup_order" in second["tools"]
    (result,) = second["tool_results"]
    assert result["content"] == "tool_reference: mcp__orders__lookup_order"
    (call,) = mcp_entries(run, "tools/call")
    assert call["mcp"]["arguments"] == {"order_id": "A1"}
    assert all(loop_checks(run).values()) and loop_checks(run), run.describe()
    report_ok(run)


def first_reply(run: Run) -> list[dict[str, Any]]:
    """The content blocks of the assistant's first reply, as the second request carries it."""
    messages = run.model_requests()[1]["request"]["messages"]
    reply = next(m for m in messages if m["role"] == "assistant")
    content: list[dict[str, Any]] = reply["content"]
    return content


# --- Codex -----------------------------------------------------------------------------------


# The fault tests run a model that calls MCP tools directly (no tool search, no code mode).
DIRECT = "-m gpt-4.1"


def codex(tmp: Path, scenario: str, toml: str, server: str = "orders", **variables: str) -> Run:
    variables.setdefault("CODEX_FLAGS", DIRECT)
    return go(tmp, "codex-mcp", scenario, QUESTION, MCP_TOML=toml, MCP_SERVER=server, **variables)


def fake_toml(scenario: str) -> str:
    """docs/mcp.md's Codex config for the fake, without its table header (the recipe
    writes it) and its timeouts (the recipe sets them)."""
    lines = doc_config("codex-mcp.toml", scenario).splitlines()
    assert lines[0] == "[mcp_servers.orders]"
    return "\n".join(line for line in lines[1:] if "timeout" not in line)


def test_codex_with_mcp_servers(tmp_path: Path) -> None:
    needs(BIN / "codex")
    marker = tmp_path / "shelf" / "shelf-calls.txt"
    shelf = (
        f"command = {json.dumps(sys.executable)}\nargs = {json.dumps([str(SHELF), str(marker)])}"
    )
    real, http, error, hang, drop = parallel(
        lambda: go(
            tmp_path / "shelf",
            "codex-mcp",
            "codex-mcp-shelf",
            "Which shelf is Dune on?",
            MCP_TOML=shelf,
            MCP_SERVER="shelf",
            CODEX_FLAGS=DIRECT,
        ),
        lambda: codex(tmp_path / "http", "codex-mcp-fake", fake_toml("codex-mcp-fake")),
        lambda: codex(tmp_path / "error", "codex-mcp-error", fake_toml("codex-mcp-error")),
        lambda: codex(
            tmp_path / "hang",
            "codex-mcp-hang",
            fake_toml("codex-mcp-hang"),
            MCP_TOOL_TIMEOUT_SEC="2",
        ),
        lambda: codex(
            tmp_path / "drop",
            "codex-mcp-drop",
            fake_toml("codex-mcp-drop"),
            MCP_TOOL_TIMEOUT_SEC="3",
        ),
    )
    # A team's own server: from the second request on, offered in a `namespace` tool;
    # the call goes out as namespace mcp__shelf + shelf_code, the tool runs once, and its
    # output (structured content's JSON, after Codex's "Wall time" header) is fed back.
    assert real.returncode == 0, real.describe()
    assert statuses(real) == [(0, 200), (1, 200), (2, 200)], real.describe()
    assert shelf_calls(real) == [f"Dune\t{DUNE}"]
    second = real.model_requests()[1]
    assert "mcp__shelf__shelf_code" in second["tools"]
    (result,) = real.model_requests()[2]["tool_results"]
    assert f'{{"result":"Dune is on shelf {DUNE}"}}' in result["content"]
    report_ok(real)

    # The fake over streamable HTTP: listed once, offered from the second request on; the
    # scripted result is fed back and the loop closes.
    assert http.returncode == 0, http.describe()
    assert statuses(http) == [(0, 200), (1, 200), (2, 200)], http.describe()
    (listed,) = mcp_entries(http, "tools/list")
    assert listed["seq"] < http.model_requests()[1]["seq"]
    assert all(loop_checks(http).values()) and loop_checks(http), http.describe()
    report_ok(http)

    # A JSON-RPC error: Codex feeds the model a plain output (no error flag on the wire)
    # carrying the error's message, and goes on (exit 0).
    assert error.returncode == 0, error.describe()
    assert statuses(error) == [(0, 200), (1, 200), (2, 200)], error.describe()
    (result,) = error.model_requests()[2]["tool_results"]
    assert "tool call failed for `orders/lookup_order`" in result["content"]
    assert "Mcp error: -32000: database is down" in result["content"]
    assert loop_checks(error)["mcp_results_fed_back"] is True
    report_ok(error)

    # A tool that never answers: after tool_timeout_sec (2 s here) an output saying it
    # timed out; exit 0.
    assert hang.returncode == 0, hang.describe()
    assert statuses(hang) == [(0, 200), (1, 200), (2, 200)], hang.describe()
    (result,) = hang.model_requests()[2]["tool_results"]
    assert "timed out awaiting tools/call after 2s" in result["content"], hang.describe()

    # The call's response aborted mid-call: Codex sees it at once ("Transport closed",
    # unlike Claude Code, which waits for its tool timeout) and feeds that back; exit 0.
    assert drop.returncode == 0, drop.describe()
    assert statuses(drop) == [(0, 200), (1, 200), (2, 200)], drop.describe()
    (result,) = drop.model_requests()[2]["tool_results"]
    assert "Transport closed" in result["content"], drop.describe()


def test_codex_uses_an_mcp_tool_on_its_default_model_and_by_tool_search(tmp_path: Path) -> None:
    """No model pinned: Codex's default model calls the MCP tool from an `exec` script (code
    mode); `-m gpt-5.5` finds it by its client-side Responses tool search first, scripted
    as `search_tools`. Both reach the fake and pass `mockllm report`."""
    needs(BIN / "codex")
    default, search = parallel(
        lambda: codex(
            tmp_path / "default", "codex-mcp-exec", fake_toml("codex-mcp-exec"), CODEX_FLAGS=""
        ),
        lambda: codex(
            tmp_path / "search",
            "codex-mcp-search",
            fake_toml("codex-mcp-search"),
            CODEX_FLAGS="-m gpt-5.5",
        ),
    )
    for run in (default, search):
        assert run.returncode == 0, run.describe()
        (call,) = mcp_entries(run, "tools/call")
        assert call["mcp"]["arguments"] == {"order_id": "A1"}
        report_ok(run)
    # The default model: no tools field, `exec` in the additional_tools item, the MCP tool
    # deferred (not described to the model); the script's output is the MCP result.
    assert statuses(default) == [(0, 200), (1, 200), (2, 200)], default.describe()
    first = default.model_requests()[0]
    assert first["request"].get("tools") in (None, []) and "exec" in first["tools"]
    (result,) = default.model_requests()[2]["tool_results"]
    assert "Order A1: shipped on 2026-11-30" in result["content"]
    # gpt-5.5: the search goes out as a client tool_search_call; Codex's tool_search_output
    # loads the namespace, offered from then on (here and after previous_response_id).
    assert statuses(search) == [(0, 200), (1, 200), (2, 200), (3, 200)], search.describe()
    _, asked, loaded, last = search.model_requests()
    assert "tool_search" in asked["tools"]
    assert "mcp__orders__lookup_order" not in asked["tools"]
    (found,) = loaded["tool_results"]
    assert found["content"] == "tool_search_output: mcp__orders__lookup_order"
    assert "mcp__orders__lookup_order" in loaded["tools"]
    assert "mcp__orders__lookup_order" in last["tools"], search.describe()
