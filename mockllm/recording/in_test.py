"""Record if missing, inside a test run (`pytest --mockllm-record=once`): the recorder of
`mockllm record` on a background thread, each test's session written to the scenario file
its marker names, the same editable YAML `mockllm record` writes (docs/record.md).

The upstream's URL comes from the environment (MOCKLLM_RECORD_UPSTREAM); the key is the
harness's own, sent in its request headers and passed on unchanged: the recorder learns
it to mask it, and never writes or prints it.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from mockllm.options import DEFAULTS
from mockllm.recording.proxy import Recorder
from mockllm.recording.redact import Redactor
from mockllm.recording.run import public_url, recorder_config
from mockllm.recording.sessions import Sessions, scenario_name
from mockllm.serving.responder import quiet_scripted_aborts
from mockllm.serving.server import Server, bind, url_of

UPSTREAM_ENV = "MOCKLLM_RECORD_UPSTREAM"
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the recorder is local


class _Targets(Sessions):
    """Sessions written where the tests say, each named after its file."""

    def __init__(self, upstream: str, redactor: Redactor) -> None:
        super().__init__(Path("recordings"), upstream, redactor)
        self.targets: dict[str, Path] = {}

    def path(self, name: str) -> Path:
        return self.targets.get(name) or super().path(name)

    def scenario_of(self, name: str) -> str:
        target = self.targets.get(name)
        return target.stem if target is not None else name


class TestRecorder:
    """`mockllm record` in this process, for the tests that record."""

    __test__ = False  # pytest: not a test class

    def __init__(
        self,
        upstream: str,
        redact: Sequence[str] = (),
        max_body: int = DEFAULTS.max_body,
        port: int = 0,
    ) -> None:
        quiet_scripted_aborts()
        self.upstream = upstream
        redactor = Redactor(redact)
        self.sessions = _Targets(public_url(upstream), redactor)
        self.lines: list[str] = []  # the recorder's console lines: paths and statuses only
        app = Recorder(upstream, self.sessions, redactor, max_body, self.lines.append)
        self._sock = bind("127.0.0.1", port)  # 0: a free port
        self.url = url_of(self._sock)
        config = recorder_config(app, DEFAULTS.keep_alive)
        self._ready = threading.Event()
        self._server = Server(config, self._ready.set)
        self._thread = threading.Thread(target=self._run, name="mockllm recorder", daemon=True)

    def start(self, timeout: float = 20.0) -> TestRecorder:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError(f"mockllm: the recorder did not start within {timeout} s")
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._sock.close()

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._sock])
        finally:
            self._ready.set()

    def url_for(self, scenario: str, session: str, api: str = "openai") -> str:
        """The base URL a test's SDK records through: `/s/SCENARIO/SESSION[/v1]`."""
        path = f"/s/{quote(scenario, safe='')}/{quote(session, safe='')}"
        # The SDKs whose base URL carries /v1 (testing.session.WITH_V1, a layer above).
        return self.url + path + ("/v1" if api in ("openai", "vertex-anthropic") else "")

    def target(self, scenario: str, session: str, path: Path) -> None:
        """Write the session recorded under `scenario` to `path`."""
        self.sessions.targets[scenario_name(scenario, session)] = path

    def end(self, scenario: str, session: str) -> tuple[Path, int] | None:
        """Wait for the session's exchanges in flight and its file: (path, turns), or None
        when no request of the test went through the recorder."""
        name = scenario_name(scenario, session)
        url = f"{self.url}/_mockllm/record/end?name={quote(name, safe='')}"
        request = urllib.request.Request(url, data=b"", method="POST")
        try:
            with _OPENER.open(request, timeout=60) as answer:
                data = json.loads(answer.read())
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise
        return Path(data["path"]), int(data["turns"])
