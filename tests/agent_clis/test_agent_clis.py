"""The agent CLIs, unchanged, against `mockllm serve` (docs/agents.md): each CLI's happy path
runs its own shell or file tool for real (the file exists), on its default transport, and
one failure scenario asserts what the CLI does. Every run is offline: the CLI and the
server share a network namespace with only loopback (cli_run.py), and the recipe turns off
telemetry, update checks and model lists. The runs of one CLI go in parallel.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from . import recipes
from .cli_run import AGENTS_VENV, BIN, Run, base_env, run, unshare

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
WRITE = "Write made.txt in this directory."

pytestmark = pytest.mark.skipif(
    unshare() is None,
    reason="needs a network namespace (unshare -n as root, or unshare -rn): the agent CLIs "
    "only run where nothing but loopback is reachable",
)


def needs(binary: Path) -> None:
    if not binary.exists():
        # A failure, not a skip: `make test` installs every CLI, so a missing one is a
        # broken install step that a skip would hide.
        pytest.fail(f"{binary} is not installed (make test installs it)")


def go(
    tmp: Path,
    recipe: str,
    scenario: str,
    prompt: str = WRITE,
    serve_args: list[str] | None = None,
    **variables: str,
) -> Run:
    """Run recipe `recipe` once against `scenario` (session `run`) in a fresh directory."""
    home = tmp / "home"
    home.mkdir(parents=True)
    env = base_env(home)
    env["MOCKLLM_URL"] = "{url}/s/" + scenario + "/run"
    argv = ["sh", "-c", recipes.script(recipe, prompt, **variables)]
    return run(tmp, argv, env, [str(SCENARIOS)], timeout=180, serve_args=serve_args)


def parallel(*jobs: Callable[[], Run]) -> list[Run]:
    with ThreadPoolExecutor(len(jobs)) as pool:
        return [f.result() for f in [pool.submit(job) for job in jobs]]


def made(result: Run, text: str) -> None:
    """The CLI's own tool wrote the file."""
    assert result.log is not None
    target = result.log.parent / "work" / "made.txt"
    assert target.exists(), result.describe()
    assert target.read_text().strip() == text


def report_ok(result: Run) -> None:
    assert result.log is not None
    done = subprocess.run(
        [sys.executable, "-m", "mockllm", "report", str(result.log)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + result.describe()


def statuses(result: Run) -> list[tuple[int | None, int]]:
    """(turn, status) of each agent request: side requests (a title, a router) are apart."""
    return [
        (e["turn"], e["response"]["status"]) for e in result.model_requests() if not e.get("side")
    ]


def agent(result: Run) -> list[dict[str, Any]]:
    """The agent requests, side requests left out."""
    return [e for e in result.model_requests() if not e.get("side")]


def sides(result: Run) -> list[str]:
    """The side rule that answered each side request, in order (docs/scenarios.md)."""
    return [e["side"]["name"] for e in result.model_requests() if e.get("side")]


# --- Claude Code ---------------------------------------------------------------------------


def test_claude_code(tmp_path: Path) -> None:
    needs(BIN / "claude")
    happy, unknown = parallel(
        lambda: go(tmp_path / "happy", "claude-code", "claude-code-bash"),
        lambda: go(tmp_path / "unknown", "claude-code", "claude-code-unknown-tool", "Clean up."),
    )
    # Its default model (claude-opus-5-5 here) with thinking on: a system message inside
    # `messages` and the signed placeholder thinking block, both accepted.
    assert happy.returncode == 0, happy.describe()
    made(happy, "made by claude")
    assert statuses(happy) == [(0, 200), (1, 200)], happy.describe()
    first = happy.model_requests()[0]
    assert first["request"]["thinking"]["type"] in ("adaptive", "enabled")
    assert "system" in [m["role"] for m in first["request"]["messages"]]
    report_ok(happy)
    # A tool it does not offer: it answers the call with an is_error result and goes on.
    assert unknown.returncode == 0, unknown.describe()
    assert statuses(unknown) == [(0, 200), (1, 200)], unknown.describe()
    (result,) = unknown.model_requests()[1]["tool_results"]
    assert result["is_error"] is True and "DeleteEverything" in result["content"]
    assert "nothing was deleted" in unknown.stdout
    report_ok(unknown)


def test_claude_code_on_bedrock(tmp_path: Path) -> None:
    needs(BIN / "claude")
    result = go(tmp_path, "claude-code-bedrock", "claude-code-bash")
    assert result.returncode == 0, result.describe()
    made(result, "made by claude")
    assert statuses(result) == [(0, 200), (1, 200)], result.describe()
    entries = agent(result)
    # Bedrock's InvokeModel stream, an Anthropic body with no model (it is in the path).
    assert {e["api"] for e in entries} == {"bedrock-invoke"}, result.describe()
    assert all("/invoke-with-response-stream" in e["path"] for e in entries), result.describe()
    assert "model" not in entries[0]["request"]
    report_ok(result)


def test_claude_code_on_vertex(tmp_path: Path) -> None:
    needs(BIN / "claude")
    result = go(tmp_path, "claude-code-vertex", "claude-code-bash")
    assert result.returncode == 0, result.describe()
    made(result, "made by claude")
    assert statuses(result) == [(0, 200), (1, 200)], result.describe()
    entries = agent(result)
    # Vertex's streamRawPredict, an Anthropic body with no model (it is in the path).
    assert {e["api"] for e in entries} == {"vertex-anthropic"}, result.describe()
    place = "/v1/projects/mock-project/locations/us-east5/publishers/anthropic/models/"
    assert all(place in e["path"] for e in entries), result.describe()
    assert all(e["path"].endswith(":streamRawPredict") for e in entries), result.describe()
    assert "model" not in entries[0]["request"]
    report_ok(result)


# --- Codex -----------------------------------------------------------------------------------


def test_codex(tmp_path: Path) -> None:
    needs(BIN / "codex")
    websocket, http, cut = parallel(
        lambda: go(tmp_path / "ws", "codex", "codex-exec"),
        lambda: go(tmp_path / "http", "codex", "codex-exec", serve_args=["--no-websocket"]),
        lambda: go(tmp_path / "cut", "codex", "codex-exec-cut"),
    )
    # Its default model writes JavaScript for its `exec` tool (a custom tool in namespace
    # `functions`, offered in an `additional_tools` input item), over WebSocket: a warm-up
    # frame, then frames with previous_response_id and only the new items.
    assert websocket.returncode == 0, websocket.describe()
    made(websocket, "made by codex")
    assert "Falling back" not in websocket.stderr + websocket.stdout
    assert statuses(websocket) == [(0, 200), (1, 200)], websocket.describe()
    assert all(e["headers"]["x-mockllm-transport"] == "websocket" for e in websocket.entries)
    assert all(e["request"].get("previous_response_id") for e in websocket.entries)
    report_ok(websocket)
    # Without WebSocket: one 426, and Codex is over HTTP at once.
    assert http.returncode == 0, http.describe()
    made(http, "made by codex")
    first = http.entries[0]
    assert (first["method"], first["response"]["status"]) == ("GET", 426)
    assert statuses(http)[-2:] == [(0, 200), (1, 200)], http.describe()
    report_ok(http)
    # A stream cut inside the call (the connection drops): Codex sends the turn again.
    assert cut.returncode == 0, cut.describe()
    made(cut, "made by codex")
    assert statuses(cut) == [(0, 200), (0, 200), (1, 200)], cut.describe()
    assert cut.model_requests()[0]["response"]["fault"]["kind"] == "truncate"


# --- Gemini CLI ------------------------------------------------------------------------------


def test_gemini_cli(tmp_path: Path) -> None:
    needs(BIN / "gemini")
    happy, malformed = parallel(
        lambda: go(tmp_path / "happy", "gemini-cli", "gemini-shell"),
        lambda: go(tmp_path / "malformed", "gemini-cli", "gemini-malformed"),
    )
    assert happy.returncode == 0, happy.describe()
    made(happy, "made by gemini")
    assert statuses(happy) == [(0, 200), (1, 200)], happy.describe()
    # Its default model `auto`: a router request for the prompt, answered by
    # harness/gemini-cli with JSON from the router's own schema.
    assert sides(happy) == ["router"], happy.describe()  # once, for the prompt
    assert all(":streamGenerateContent" in e["path"] for e in agent(happy))
    report_ok(happy)
    # Arguments that are not an object (MALFORMED_FUNCTION_CALL): it asks again, gives up
    # after a few attempts and exits 0 with no answer, the error on stderr only.
    assert malformed.returncode == 0, malformed.describe()
    turns = statuses(malformed)
    assert len(turns) >= 2 and set(turns) == {(0, 200)}, malformed.describe()
    assert "malformed function call" in malformed.stderr
    assert malformed.stdout.strip() == ""
    assert not (malformed.log.parent / "work" / "made.txt").exists()


# --- Qwen Code -------------------------------------------------------------------------------


def test_qwen_code(tmp_path: Path) -> None:
    needs(BIN / "qwen")
    happy, malformed = parallel(
        lambda: go(tmp_path / "happy", "qwen-code", "qwen-shell"),
        lambda: go(tmp_path / "malformed", "qwen-code", "qwen-malformed"),
    )
    assert happy.returncode == 0, happy.describe()
    made(happy, "made by qwen")
    # No placeholder turn and no `repeat`: the memory agent it may run after the answer is
    # a side request of harness/qwen-code (in -p mode this version seeds no history).
    assert statuses(happy) == [(0, 200), (1, 200)], happy.describe()
    assert set(sides(happy)) <= {"memory"}, happy.describe()
    report_ok(happy)
    # Cut-off JSON arguments: it discards the call and asks again; given the same call,
    # it repairs the JSON and runs it.
    assert malformed.returncode == 0, malformed.describe()
    made(malformed, "made anyway")
    assert statuses(malformed)[:3] == [(0, 200), (0, 200), (1, 200)], malformed.describe()


# --- opencode --------------------------------------------------------------------------------


def test_opencode(tmp_path: Path) -> None:
    needs(BIN / "opencode")
    happy, limited, malformed = parallel(
        lambda: go(tmp_path / "happy", "opencode", "opencode-bash"),
        lambda: go(tmp_path / "limited", "opencode", "opencode-429"),
        lambda: go(tmp_path / "malformed", "opencode", "opencode-malformed"),
    )
    assert happy.returncode == 0, happy.describe()
    made(happy, "made by opencode")
    # Its title request beside the first agent request: a side request (harness/opencode),
    # never turn 0.
    assert statuses(happy) == [(0, 200), (1, 200)], happy.describe()
    assert sides(happy) == ["title"], happy.describe()
    report_ok(happy)
    # `times: 2` on a 429: both reach the agent request (the title spends no attempt), and
    # opencode retries through to the call.
    assert limited.returncode == 0, limited.describe()
    made(limited, "made after 429s")
    assert statuses(limited) == [(0, 429), (0, 429), (0, 200), (1, 200)], limited.describe()
    assert sides(limited) == ["title"], limited.describe()
    report_ok(limited)
    # Cut-off JSON arguments: it renames the call to its own `invalid` tool (same id) and
    # feeds the parse error back, which divergence accepts; the command never runs.
    assert malformed.returncode == 0, malformed.describe()
    assert statuses(malformed) == [(0, 200), (1, 200)], malformed.describe()
    echoed = agent(malformed)[1]["conversation"]
    names = [c["name"] for m in echoed for c in m.get("tool_calls", [])]
    assert names == ["invalid"]
    (result,) = agent(malformed)[1]["tool_results"]
    assert "JSON parsing failed" in result["content"]
    assert not (malformed.log.parent / "work" / "made.txt").exists()


# --- aider and llm (PyPI) --------------------------------------------------------------------


def test_aider(tmp_path: Path) -> None:
    needs(AGENTS_VENV / "aider")
    happy, refused = parallel(
        lambda: go(tmp_path / "happy", "aider", "aider-whole"),
        lambda: go(tmp_path / "refused", "aider", "aider-refused"),
    )
    assert happy.returncode == 0, happy.describe()
    made(happy, "made by aider")
    # One request, at turn 0: the assistant replies aider wrote into it (its example
    # exchange) are seeds of harness/aider, not turns.
    assert statuses(happy) == [(0, 200)], happy.describe()
    # A 400 it cannot retry: it prints the error and exits 0, the file untouched.
    assert refused.returncode == 0, refused.describe()
    assert statuses(refused) == [(0, 400)], refused.describe()
    assert "mockllm fault" in refused.stdout + refused.stderr


def test_llm(tmp_path: Path) -> None:
    needs(AGENTS_VENV / "llm")
    happy, unknown = parallel(
        lambda: go(tmp_path / "happy", "llm", "llm-function"),
        lambda: go(tmp_path / "unknown", "llm", "llm-unknown-tool"),
    )
    assert happy.returncode == 0, happy.describe()
    made(happy, "made by llm")
    assert statuses(happy) == [(0, 200), (1, 200)], happy.describe()
    report_ok(happy)
    # A tool it was not given: it answers the call with an error result and goes on.
    assert unknown.returncode == 0, unknown.describe()
    assert statuses(unknown) == [(0, 200), (1, 200)], unknown.describe()
    (result,) = unknown.model_requests()[1]["tool_results"]
    assert "delete_everything" in result["content"]
