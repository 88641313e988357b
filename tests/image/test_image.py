"""The image: built from the Containerfile in the release's sdist, served from inside to the
official SDKs, the pytest plugin and the Node client, and each container recipe of
docs/container.md run as written (`make image`; tests/image/container.py says how, with no
Docker daemon).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from mockllm._version import __version__
from tests.e2e.docs.test_readme import doc_test_files
from tests.release.test_release import FOUR_WIRES, _build, _shared, wheel_files
from tests.support import ROOT

from . import container
from .conftest import FIGURES
from .container import Container

pytestmark = [
    pytest.mark.skipif(
        not os.environ.get("MOCKLLM_IMAGE_TIER"),
        reason="the image tier: `make image` runs it (buildah, podman and debootstrap from "
        "Debian; no Docker daemon needed)",
    ),
    pytest.mark.skipif(
        bool(container.missing_tools()),
        reason=f"no {', '.join(container.missing_tools())} here: the image cannot be built "
        "(apt-get install buildah podman debootstrap)",
    ),
]

TAG = "localhost/mockllm-test:latest"
HELLO = "Hello! I am mockllm, a deterministic fake model. How can I help?"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    dist = _shared(tmp_path_factory, "release-build", _build) / "dist"
    [wheel], [sdist] = dist.glob("*.whl"), dist.glob("*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


@pytest.fixture(scope="module")
def image(release: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> str:
    """The image, built from the unpacked sdist (the release a user downloads) as it is."""
    work = tmp_path_factory.mktemp("image")
    with tarfile.open(release["sdist"]) as t:
        t.extractall(work, filter="data")
    [context] = [p for p in work.iterdir() if p.is_dir()]
    started = time.monotonic()
    container.ensure_base()
    based = time.monotonic()
    wheels = container.CACHE / f"wheels-{__version__}"
    container.fill_wheels(wheels)
    with container.wheel_index(wheels) as index:
        container.build(
            context,
            TAG,
            BASE=container.BASE,
            PIP_OPTIONS=f"--no-index --find-links {index}",
            VERSION=__version__,
        )
    built = time.monotonic()
    FIGURES.append(
        f"image: base ready in {based - started:.1f} s, wheels and build in "
        f"{built - based:.1f} s; {container.size_mb(TAG):.0f} MB "
        f"(the Debian base alone: {container.size_mb(container.BASE):.0f} MB)",
    )
    return TAG


@pytest.fixture
def ctr(image: str) -> Iterator[Container]:
    made = Container(image)
    try:
        yield made
    finally:
        made.remove()


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    """A scenarios folder with one scenario, and a log folder the container's user may
    write (a host folder is the host user's)."""
    scenarios, logs = tmp_path / "scenarios", tmp_path / "logs"
    scenarios.mkdir()
    logs.mkdir(mode=0o777)
    logs.chmod(0o777)
    (scenarios / "mine.yaml").write_text(
        "name: mine\nturns:\n  - reply: {text: from the mounted folder}\n"
    )
    return {"scenarios": scenarios, "logs": logs}


def _chat(url: str, scenario: str, host: str | None = None) -> str:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    headers = {"Host": host} if host else {}
    r = httpx.post(f"{url}/s/{scenario}/v1/chat/completions", json=body, headers=headers)
    r.raise_for_status()
    text: str = r.json()["choices"][0]["message"]["content"]
    return text


def _bedrock(url: str) -> str:
    import boto3

    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=f"{url}/s/hello",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    messages = [{"role": "user", "content": [{"text": "Hi"}]}]
    reply = client.converse(modelId="anthropic.claude-3-haiku", messages=messages)
    text: str = reply["output"]["message"]["content"][0]["text"]
    return text


# --- the image itself ----------------------------------------------------------------------


def test_the_image_runs_the_server_as_a_user_without_privileges_with_its_labels(
    image: str, ctr: Container
) -> None:
    config = container.inspect(image)
    assert config["User"] == "10001"
    assert config["Entrypoint"] == ["mockllm-entrypoint"]
    assert "8000/tcp" in config["ExposedPorts"]
    labels = config["Labels"]
    assert labels["org.opencontainers.image.version"] == __version__
    assert labels["org.opencontainers.image.licenses"] == "MIT"
    assert ctr.execute("id", "-u").stdout.strip() == "10001"
    done = ctr.execute("mockllm", "--version")
    assert done.stdout == f"mockllm {__version__}\n", done.stdout + done.stderr


def test_the_image_holds_the_release_wheels_files(
    image: str, ctr: Container, release: dict[str, Path]
) -> None:
    code = (
        "import pathlib, mockllm; root = pathlib.Path(mockllm.__file__).parent; "
        "print('\\n'.join(str(p.relative_to(root.parent)) for p in root.rglob('*') "
        "if p.is_file() and '__pycache__' not in p.parts))"
    )
    done = ctr.execute("python3", "-c", code)
    installed = set(done.stdout.split())
    assert installed == wheel_files(release["wheel"]), done.stderr
    # No build tools left in the runtime: pip and setuptools went with the wheels stage.
    assert ctr.execute("python3", "-c", "import pip").returncode != 0


def test_the_container_serves_every_wire_and_a_mounted_folder_and_writes_the_log(
    ctr: Container, folders: dict[str, Path], tmp_path: Path
) -> None:
    volumes = {folders["scenarios"]: "/scenarios:ro", folders["logs"]: "/logs"}
    (tmp_path / "four_wires.py").write_text(FOUR_WIRES)
    with ctr.serving("--log", "/logs/requests.jsonl", volumes=volumes) as url:
        sdks = subprocess.run(
            [sys.executable, "four_wires.py", url], cwd=tmp_path, capture_output=True, text=True
        )
        mine = _chat(url, "mine")
        bedrock = _bedrock(url)
    FIGURES.append(f"container: healthy {ctr.started_in:.2f} s after `buildah run`")
    assert sdks.stdout.splitlines() == [HELLO] * 4, sdks.stdout + sdks.stderr
    assert mine == "from the mounted folder"
    assert bedrock == HELLO  # the fifth wire, through boto3
    log = folders["logs"] / "requests.jsonl"
    assert len(log.read_text().splitlines()) == 6
    assert log.stat().st_uid == 10001  # written by the image's user, not root


def test_the_health_check_passes_while_it_serves_and_fails_when_nothing_does(
    image: str, ctr: Container
) -> None:
    config = container.inspect(image)
    kind, *check = config["Healthcheck"]["Test"]
    assert kind == "CMD"
    with ctr.serving() as url:
        port = url.rsplit(":", 1)[1]
        serving = ctr.execute(*check, env={"MOCKLLM_PORT": port})
    stopped = ctr.execute(*check, env={"MOCKLLM_PORT": port})
    assert serving.returncode == 0, serving.stderr
    assert stopped.returncode != 0


def test_a_command_runs_as_given(ctr: Container, folders: dict[str, Path]) -> None:
    done = ctr.execute("mockllm-entrypoint", "mockllm", "validate", "/scenarios",
                       volumes={folders["scenarios"]: "/scenarios:ro"})  # fmt: skip
    assert done.stdout == "ok: 1 scenario in 1 file\n", done.stdout + done.stderr


# --- the recipes of docs/container.md, as written ---------------------------------------------


def _doc_block(name: str, language: str, after: str) -> str:
    text = (ROOT / "docs" / name).read_text()
    blocks: list[str] = re.findall(rf"```{language}\n(.*?)```", text.split(after, 1)[1], re.S)
    return blocks[0]


def test_the_docker_run_recipe(ctr: Container, folders: dict[str, Path]) -> None:
    """`docker run` with a scenarios folder and a log folder, as the host's user: its
    volumes, user and arguments run for real; the port it publishes is the container's own
    here (buildah run shares the host's network)."""
    [line] = [
        ln for ln in _doc_block("container.md", "sh", "## Run it").splitlines() if "run" in ln
    ]
    argv = shlex.split(line.replace('"$PWD', str(folders["scenarios"].parent)).replace('"', ""))
    assert argv[:3] == ["docker", "run", "--rm"]
    volumes, user, rest = {}, None, argv[3:]
    while rest[0].startswith("-"):
        flag, value, *rest = rest
        if flag == "-v":
            host, inside = value.split(":", 1)
            volumes[Path(host)] = inside
        elif flag == "--user":
            user = f"{os.getuid()}:{os.getgid()}"
    image, *args = rest
    assert image == "mockllm"
    with ctr.serving(*args, volumes=volumes, user=user) as url:
        assert _chat(url, "mine") == "from the mounted folder"
    log = folders["logs"] / "requests.jsonl"
    assert log.stat().st_uid == os.getuid()  # the host user's to read
    assert len(log.read_text().splitlines()) == 1


def _health_argv(service: dict[str, Any]) -> list[str]:
    kind, *check = service["healthcheck"]["test"]
    assert kind == "CMD"
    return [str(part) for part in check]


def test_the_compose_service(image: str, ctr: Container, folders: dict[str, Path]) -> None:
    compose = yaml.safe_load((ROOT / "examples" / "container" / "compose.yaml").read_text())
    service = compose["services"]["mockllm"]
    # The health check is the image's own, so `docker compose up --wait` and a bare
    # `docker run` agree on when the server is up.
    assert ["CMD", *_health_argv(service)] == container.inspect(image)["Healthcheck"]["Test"]
    here = folders["scenarios"].parent
    volumes = {}
    for volume in service["volumes"]:
        host, inside = volume.split(":", 1)
        volumes[here / host.removeprefix("./")] = inside
    user = service["user"].replace("${UID:-10001}", str(os.getuid()))
    user = user.replace("${GID:-10001}", str(os.getgid()))
    with ctr.serving(*service["command"], volumes=volumes, user=user) as url:
        port = url.rsplit(":", 1)[1]
        healthy = ctr.execute(*_health_argv(service), env={"MOCKLLM_PORT": port})
        assert _chat(url, "mine", host=f"mockllm:{port}") == "from the mounted folder"
        admin = httpx.get(url + "/_mockllm/requests", headers={"Host": f"mockllm:{port}"})
    assert healthy.returncode == 0, healthy.stderr
    assert admin.status_code == 200 and len(admin.json()) == 1  # --allow-host mockllm
    assert (folders["logs"] / "requests.jsonl").stat().st_uid == os.getuid()


def test_the_github_actions_service(ctr: Container) -> None:
    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions-service.yml").read_text())
    job = workflow["jobs"]["test"]
    service = job["services"]["mockllm"]
    assert service["ports"] == ["8000:8000"]
    assert job["env"]["MOCKLLM_URL"] == "http://localhost:8000"
    # A service takes no command: the image's entry point with the service's environment.
    with ctr.serving(env=service["env"]) as url:
        assert _chat(url, "hello") == HELLO
        logged = ctr.execute("cat", "/tmp/requests.jsonl")
    assert len(logged.stdout.splitlines()) == 1, logged.stderr
    steps = " ".join(str(s.get("run", "")) for s in job["steps"])
    assert '--mockllm-url "$MOCKLLM_URL"' in steps


def test_the_gitlab_ci_service(ctr: Container) -> None:
    job = yaml.safe_load((ROOT / "examples" / "ci" / "gitlab-ci.yml").read_text())["test"]
    [service] = job["services"]
    alias = service["alias"]
    assert job["variables"]["MOCKLLM_URL"] == f"http://{alias}:8000"
    with ctr.serving(*service["command"]) as url:
        port = url.rsplit(":", 1)[1]
        # The job reaches the service under its alias: the admin routes must answer there.
        admin = httpx.get(url + "/_mockllm/health", headers={"Host": f"{alias}:{port}"})
    with ctr.serving() as url:
        port = url.rsplit(":", 1)[1]
        refused = httpx.get(url + "/_mockllm/requests", headers={"Host": f"{alias}:{port}"})
    assert admin.status_code == 200
    assert refused.status_code == 403  # without the service's command: the guard's answer


def test_the_pytest_plugin_and_the_node_client_against_the_container(
    ctr: Container, tmp_path: Path
) -> None:
    [(name, code)] = doc_test_files("README.md")
    (tmp_path / name).write_text(code)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    [(js_name, js_code)] = re.findall(
        r"```js file=(\S+)\n(.*?)```", (ROOT / "docs" / "node.md").read_text(), re.S
    )
    node_project = ROOT / "tests" / "node"  # has the Node client and the OpenAI SDK installed
    script = node_project / f".image-{js_name}"
    script.write_text(js_code)
    try:
        with ctr.serving() as url:
            python = subprocess.run(
                [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                 "--mockllm-url", url, name],
                cwd=tmp_path, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            node = subprocess.run(
                ["node", "--test", script.name],
                cwd=node_project,
                env={**os.environ, "MOCKLLM_URL": url},
                capture_output=True,
                text=True,
                timeout=120,
            )
    finally:
        script.unlink()
    assert re.search(r"^=+ 1 passed in ", python.stdout, re.M), python.stdout + python.stderr
    assert node.returncode == 0 and "# pass 1" in node.stdout, node.stdout + node.stderr


def test_the_testcontainers_recipe(
    image: str, folders: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Python recipe, run as written by testcontainers itself, on a stand-in for the
    Docker engine (tests/image/testcontainers_double.py)."""
    import testcontainers.core.container as tc
    from testcontainers.core.config import testcontainers_config

    from .testcontainers_double import Engine

    monkeypatch.setenv("TESTCONTAINERS_RYUK_DISABLED", "true")  # its reaper is a container too
    monkeypatch.setattr(testcontainers_config, "ryuk_disabled", True)
    monkeypatch.setattr(tc, "DockerClient", Engine)
    monkeypatch.setattr(Engine, "image_tag", image)
    monkeypatch.setattr(Engine, "asked", [])
    code = _doc_block("container.md", "python", "## Testcontainers")
    code = code.replace("/path/to/scenarios", str(folders["scenarios"]))
    code = code.replace("/s/hello/v1", "/s/mine/v1")
    names: dict[str, Any] = {}
    exec(compile(code, "docs/container.md", "exec"), names)
    assert names["reply"].choices[0].message.content == "from the mounted folder"
    [asked] = Engine.asked
    assert asked["image"] == "mockllm"
    assert list(asked["ports"]) == ["8000"]  # the image's EXPOSE
    assert asked["volumes"] == {str(folders["scenarios"]): {"bind": "/scenarios", "mode": "ro"}}
