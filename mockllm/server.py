"""Run the app on uvicorn: bind (port 0 allowed), announce the real URL, serve —
in the foreground for `mockllm serve`, or on a background thread for `mockllm.serve()`."""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG

from .app import MockLLM, Settings
from .engine import Engine
from .journal import Journal
from .loader import BUNDLED, load_paths
from .responder import quiet_scripted_aborts
from .scenario import Chaos, Flavor, Scenario, ValidationMode

ScenarioPath = str | Path | Scenario


def build_app(
    scenarios: Iterable[Scenario],
    *,
    default: str | None = None,
    validation: ValidationMode = "strict",
    flavor: Flavor = "openai",
    chaos: Chaos | None = None,
    seed: int = 0,
    real_time: bool = False,
    log: str | None = None,
    log_limit: int = 10_000,
    log_body_cap: int = 65_536,
    max_body: int = 10 * 1024 * 1024,
    max_stall: float = 30.0,
) -> MockLLM:
    """The app `mockllm serve` runs, with the same options (see `mockllm serve --help`)."""
    scenarios = list(scenarios)
    if default and default not in {s.name for s in scenarios}:
        raise ValueError(f"default {default!r} is not a loaded scenario")
    engine = Engine(scenarios, default, validation, real_time, flavor, chaos, seed)
    journal = Journal(log_limit, log, log_body_cap)
    return MockLLM(engine, journal, Settings(max_body=max_body, max_stall=max_stall))


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit this on Linux; uvicorn's own bind would set it per
    # connection, but a pre-bound socket must not fall into the 40 ms Nagle trap.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._on_ready()


def _config(app: MockLLM, in_process: bool) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        lifespan="off",
        access_log=False,
        log_level="warning",
        # In someone else's process, leave their logging configuration alone.
        log_config=None if in_process else LOGGING_CONFIG,
        server_header=False,
        date_header=False,  # byte-identical responses, headers included
        timeout_graceful_shutdown=1,
    )


def run(app: MockLLM, host: str, port: int, ready_file: str | None, banner: str) -> None:
    quiet_scripted_aborts()
    sock = bind(host, port)
    url = url_of(sock)

    def ready() -> None:
        print(banner.format(url=url), flush=True)
        if ready_file:
            tmp = Path(ready_file + ".tmp")
            tmp.write_text(url + "\n")
            tmp.replace(ready_file)  # atomic: a waiter never reads half a URL

    try:
        _Server(_config(app, in_process=False), ready).run(sockets=[sock])
    finally:
        app.journal.shutdown()
        sock.close()
    sys.stdout.flush()


class RunningServer:
    """A server on a background thread of this process: `url`, `client`, and `app` itself.

    `with mockllm.serve() as server:` stops it on exit; without `with`, call `stop()`.
    """

    def __init__(self, app: MockLLM, host: str = "127.0.0.1", port: int = 0) -> None:
        quiet_scripted_aborts()
        self.app = app
        self._sock = bind(host, port)
        self.url = url_of(self._sock)
        from .client import Client  # deferred: `mockllm serve` never needs it

        self.client = Client(self.url)
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._server = _Server(_config(app, in_process=True), self._ready.set)
        # A daemon: a server someone forgot to stop must not keep the interpreter alive.
        self._thread = threading.Thread(target=self._run, name=f"mockllm {self.url}", daemon=True)

    def __repr__(self) -> str:
        return f"<mockllm server {self.url}>"

    def start(self, timeout: float = 20.0) -> RunningServer:
        self._thread.start()
        if not self._ready.wait(timeout):
            self.stop()
            raise RuntimeError(f"mockllm: the server did not start within {timeout} s")
        if self._failure is not None:
            self.stop()
            raise RuntimeError("mockllm: the server failed to start") from self._failure
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.app.journal.shutdown()
        self._sock.close()

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._sock])
        except BaseException as e:  # uvicorn reports a failed startup with SystemExit
            self._failure = e
        finally:
            self._ready.set()  # a failure must wake start(), not leave it waiting


def serve(
    scenarios: Iterable[ScenarioPath] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    **options: Any,
) -> RunningServer:
    """Start a server in this process and wait until it accepts requests.

    `scenarios`: files, folders or `Scenario` objects (default: the bundled library;
    a `Scenario` replaces a file's of the same name). `options` are `build_app`'s, which
    are `mockllm serve`'s: default, validation, flavor, chaos, seed, real_time, log,
    log_limit, log_body_cap, max_body, max_stall.
    """
    return RunningServer(build_app(_load(scenarios), **options), host, port).start()


def _load(sources: Iterable[ScenarioPath] | None) -> list[Scenario]:
    sources = [BUNDLED] if sources is None else list(sources)
    built = [s for s in sources if isinstance(s, Scenario)]
    paths = [s for s in sources if not isinstance(s, Scenario)]
    return load_paths(paths) + built if paths else built
