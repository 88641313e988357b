"""The run id of a pytest run: the end of every session name it uses (`TEST-HASH~RUN`),
so two runs against one server, and the xdist workers of two runs, never share a session
(docs/ci.md, "One server for several jobs").

Drawn afresh for each run, so a rerun (`--lf`, a CI job's rerun) has its own sessions too;
`--mockllm-run-id`, $MOCKLLM_RUN_ID or the `mockllm_run_id` ini option fix it instead (a CI
system that names the run). The xdist controller draws it and hands it to its workers.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from mockllm.log.runs import RUN_ID

RUN_ID_ENV = "MOCKLLM_RUN_ID"
_RUN_ID = pytest.StashKey[str]()
_WORKER_KEY = "mockllm_run_id"


def addoption(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    group.addoption(
        "--mockllm-run-id",
        metavar="ID",
        help="the run id every session name of this run ends in (TEST-HASH~ID), so runs "
        "sharing a server never share a session: drawn afresh for each run unless given "
        f"here, in ${RUN_ID_ENV} or the mockllm_run_id ini option (1 to 40 letters, digits, "
        "'.', '_' or '-')",
    )
    parser.addini(
        "mockllm_run_id",
        default="",
        help=f"a fixed run id for every run (see --mockllm-run-id; ${RUN_ID_ENV} wins over it)",
    )


def configure(config: pytest.Config) -> None:
    """Settle the run's id (a worker takes its controller's) and pass it to xdist workers."""
    worker = getattr(config, "workerinput", None)
    given = worker.get(_WORKER_KEY) if worker else None
    config.stash[_RUN_ID] = given or _given(config) or os.urandom(3).hex()
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_ToWorkers(config.stash[_RUN_ID]), "mockllm-run-id")


def run_id(config: pytest.Config) -> str:
    return config.stash[_RUN_ID]


def _given(config: pytest.Config) -> str | None:
    for where, value in (
        ("--mockllm-run-id", config.getoption("mockllm_run_id", None)),
        (f"${RUN_ID_ENV}", os.environ.get(RUN_ID_ENV)),
        ("mockllm_run_id (ini)", config.getini("mockllm_run_id")),
    ):
        if value:
            if not RUN_ID.fullmatch(value):
                raise pytest.UsageError(
                    f"{where}: {value!r} is not a run id (1 to 40 letters, digits, '.', '_' or '-')"
                )
            return str(value)
    return None


class _ToWorkers:
    def __init__(self, run: str) -> None:
        self.run = run

    def pytest_configure_node(self, node: Any) -> None:  # xdist's hook, in the controller
        node.workerinput[_WORKER_KEY] = self.run
