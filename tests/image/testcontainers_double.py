"""A stand-in for the Docker engine that `testcontainers` drives, running the image with
buildah instead (tests/image/container.py), so docs/container.md's Testcontainers recipe
runs as written on a machine with no daemon.

testcontainers' own code runs: the container's builder, its start, the HTTP wait strategy
polling the health route, the host and mapped port it hands the recipe. Only its
`DockerClient` is replaced, by `Engine` below, which records what the recipe asked for
(image, ports, volumes, environment) so the test can check it, and serves the image with
the volumes mounted; the port the recipe asks for maps to the free port the server listens
on (buildah run shares the host's network, where a daemon would publish the port).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from testcontainers.core.config import ConnectionMode

from .container import Container


class Engine:
    """What testcontainers calls on its `DockerClient`, and what it was asked."""

    image_tag = ""  # the image the recipe's name stands for
    asked: list[dict[str, Any]] = []  # noqa: RUF012  # one per container created

    def __init__(self, **_: Any) -> None:
        self.client = self  # testcontainers closes `client` on stop

    def close(self) -> None:
        pass

    def create(self, image: str, **kwargs: Any) -> _Running:
        Engine.asked.append({"image": image, **kwargs})
        return _Running(Engine.image_tag, kwargs)

    def start(self, container: _Running) -> None:
        container.start()

    def port(self, container_id: str, port: int) -> str:
        return str(_Running.by_id[container_id].port_of(port))

    def host(self) -> str:
        return "127.0.0.1"

    def get_connection_mode(self) -> ConnectionMode:
        return ConnectionMode.docker_host


class _Running:
    """The container object testcontainers holds (docker-py's `Container`)."""

    by_id: dict[str, _Running] = {}  # noqa: RUF012

    def __init__(self, image: str, asked: dict[str, Any]) -> None:
        self._made = Container(image)
        self.id = self.short_id = self._made.name
        self._asked = asked
        self._serving: contextlib.ExitStack | None = None
        self._url = ""
        self.status = "created"
        _Running.by_id[self.id] = self

    def start(self) -> None:
        volumes = {
            Path(host): f"{mount['bind']}:{mount['mode']}"
            for host, mount in (self._asked.get("volumes") or {}).items()
        }
        stack = contextlib.ExitStack()
        self._url = stack.enter_context(
            self._made.serving(volumes=volumes, env=self._asked.get("environment") or {})
        )
        self._serving = stack
        self.status = "running"

    def port_of(self, port: int) -> int:
        exposed = {str(p).removesuffix("/tcp") for p in self._asked.get("ports") or {}}
        assert str(port) in exposed, f"port {port} was not exposed: {sorted(exposed)}"
        return int(self._url.rsplit(":", 1)[1])

    def reload(self) -> None:
        pass

    def logs(self, **_: Any) -> bytes:
        return b""

    def remove(self, **_: Any) -> None:
        if self._serving is not None:
            self._serving.close()
        self._made.remove()
        self.status = "exited"
        _Running.by_id.pop(self.id, None)
