"""A test's session while it records (`pytest --mockllm-record=once`): its SDK's base URL
goes to the recorder, which passes every request on to the real API and writes the
session to the scenario file the test's marker names. Nothing reaches this process's
server, so there is no log to assert on: a log read skips the rest of the test, which
replays (and asserts) on the next run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mockllm.core.scenario import Flavor
from mockllm.log.records import LogEntry, Verdict
from mockllm.recording.in_test import TestRecorder
from mockllm.testing.session import Api, Server, Session


class RecordingSession(Session):
    recording = True

    def __init__(self, client: Server, name: str, recorder: TestRecorder, target: Path) -> None:
        super().__init__(client, name)
        self.recorder, self.target = recorder, target
        self.scenarios: list[str] = []  # the names the test asked URLs for

    def url(self, scenario: str, api: Api = "openai", flavor: Flavor | None = None) -> str:
        """The recorder's base URL: requests go to the real API, answers come back as they
        arrive, and the session is written to the marker's file. `flavor` is taken and
        unused: the upstream is the provider itself, so the same test records and replays."""
        __tracebackhide__ = True
        if scenario != self.target.stem:  # a replay finds the file's scenario by this name
            raise ValueError(
                f"mockllm: this test records into {self.target.name}, so its scenario is "
                f"{self.target.stem!r}: call url({self.target.stem!r}), or name the file "
                f"{scenario}.yaml"
            )
        if scenario not in self.scenarios:
            self.scenarios.append(scenario)
            self.recorder.target(scenario, self.name, self.target)
        return self.recorder.url_for(scenario, self.name, api)

    def requests(self, *args: Any, **kwargs: Any) -> list[LogEntry]:
        self._no_log()
        return []

    def logged(self) -> list[LogEntry]:
        self._no_log()
        return []

    def verdict(self, max_calls: int | None = None) -> Verdict:
        self._no_log()
        raise AssertionError("unreachable")

    def end(self) -> list[tuple[Path, int]]:
        """Every recorded file complete: (path, turns) of each."""
        written = (self.recorder.end(s, self.name) for s in self.scenarios)
        return [w for w in written if w is not None]

    def _no_log(self) -> None:
        __tracebackhide__ = True
        pytest.skip(
            f"mockllm: recorded {self.target.name} from the real API; this run has no log to "
            "assert on: run the test again to replay it and check"
        )
