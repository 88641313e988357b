"""docs/ci.md's recipes, run: the background start script (under dash, a strict POSIX sh),
the GitHub Actions job that calls it, the pre-commit hook, the editor schema modeline."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import yaml

from mockllm import Client, ClientError, load_paths
from tests.support import ROOT

CI = ROOT / "examples" / "ci"
BIN = Path(sys.executable).parent  # where this environment's `mockllm` command lives
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
GOOD = "name: ci-good\nturns: [{reply: {text: ok}}]\n"
BAD = "name: ci-bad\nturns:\n  - reply: {text: ok, finsh: stop}\n"


def start(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "MOCKLLM_DIR": str(tmp_path / "m"), "GITHUB_ENV": str(tmp_path / "env")}
    script = CI / "mockllm-start.sh"
    return subprocess.run(["sh", str(script), *args], env=env, capture_output=True, text=True)


def test_start_script_waits_for_the_ready_file_and_exports_the_url(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "ci-good.yaml").write_text(GOOD)
    done = start(tmp_path, "--scenarios", str(tmp_path / "s"), "--no-bundled")
    pid = int((tmp_path / "m" / "pid").read_text())
    try:
        assert done.returncode == 0, done.stderr
        url = done.stdout.strip()
        assert (tmp_path / "env").read_text() == f"MOCKLLM_URL={url}\n"
        assert Client(url).health() == {"status": "ok", "scenarios": 1}
    finally:
        os.kill(pid, signal.SIGTERM)  # what the job's "Stop mockllm" step does
    _wait_gone(url)
    assert "serving 1 scenarios" in (tmp_path / "m" / "server.out").read_text()


def test_start_script_fails_with_the_servers_message(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BAD)
    done = start(tmp_path, "--scenarios", str(tmp_path / "bad.yaml"))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("mockllm exited before it was ready:\n")
    assert "unknown key 'finsh'" in done.stderr


def test_github_actions_job_runs_the_recipe() -> None:
    job = yaml.safe_load((CI / "github-actions.yml").read_text())["jobs"]["test"]
    runs = [step.get("run", "") for step in job["steps"]]
    assert "pip install ./third_party/mockllm" in runs  # not on PyPI yet: a checkout
    assert "mockllm validate tests/scenarios" in runs
    assert "sh ci/mockllm-start.sh --scenarios tests/scenarios" in runs
    report = "$RUNNER_TEMP/mockllm/report.html"
    assert f'pytest --mockllm-url "$MOCKLLM_URL" --mockllm-html "{report}"' in runs
    assert 'kill "$(cat "$RUNNER_TEMP/mockllm/pid")"' in runs
    upload = next(
        s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")
    )
    assert upload["with"]["path"].splitlines() == [
        "${{ runner.temp }}/mockllm/requests.jsonl",
        "${{ runner.temp }}/mockllm/report.html",
    ]
    # docs/ci.md shows the job's own steps, as they are in the file
    doc = (ROOT / "docs" / "ci.md").read_text()
    shown = yaml.safe_load(re.findall(r"```yaml\n(.*?)```", doc, re.S)[0])
    assert all(step in job["steps"] for step in shown), "docs/ci.md drifted from the job"


def test_ci_doc_shows_the_scripts_own_lines() -> None:
    doc = (ROOT / "docs" / "ci.md").read_text()
    script = (CI / "mockllm-start.sh").read_text()
    shown = re.findall(r"```sh\n(.*?)```", doc, re.S)
    assert shown, "docs/ci.md shows the waiting loop"
    for line in shown[0].splitlines():
        assert line.strip() in script, f"docs/ci.md drifted from mockllm-start.sh: {line!r}"


def test_pre_commit_hook_validates_scenario_files(tmp_path: Path) -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "mockllm-validate" and hook["language"] == "python"
    pattern = re.compile(hook["files"])
    assert pattern.search("scenarios/a.yaml") and pattern.search("tests/scenarios/b/c.yml")
    assert not pattern.search("docker-compose.yaml") and not pattern.search("scenarios/x.py")
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "bad.yaml").write_text(BAD)
    command = hook["entry"].split()
    ok = subprocess.run([*command, "good.yaml"], cwd=tmp_path, env=ENV, capture_output=True)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run(
        [*command, "good.yaml", "bad.yaml"], cwd=tmp_path, env=ENV, capture_output=True, text=True
    )
    assert bad.returncode == 1
    assert bad.stderr.startswith("bad.yaml:3:23: turns[0].reply.finsh: unknown key 'finsh'")


def test_the_documented_local_hook_is_the_repositorys_hook_without_a_url() -> None:
    doc = (ROOT / "docs" / "ci.md").read_text()
    config = next(
        yaml.safe_load(block)
        for block in re.findall(r"```yaml\n(.*?)```", doc, re.S)
        if "repos:" in block
    )
    (repo,) = config["repos"]
    (local,) = repo["hooks"]
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert repo["repo"] == "local" and local["language"] == "system"
    assert (local["id"], local["entry"], local["files"]) == (
        hook["id"],
        hook["entry"],
        hook["files"],
    )
    for text in (
        doc,
        (ROOT / "README.md").read_text(),
        (ROOT / ".pre-commit-hooks.yaml").read_text(),
    ):
        assert "OWNER" not in text


def test_schema_modeline_file_is_what_editors_check_against(tmp_path: Path) -> None:
    schema = subprocess.run(["mockllm", "schema"], env=ENV, capture_output=True, check=True)
    (tmp_path / "mockllm.schema.json").write_bytes(schema.stdout)
    scenario = tmp_path / "with-modeline.yaml"
    scenario.write_text("# yaml-language-server: $schema=./mockllm.schema.json\n" + GOOD)
    modeline = scenario.read_text().splitlines()[0]
    target = tmp_path / modeline.split("$schema=")[1]
    validator = jsonschema.Draft202012Validator(json.loads(target.read_text()))
    assert list(validator.iter_errors(yaml.safe_load(scenario.read_text()))) == []
    assert not validator.is_valid(yaml.safe_load(BAD))
    assert [s.name for s in load_paths([scenario])] == ["ci-good"]


def _wait_gone(url: str) -> None:
    """The server was orphaned when the script exited, so it is not ours to wait for."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            Client(url, timeout=1).health()
        except ClientError:
            return
        time.sleep(0.02)
    raise AssertionError(f"mockllm at {url} did not stop")
