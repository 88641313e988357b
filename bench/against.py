"""`python -m bench --against REF`: another tree of mockllm, measured in the same run.

REF (any commit-ish git knows: a tag, a branch, `047e5d3`, `HEAD~5`) is exported with
`git archive` into `bench/results/trees/<commit>/` (git-ignored, kept for the next run;
a plain export rather than a registered worktree, so there is nothing to prune) and
byte-compiled as `make bench` compiles this tree. Its server runs on this tree's
interpreter and packages with the export first on `PYTHONPATH`, the way a worktree is
tried out in this project: a venv per REF would need the network and minutes, and the
dependencies move slowly. When REF's own code does not import here, the bench stops and
says which module is missing, rather than measuring half a server.

The baseline is one more server in every interleaved phase (start-up, rounds, cold
rounds, memory, conversations): the same requests, the same scenarios (the files of this
tree's `bench/scenarios/` that REF's loader accepts, so both serve the same script), the
same load generator and core.
Its replies are held to the same work, not the same bytes (ids may have changed between
the trees): `run.check_replies` checks it as it checks a peer.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .servers import HOST, ROOT, SCENARIOS, Context, ServerDef

TREES = ROOT / "bench" / "results" / "trees"


class AgainstError(RuntimeError):
    """REF cannot be measured: unknown to git, or its code does not import here."""


def commit_of(ref: str) -> str:
    done = _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if done.returncode != 0 or not done.stdout.strip():
        raise AgainstError(f"bench --against: git knows no commit {ref!r}")
    return done.stdout.strip()


def export(ref: str, trees: Path = TREES) -> Path:
    """REF's files in a folder of their own (made once per commit), byte-compiled."""
    commit = commit_of(ref)
    tree = trees / commit
    if not (tree / ".exported").exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.Popen(
            ["git", "archive", "--format=tar", commit], cwd=ROOT, stdout=subprocess.PIPE
        )
        untar = subprocess.run(["tar", "-x", "-C", str(tree)], stdin=archive.stdout, check=False)
        assert archive.stdout is not None
        archive.stdout.close()
        if archive.wait() != 0 or untar.returncode != 0:
            raise AgainstError(f"bench --against: could not export {ref} ({commit[:12]})")
        (tree / ".exported").write_text(commit + "\n")
    # As `make bench` does for this tree: no server start compiles modules from source.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(tree / "mockllm")],
        check=False,
        capture_output=True,
    )
    _check_imports(tree, ref)
    return tree


def environment(tree: Path) -> dict[str, str]:
    """This process's environment with REF's tree first on the import path."""
    rest = os.environ.get("PYTHONPATH", "")
    # This tree's own path is dropped: REF's `mockllm` must not be shadowed by ours.
    kept = [p for p in rest.split(os.pathsep) if p and Path(p).resolve() != ROOT]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), *kept])}


def _check_imports(tree: Path, ref: str) -> None:
    probe = "import mockllm, mockllm.cli, mockllm.serving.server; print(mockllm.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=environment(tree),
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    where = done.stdout.strip()
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        raise AgainstError(
            f"bench --against {ref}: its code does not import with this interpreter "
            f"({sys.executable}): {last}. Install what its pyproject.toml needs, or pick "
            "another REF."
        )
    if not Path(where).resolve().is_relative_to(tree.resolve()):
        raise AgainstError(f"bench --against {ref}: imported mockllm from {where}, not {tree}")


def baseline(ref: str, trees: Path = TREES) -> ServerDef:
    """The server definition of REF's `mockllm serve`, launched as this tree's is."""
    tree = export(ref, trees)
    short = commit_of(ref)[:7]
    name = f"mockllm@{ref if ref == short else short}"
    env = environment(tree)
    launcher = _launcher(tree)

    scenarios = _scenarios(tree, env)

    def command(ctx: Context) -> list[str]:
        where = ["--host", HOST, "--port", str(ctx.port), "--scenarios", str(scenarios)]
        return ["env", f"PYTHONPATH={env['PYTHONPATH']}", *launcher, "serve", *where]

    shown = tree.relative_to(ROOT) if tree.is_relative_to(ROOT) else tree
    about = f"mockllm at {ref} ({short}), exported to {shown}: the baseline"
    return ServerDef(name, "baseline", about, command)


# Loads each scenario file with REF's own loader; prints the names of those it accepts.
_PROBE = """
import sys
from pathlib import Path
from mockllm.loading.loader import load_paths
for name in sys.argv[1:]:
    try:
        load_paths([Path(name)])
    except BaseException:
        continue
    print(Path(name).name)
"""


def _scenarios(tree: Path, env: dict[str, str]) -> Path:
    """This tree's bench scenarios that REF can load (a scenario using a key REF predates
    is left out, and so is the row needing it: '-' in REF's column)."""
    files = sorted(SCENARIOS.glob("*.yaml"))
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *map(str, files)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    loaded = set(done.stdout.split())
    folder = tree / ".bench-scenarios"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    for file in files:
        if file.name in loaded:
            shutil.copy(file, folder / file.name)
    left_out = [f.name for f in files if f.name not in loaded]
    if left_out:
        print(f"bench --against: REF cannot load {', '.join(left_out)}", file=sys.stderr)
    return folder


def baseline_paths(ref: str, trees: Path = TREES) -> tuple[Path, Path]:
    """For an in-process run of this tree's bench on REF's code (`bench.profile --against`):
    a folder with REF's `mockllm` and this tree's `bench` side by side, and the scenarios."""
    tree = export(ref, trees)
    both = tree / ".bench-hybrid"
    both.mkdir(exist_ok=True)
    for name, target in (("mockllm", tree / "mockllm"), ("bench", ROOT / "bench")):
        link = both / name
        if not link.is_symlink():
            link.symlink_to(target, target_is_directory=True)
    return both, _scenarios(tree, environment(tree))


def _launcher(tree: Path) -> list[str]:
    """This venv's `mockllm` console script when REF declares the same entry point (so
    start-up compares like with like), else `python -m mockllm`."""
    script = Path(sys.executable).with_name("mockllm")
    declared = _entry_point(tree / "pyproject.toml")
    same = declared is not None and declared == _entry_point(ROOT / "pyproject.toml")
    if script.exists() and same:
        return [str(script)]
    return [sys.executable, "-m", "mockllm"]


def _entry_point(pyproject: Path) -> str | None:
    """What `[project.scripts] mockllm = "..."` names (no tomllib: Python 3.10 has none)."""
    try:
        found = re.search(r'(?m)^mockllm\s*=\s*"([^"]+)"', pyproject.read_text())
    except OSError:
        return None
    return found.group(1) if found else None


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
