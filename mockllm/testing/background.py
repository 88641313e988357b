"""A server on a background thread of this process: `mockllm.serve()`, the pytest fixture."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from mockllm.core.scenario import Scenario
from mockllm.loading.loader import BUNDLED, load_paths
from mockllm.options import DEFAULTS, ServerOptions
from mockllm.serving.app import MockLLM
from mockllm.serving.responder import quiet_scripted_aborts
from mockllm.serving.server import Server, bind, build_app, url_of, uvicorn_config
from mockllm.testing.client import Client

ScenarioPath = str | Path | Scenario


class RunningServer:
    """A server on a background thread of this process: `url`, `client`, and `app` itself.

    `with mockllm.serve() as server:` stops it on exit; without `with`, call `stop()`.
    """

    def __init__(self, app: MockLLM, host: str = "127.0.0.1", port: int = 0) -> None:
        quiet_scripted_aborts()
        self.app = app
        self._sock = bind(host, port)
        self.url = url_of(self._sock)
        self.client = Client(self.url)
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._server = Server(uvicorn_config(app, in_process=True), self._ready.set)
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
    options: ServerOptions = DEFAULTS,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
) -> RunningServer:
    """Start a server in this process and wait until it accepts requests.

    `scenarios`: files, folders or `Scenario` objects (default: the bundled library;
    a `Scenario` replaces a file's of the same name). `options`: those of
    `mockllm serve`, e.g. `ServerOptions(validation="warn", log="run.jsonl")`. One server on
    one thread: `workers` is for `mockllm serve` only.
    """
    if options.workers != 1:
        raise ValueError("mockllm.serve() runs one server on a thread; --workers is for the CLI")
    return RunningServer(build_app(_load(scenarios), options), host, port).start()


def _load(sources: Iterable[ScenarioPath] | None) -> list[Scenario]:
    sources = [BUNDLED] if sources is None else list(sources)
    built = [s for s in sources if isinstance(s, Scenario)]
    paths = [s for s in sources if not isinstance(s, Scenario)]
    return load_paths(paths) + built if paths else built
