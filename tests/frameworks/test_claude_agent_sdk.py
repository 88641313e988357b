"""The Claude Agent SDK (`query`) driving Claude Code, on the Anthropic Messages wire
(Claude Code always streams): its Bash tool writes a file, and a call to a tool it does
not offer is answered with an `is_error` result. Both the SDK and the CLI run inside a
network namespace with only loopback, with the server (tests/agent_clis/cli_run.py); the
SDK runs in .venv-claudesdk (tests/frameworks/claudesdk/requirements.txt)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent_clis.cli_run import BIN, Run, base_env, run, unshare
from tests.support import ROOT

PYTHON = ROOT / ".venv-claudesdk" / "bin" / "python"
AGENT = ROOT / "tests" / "frameworks" / "claudesdk" / "agent.py"
SCENARIOS = ROOT / "tests" / "agent_clis" / "scenarios"

pytestmark = [
    pytest.mark.matrix,
    pytest.mark.skipif(unshare() is None, reason="needs a network namespace (unshare -n)"),
]


def go(tmp: Path, scenario: str, prompt: str) -> Run:
    assert PYTHON.exists(), f"{PYTHON} is missing: `make frameworks` makes it (Makefile)"
    assert (BIN / "claude").exists(), "tests/agent_clis' Claude Code is missing (make test)"
    home = tmp / "home"
    home.mkdir(parents=True)
    env = base_env(home)
    env.update(
        ANTHROPIC_BASE_URL="{url}/s/" + scenario + "/run",
        ANTHROPIC_API_KEY="test",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",  # no telemetry, update or side requests
        DISABLE_AUTOUPDATER="1",
    )
    argv = [str(PYTHON), str(AGENT), str(BIN / "claude"), prompt]
    return run(tmp, argv, env, [str(SCENARIOS)], timeout=180)


def statuses(result: Run) -> list[tuple[int | None, int]]:
    agent = [e for e in result.model_requests() if not e.get("side")]
    return [(e["turn"], e["response"]["status"]) for e in agent]


def test_bash_writes_the_file(tmp_path: Path) -> None:
    result = go(tmp_path, "claude-code-bash", "Write made.txt in this directory.")
    assert result.returncode == 0, result.describe()
    assert (tmp_path / "work" / "made.txt").read_text().strip() == "made by claude"
    assert statuses(result) == [(0, 200), (1, 200)], result.describe()
    assert '"result": "I wrote made.txt."' in result.stdout, result.describe()


def test_a_tool_not_offered_gets_an_error_result(tmp_path: Path) -> None:
    result = go(tmp_path, "claude-code-unknown-tool", "Clean up.")
    assert result.returncode == 0, result.describe()
    assert statuses(result) == [(0, 200), (1, 200)], result.describe()
    (answer,) = result.model_requests()[1]["tool_results"]
    assert answer["is_error"] is True and "DeleteEverything" in answer["content"]
    assert "nothing was deleted" in result.stdout, result.describe()
