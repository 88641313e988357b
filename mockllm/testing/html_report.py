"""`pytest --mockllm-html=PATH`: the viewer's static report of a test run. Each test that
used the `mockllm` fixture is one session, named after the test and shown with its
outcome, failing tests first.

A test's log entries are read when its fixture ends, from whichever server it used (this
process's, or `--mockllm-url`'s). Under xdist each worker ships its share to the
controller through `workeroutput`, and the controller, which sees every test's reports,
writes the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

_SHIPPED = "mockllm_html"  # the workeroutput key
_WORSE = {"passed": 0, "skipped": 0, "xfailed": 0, "xpassed": 1, "failed": 2, "error": 2}


class HtmlReport:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.sessions: dict[str, str] = {}  # test node id -> its session
        self.allowed: dict[str, dict[str, str]] = {}  # test node id -> checks it waives
        self.entries: list[Mapping[str, Any]] = []
        self.outcomes: dict[str, dict[str, str]] = {}  # node id -> {outcome, message}

    def begin(self, nodeid: str, session: str, allow: Mapping[str, str] | None = None) -> None:
        """A test's session, as its `mockllm` fixture starts (so a test whose set-up fails
        is in the report too), with the verdict checks it waives."""
        self.sessions[nodeid] = session
        if allow:
            self.allowed[nodeid] = dict(allow)

    def end(self, entries: list[Mapping[str, Any]]) -> None:
        """The test's log entries, as its fixture ends."""
        self.entries.extend(entries)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        outcome = _outcome(report)
        known = self.outcomes.get(report.nodeid)
        if known is None or _WORSE[outcome] > _WORSE[known["outcome"]]:
            self.outcomes[report.nodeid] = {"outcome": outcome, "message": _message(report)}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        shipped = getattr(node, "workeroutput", {}).get(_SHIPPED)
        if shipped:
            share = json.loads(shipped)
            self.sessions.update(share["sessions"])
            self.allowed.update(share.get("allowed", {}))
            self.entries.extend(share["entries"])

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = session.config
        if hasattr(config, "workerinput"):  # an xdist worker: the controller writes
            share = {"sessions": self.sessions, "entries": self.entries, "allowed": self.allowed}
            config.workeroutput[_SHIPPED] = json.dumps(share)  # type: ignore[attr-defined]
            return
        self.write()

    def write(self) -> None:
        from mockllm.viewer.page import report_page

        tests: list[dict[str, Any]] = [
            {
                "session": session,
                "test": nodeid,
                **self.outcomes.get(nodeid, _UNKNOWN),
                **({"allow": self.allowed[nodeid]} if nodeid in self.allowed else {}),
            }
            for nodeid, session in self.sessions.items()
        ]
        # Failing first, then by test id: under xdist the order tests finish in is not the
        # same from run to run, and the same results should make the same page.
        tests.sort(key=lambda t: (-_WORSE[t["outcome"]], t["test"]))
        place = {t["session"]: i for i, t in enumerate(tests)}
        entries = sorted(self.entries, key=lambda e: (place.get(str(e["session"]), -1), e["seq"]))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(report_page(entries, tests, "mockllm: pytest run"), "utf-8")

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not hasattr(terminalreporter.config, "workerinput"):
            terminalreporter.write_line(
                f"mockllm: wrote {self.path} ({len(self.sessions)} tests, "
                f"{len(self.entries)} model requests)"
            )


_UNKNOWN = {"outcome": "passed", "message": ""}


def _outcome(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    if report.failed:
        return "failed" if report.when == "call" else "error"
    return str(report.outcome)


def _message(report: pytest.TestReport) -> str:
    if not report.failed:
        return ""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = str(crash.message) if crash is not None else report.longreprtext
    return text[-4000:]
