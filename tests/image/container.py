"""The image built from the real Containerfile and run, on a machine with no Docker daemon.

buildah builds it (`bud --isolation chroot`) and runs its commands (`run --isolation
chroot`, sharing the host's network, so a server inside listens on the host's loopback);
podman imports the base. The base is Debian's own (tests/image/debian-base.sh), swapped in
through the Containerfile's BASE argument; the wheels the build installs come from a
wheelhouse served on loopback (`PIP_OPTIONS=--no-index --find-links URL`), so the build
reaches no registry. Everything else is the Containerfile as a user builds it.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import IO, Any

import httpx

from tests.support import ROOT
from tests.support.wheelhouse import download, pins

TOOLS = ("buildah", "podman", "debootstrap")
CACHE = Path(os.environ.get("MOCKLLM_IMAGE_CACHE", "/var/tmp/mockllm-image"))
BASE = "localhost/mockllm-test-base:bookworm"
EXTRAS = ("mcp", "redis", "record")  # the Containerfile's default


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def run(*command: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(c) for c in command], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done


def ensure_base() -> None:
    """The Debian base, imported once per machine (its root filesystem kept in CACHE)."""
    if subprocess.run(["buildah", "inspect", BASE], capture_output=True).returncode != 0:
        run("sh", ROOT / "tests" / "image" / "debian-base.sh", BASE, CACHE, timeout=1200)


def fill_wheels(folder: Path) -> None:
    """The wheels of mockllm-server's dependencies with the image's extras, and the build
    backend, at this environment's versions, for the base's Python (Debian's 3.11)."""
    requires = metadata.requires("mockllm-server") or []
    wanted = [r.split(";")[0] for r in requires if _in_image(r)]
    # redis wants async-timeout below Python 3.11.3; Debian bookworm's is 3.11.2, and
    # markers are read here for this interpreter, not the base's.
    wanted.append("async-timeout>=4.0.3")
    download(folder, [*wanted, *pins(("setuptools",))])


def _in_image(requirement: str) -> bool:
    if "extra ==" not in requirement:
        return True
    return any(f'extra == "{extra}"' in requirement for extra in EXTRAS)


@contextmanager
def wheel_index(folder: Path) -> Iterator[str]:
    """`folder` served on loopback as a page of links, which pip's --find-links reads."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def build(context: Path, tag: str, **build_args: str) -> None:
    """`buildah bud` of `context` with its own Containerfile and .dockerignore; the Docker
    format, as OCI's has no HEALTHCHECK."""
    args = [f"--build-arg={k}={v}" for k, v in build_args.items()]
    run(
        "buildah", "bud", "--isolation", "chroot", "--format", "docker", "--quiet",
        "-f", context / "Containerfile", *args, "-t", tag, context, timeout=1200,
    )  # fmt: skip


def inspect(image: str) -> dict[str, Any]:
    """The image's Docker config (User, Entrypoint, Labels, Healthcheck, ...)."""
    done = run("buildah", "inspect", "--type", "image", image)
    config: dict[str, Any] = json.loads(done.stdout)["Docker"]["config"]
    return config


def size_mb(image: str) -> float:
    done = run("podman", "image", "inspect", "--format", "{{.Size}}", image)
    return int(done.stdout.strip()) / 1e6


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Container:
    """A working container of `image`: `buildah from`, commands by `buildah run`."""

    def __init__(self, image: str) -> None:
        self.name = run("buildah", "from", "--quiet", image).stdout.strip()
        self.started_in = 0.0  # seconds from `buildah run` to the first healthy answer

    def run_argv(
        self,
        *command: str,
        volumes: dict[Path, str] | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
    ) -> list[str]:
        argv = ["buildah", "run", "--isolation", "chroot"]
        for host, inside in (volumes or {}).items():
            argv += ["-v", f"{host}:{inside}"]
        for key, value in (env or {}).items():
            argv += ["--env", f"{key}={value}"]
        if user:
            argv += ["--user", user]
        return [*argv, self.name, "--", *command]

    def execute(self, *command: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        argv = self.run_argv(*command, **kwargs)
        return subprocess.run(argv, capture_output=True, text=True, timeout=120)

    @contextmanager
    def serving(
        self,
        *args: str,
        volumes: dict[Path, str] | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        command: tuple[str, ...] = ("mockllm-entrypoint",),
    ) -> Iterator[str]:
        """The image's entry point in the background on a free port (MOCKLLM_PORT, as a
        container's environment sets it); yields the URL once it answers its health."""
        port = free_port()
        env = {"MOCKLLM_PORT": str(port), **(env or {})}
        argv = self.run_argv(*command, *args, volumes=volumes, env=env, user=user)
        started = time.monotonic()
        with tempfile.TemporaryFile("w+") as out:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, text=True,
                                       start_new_session=True)  # fmt: skip
            url = f"http://127.0.0.1:{port}"
            try:
                _wait_healthy(url, process, out)
                self.started_in = time.monotonic() - started
                yield url
            finally:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()

    def remove(self) -> None:
        subprocess.run(["buildah", "rm", self.name], capture_output=True)


def _wait_healthy(url: str, process: subprocess.Popen[str], out: IO[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            out.seek(0)
            raise AssertionError(f"the container exited {process.returncode}:\n{out.read()}")
        try:
            if httpx.get(url + "/_mockllm/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the container did not answer {url}/_mockllm/health within 60 s")
