"""The release check: the artefacts a user installs, built and installed as a user would.

Every other test runs on the editable install, which reads the source tree, so a module
the wheel leaves out goes unseen there (issue 23: a wheel without `mockllm.state` could
not serve). Here the sdist and the wheel are built (`python -m build`), their file lists
compared with the source tree, their metadata checked (`twine check`), and each is
installed into a fresh virtualenv that cannot see the checkout, where the installed copy
serves the four wires to the official SDKs, runs the README's quick-start test under a
real pytest, and, for the wheel, the Node client's quick start from its `npm pack`.

The dependencies come from `.venv/wheelhouse` (filled by the Makefile: tests/support/wheelhouse.py),
so nothing is fetched at test time. The build and each virtualenv are made once per run
and shared by the xdist workers (`_shared`), so the group costs one build and two installs
however the tests are spread.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from mockllm._version import __version__
from mockllm.viewer.page import SCRIPTS
from tests.e2e.docs.test_readme import doc_test_files
from tests.support import ROOT, node_test_counts
from tests.support.wheelhouse import CLIENTS, pins

WHEELHOUSE = ROOT / ".venv" / "wheelhouse"
CLIENT = ROOT / "clients" / "node"
# Caches and build output a working tree may hold: never part of a release.
LITTER = {".venv", "node_modules", ".git", "__pycache__", ".pytest_cache", ".mypy_cache"}
LITTER |= {".ruff_cache", ".hypothesis", "build", "dist"}


def _tmp_root(factory: pytest.TempPathFactory) -> Path:
    """The run's temporary folder that every xdist worker shares (each has a child of it)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _shared(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """`make(folder)` once per run, whichever worker asks first; the others wait for it and
    get the same folder, or the same failure."""
    root = _tmp_root(factory)
    folder, failed = root / name, root / f"{name}.failed"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if failed.exists():
            pytest.fail(failed.read_text(), pytrace=False)
        if not (folder / ".done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            try:
                make(folder)
            except BaseException as e:
                failed.write_text(f"{name}: {e}")
                raise
            (folder / ".done").touch()
    return folder


def run(*command: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run a command; fail with everything it printed unless it exits 0."""
    kwargs = {"capture_output": True, "text": True, "timeout": 300, **kwargs}
    done = subprocess.run([str(c) for c in command], **kwargs)
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done  # type: ignore[no-any-return]


def source_files() -> list[str]:
    """The source tree's files, as paths relative to the root: what git tracks plus what it
    would add, less what is deleted."""
    listed = run("git", "ls-files", "-co", "--exclude-standard", cwd=ROOT).stdout.split("\n")
    return sorted(f for f in listed if f and (ROOT / f).is_file())


# --- the build -------------------------------------------------------------------------------


def _build(out: Path) -> None:
    # A copy of the source tree, so the build writes nothing into the checkout.
    src = out / "src"
    for name in source_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    # --no-isolation: the build backend is this environment's (the test extra pins it);
    # installing the sdist below builds it again in isolation, from the wheelhouse.
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out / "dist", src, cwd=out)


@pytest.fixture
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """{"wheel": ..., "sdist": ...}: built once per run from the source tree."""
    dist = _shared(tmp_path_factory, "release-build", _build) / "dist"
    [wheel], [sdist] = dist.glob("*.whl"), dist.glob("*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return {n for n in z.namelist() if not n.split("/")[0].endswith(".dist-info")}


def sdist_files(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as t:
        return {m.name.split("/", 1)[1] for m in t.getmembers() if m.isfile()}


def test_the_wheel_holds_every_file_of_the_package_and_nothing_else(
    dists: dict[str, Path],
) -> None:
    files = source_files()
    package = {f for f in files if f.startswith("mockllm/")}
    bundled = {
        "mockllm/bundled/" + f.removeprefix("scenarios/")
        for f in files
        if f.startswith("scenarios/")
    }
    shipped = wheel_files(dists["wheel"])
    assert sorted(package - shipped) == [], "left out of the wheel"
    assert sorted(bundled - shipped) == [], "bundled scenarios left out of the wheel"
    assert sorted(shipped - package - bundled) == [], "in the wheel by mistake"
    viewer = {f"mockllm/viewer/{name}" for name in SCRIPTS}
    assert {"mockllm/state/__init__.py", "mockllm/py.typed", *viewer} <= shipped
    assert "mockllm/loading/scenario.schema.json" in shipped and len(bundled) >= 20


def test_the_sdist_holds_what_builds_the_wheel_and_no_tests_bench_or_examples(
    dists: dict[str, Path],
) -> None:
    # docs/design.md (Releases): the sdist is the wheel's source plus the user's texts.
    files = set(source_files())
    wanted = {f for f in files if f.split("/")[0] in {"mockllm", "scenarios", "container"}}
    wanted |= {"pyproject.toml", "setup.py", "README.md", "CHANGELOG.md", "LICENSE", "MANIFEST.in"}
    wanted |= {"Containerfile", ".dockerignore"}  # the image builds from a release too
    shipped = sdist_files(dists["sdist"])
    made = {f for f in shipped if f in {"PKG-INFO", "setup.cfg"} or ".egg-info/" in f}
    assert sorted(wanted - shipped) == [], "left out of the sdist"
    assert sorted(shipped - wanted - made) == [], "in the sdist by mistake"
    assert not {f for f in shipped if f.split("/")[0] in {"tests", "bench", "examples", "docs"}}


def test_the_metadata_passes_twine_check(dists: dict[str, Path]) -> None:
    done = run(sys.executable, "-m", "twine", "check", "--strict", *dists.values())
    assert done.stdout.count("PASSED") == 2, done.stdout
    with zipfile.ZipFile(dists["wheel"]) as z:
        [name] = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        meta = z.read(name).decode()
    assert f"Version: {__version__}\n" in meta
    assert "License-Expression: MIT\n" in meta and "License-File: LICENSE\n" in meta
    assert "Description-Content-Type: text/markdown\n" in meta
    for extra in ("record", "redis", "test"):
        assert f"Provides-Extra: {extra}\n" in meta
    assert re.search(r"^Classifier: Framework :: Pytest$", meta, re.M), meta


# --- fresh virtualenvs -----------------------------------------------------------------------


def clean_env(venv: Path) -> dict[str, str]:
    """The environment of a shell with `venv` activated and nothing of this suite's: no
    PYTHONPATH, no other virtualenv, no coverage hooks, no index for pip."""
    drop = ("PYTHON", "VIRTUAL_ENV", "COV_", "COVERAGE", "PYTEST", "PIP_", "MOCKLLM_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if Path(p) != Path(sys.prefix, "bin")]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    env |= {"VIRTUAL_ENV": str(venv), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELHOUSE)}
    return env


def readme_install_commands() -> dict[str, list[str]]:
    """The README's install commands: a release's wheel, then a checkout's folder (run
    here on the unpacked sdist, a folder holding pyproject.toml as a checkout is)."""
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("```python", 1)[0]
    [block] = re.findall(r"```sh\n(.*?)```", quick_start, re.S)
    wheel, checkout = (shlex.split(line, comments=True) for line in block.splitlines())
    return {"wheel": wheel, "sdist": checkout}


def test_the_readme_installs_this_releases_wheel_or_a_checkout(dists: dict[str, Path]) -> None:
    commands = readme_install_commands()
    assert commands == {
        "wheel": ["pip", "install", f"./{dists['wheel'].name}"],
        "sdist": ["pip", "install", "./mockllm"],
    }
    assert dists["wheel"].name == f"mockllm_server-{__version__}-py3-none-any.whl"
    pinning = (ROOT / "docs" / "ci.md").read_text()  # how to pin a release says the same
    for argv in commands.values():
        assert f"`{shlex.join(argv)}`" in pinning
    assert f"`v{__version__}`" in pinning


def _install(kind: str, dists: dict[str, Path], folder: Path) -> None:
    """The README's command for `kind`, in a fresh venv, from a folder holding only the
    wheel (or the unpacked sdist, as `mockllm`)."""
    assert (WHEELHOUSE / ".downloaded").exists(), (
        f"no wheelhouse at {WHEELHOUSE}: `make test` fills it (python -m tests.support.wheelhouse)"
    )
    venv, here = folder / "venv", folder / "here"
    here.mkdir()
    if kind == "wheel":
        shutil.copy(dists["wheel"], here)
    else:
        with tarfile.open(dists["sdist"]) as t:
            t.extractall(here, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        [unpacked] = here.iterdir()
        unpacked.rename(here / "mockllm")
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=folder)
    pip, *args = readme_install_commands()[kind]
    assert pip == "pip"
    # This environment's pip, run by the new interpreter (`--python`): the same install
    # as that venv's own pip would make, without bootstrapping one into every venv.
    # --no-compile: byte-compiling every SDK file costs seconds and tests nothing here.
    # The SDKs and pytest the checks drive come in the same resolve.
    command = [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", *args]
    command += ["--quiet", "--no-compile", *pins(CLIENTS)]
    run(*command, cwd=here, env=clean_env(venv))


@pytest.fixture(params=["wheel", "sdist"])
def venv(
    request: pytest.FixtureRequest,
    dists: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """A virtualenv with the wheel (or the sdist) installed, with the SDKs and pytest."""
    kind = request.param
    return _shared(tmp_path_factory, f"release-{kind}", lambda f: _install(kind, dists, f))


def in_venv(
    venv: Path, command: str, *args: str | Path, cwd: Path, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    """Run one of the venv's commands from `cwd`, a folder outside the checkout."""
    assert not cwd.resolve().is_relative_to(ROOT)
    return run(
        venv / "venv" / "bin" / command, *args, cwd=cwd, env=clean_env(venv / "venv"), **kwargs
    )


def test_the_installed_package_is_the_venvs_and_says_its_version(
    venv: Path, tmp_path: Path
) -> None:
    code = "import mockllm, mockllm.state, mockllm.serving.server; print(mockllm.__file__)"
    where = Path(in_venv(venv, "python", "-c", code, cwd=tmp_path).stdout.strip())
    assert where.is_relative_to(venv / "venv" / "lib"), where
    assert in_venv(venv, "mockllm", "--version", cwd=tmp_path).stdout == f"mockllm {__version__}\n"
    done = in_venv(venv, "python", "-m", "mockllm", "--version", cwd=tmp_path)
    assert done.stdout == f"mockllm {__version__}\n"


def test_the_installed_bundled_scenarios_validate(venv: Path, tmp_path: Path) -> None:
    code = "from mockllm.loading.loader import BUNDLED; print(BUNDLED)"
    bundled = Path(in_venv(venv, "python", "-c", code, cwd=tmp_path).stdout.strip())
    assert bundled.is_relative_to(venv / "venv" / "lib"), bundled
    count = len(list((ROOT / "scenarios").glob("*.yaml")))
    done = in_venv(venv, "mockllm", "validate", bundled, cwd=tmp_path)
    assert done.stdout == f"ok: {count} scenarios in {count} files\n"


@contextmanager
def installed_server(venv: Path, cwd: Path) -> Iterator[str]:
    """`mockllm serve --port 0` from the venv, on the bundled scenarios; yields its URL."""
    ready, console = cwd / "ready", cwd / "console.txt"
    command = [venv / "venv" / "bin" / "mockllm", "serve", "--port", "0", "--ready-file", ready]
    with console.open("w") as out:
        process = subprocess.Popen(
            command, cwd=cwd, env=clean_env(venv / "venv"), stdout=out, stderr=subprocess.STDOUT
        )
    try:
        for _ in range(600):  # 30 s
            if ready.exists() or process.poll() is not None:
                break
            time.sleep(0.05)
        assert ready.exists(), f"mockllm serve did not start:\n{console.read_text()}"
        yield ready.read_text().strip()
    finally:
        process.terminate()
        process.wait(10)


FOUR_WIRES = """
import sys
from anthropic import Anthropic
from google import genai
from openai import OpenAI

url = sys.argv[1]
user = [{"role": "user", "content": "Hi"}]
openai = OpenAI(base_url=url + "/s/hello/v1", api_key="test", max_retries=0)
print(openai.chat.completions.create(model="gpt-4o-mini", messages=user).choices[0].message.content)
print(openai.responses.create(model="gpt-4.1", input="Hi").output_text)
anthropic = Anthropic(base_url=url + "/s/hello", api_key="test", max_retries=0)
print(anthropic.messages.create(model="claude-sonnet-4-5", max_tokens=100, messages=user).content[0].text)
gemini = genai.Client(api_key="test", http_options={"base_url": url + "/s/hello"})
print(gemini.models.generate_content(model="gemini-2.5-flash", contents="Hi").text)
"""


def test_the_installed_server_answers_the_four_wires_through_the_sdks(
    venv: Path, tmp_path: Path
) -> None:
    (tmp_path / "four_wires.py").write_text(FOUR_WIRES)
    with installed_server(venv, tmp_path) as url:
        done = in_venv(venv, "python", "four_wires.py", url, cwd=tmp_path)
        log = httpx.get(url + "/_mockllm/requests").json()
    hello = "Hello! I am mockllm, a deterministic fake model. How can I help?"
    assert done.stdout.splitlines() == [hello] * 4, done.stdout + done.stderr
    assert [e["response"]["status"] for e in log] == [200] * 4, log
    assert len({e["api"] for e in log}) == 4, [e["api"] for e in log]  # one per wire


def test_the_readme_quick_start_passes_under_the_installed_plugin(
    venv: Path, tmp_path: Path
) -> None:
    [(name, code)] = doc_test_files("README.md")
    (tmp_path / name).write_text(code)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # the user's project: no config above it
    done = in_venv(venv, "pytest", "-p", "no:cacheprovider", name, cwd=tmp_path)
    assert re.search(r"^=+ 1 passed in ", done.stdout, re.M), done.stdout + done.stderr


# --- the Node client, from its npm pack --------------------------------------------------------


def test_the_node_quick_start_passes_from_the_packed_client_on_the_installed_server(
    dists: dict[str, Path], tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    wheel = _shared(tmp_path_factory, "release-wheel", lambda f: _install("wheel", dists, f))
    # --ignore-scripts: dist/ is already built (make test's `npm ci`); `prepare` would
    # rebuild it under the other Node tests' feet.
    packed = run("npm", "pack", "--ignore-scripts", "--pack-destination", tmp_path, cwd=CLIENT)
    tarball = tmp_path / packed.stdout.strip().splitlines()[-1]
    assert tarball.name == f"mockllm-{__version__}.tgz"
    env = clean_env(wheel / "venv")  # the activated venv's python3 is the one the client runs
    # The OpenAI SDK as tests/node's lockfile pins it: `npm ci --offline` takes it from
    # npm's cache, where make test's `npm ci` of tests/node put it (an `npm install` by
    # version would ask the registry for its metadata first).
    lock = json.loads((ROOT / "tests" / "node" / "package-lock.json").read_text())
    sdk = lock["packages"]["node_modules/openai"]
    needs = {"openai": sdk["version"]}
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text(
        json.dumps({"name": "scratch", "private": True, "type": "module", "dependencies": needs})
    )
    top = {"name": "scratch", "dependencies": needs}
    lockfile = {"name": "scratch", "lockfileVersion": 3, "requires": True}
    lockfile["packages"] = {"": top, "node_modules/openai": sdk}
    (project / "package-lock.json").write_text(json.dumps(lockfile))
    npm = ["--offline", "--no-audit", "--no-fund", "--loglevel=error"]
    run("npm", "ci", *npm, cwd=project, env=env)
    run("npm", "install", *npm, tarball, cwd=project, env=env)
    [(name, code)] = re.findall(
        r"```js file=(\S+)\n(.*?)```", (ROOT / "docs" / "node.md").read_text(), re.S
    )
    (project / name).write_text(code)
    done = subprocess.run(
        ["node", "--test", "--test-reporter=tap", name],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert node_test_counts(done.stdout) == (1, 0), done.stdout + done.stderr


def test_the_node_docs_install_what_the_release_check_installs(dists: dict[str, Path]) -> None:
    # docs/node.md's install lines: the wheel the README installs, the tarball `npm pack`
    # makes (as the test above packs it), installed into the user's project.
    text = (ROOT / "docs" / "node.md").read_text()
    [block] = re.findall(r"```sh\n(.*?)```", text.split("## Quick start", 1)[0], re.S)
    lines = [shlex.split(line, comments=True) for line in block.splitlines()]
    assert lines[0] == readme_install_commands()["wheel"]
    assert lines[1] == ["(cd", "/path/to/mockllm/clients/node", "&&", "npm", "pack)"]
    assert lines[2] == ["npm", "install", "--save-dev", f"./mockllm-{__version__}.tgz"]


def test_the_installed_start_script_starts_the_installed_server(venv: Path, tmp_path: Path) -> None:
    # docs/ci.md: a release carries the CI start script (`mockllm start-script`).
    script = Path(in_venv(venv, "mockllm", "start-script", cwd=tmp_path).stdout.strip())
    assert script.is_relative_to(venv / "venv" / "lib"), script
    env = {**clean_env(venv / "venv"), "MOCKLLM_DIR": str(tmp_path / "run")}
    done = subprocess.run(["sh", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    try:
        assert done.returncode == 0, done.stdout + done.stderr
        url = done.stdout.strip().splitlines()[-1]
        assert httpx.get(url + "/_mockllm/health").json()["status"] == "ok"
    finally:
        pid = (tmp_path / "run" / "pid").read_text().strip()
        subprocess.run(["kill", pid])
