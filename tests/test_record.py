"""`mockllm record` end to end: a real upstream on loopback (a mockllm server playing the API,
every bundled failure scenario as the model), a real recorder process in between, the
official SDKs as clients; then the recorded file served by mockllm and the same client code
run again, which must see the same thing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from mockllm import load_paths
from mockllm.core.scenario import Scenario
from mockllm.testing.client import Client

from .drivers import DRIVERS, Driver, View, Walker
from .support import BUNDLED, ServerProcess, running_command, running_server

SCENARIOS = sorted(load_paths([BUNDLED]), key=lambda s: s.name)
SECRET_KEY = "sk-proj-Zq81secretKEYvalue0001"


@dataclass
class Recorder:
    server: ServerProcess  # the recorder, reachable like a server by the drivers
    out: Path

    def end(self, name: str) -> Path:
        """End a session: its exchanges in flight are finished, its file complete."""
        r = self.server.http.post("/_mockllm/record/end", params={"name": name})
        r.raise_for_status()
        return Path(r.json()["path"])


@pytest.fixture(scope="module")
def recorder(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorder]:
    out = tmp_path_factory.mktemp("recordings")
    upstream = f"{server.url}/s/{{scenario}}/{{session}}"
    with running_command("record", "--upstream", upstream, "--out", str(out)) as process:
        yield Recorder(process, out)


@pytest.fixture(scope="module")
def replay() -> Iterator[ServerProcess]:
    """A plain `mockllm serve` (validation strict) that recorded files are added to."""
    with running_server(scenarios=()) as s:
        yield s


# --- what a client sees ------------------------------------------------------------------


def outcome(driver: Driver, request: dict[str, Any], streamed: bool) -> tuple[Any, View | None]:
    """What one attempt gave the client: the reply's content, or the error it raised."""
    try:
        view = driver.stream(request) if streamed else driver.create(request)
    except Exception as e:  # every failure is compared, whatever its class
        return _error(e), None
    calls = [(name, arguments) for _, name, arguments in view.calls]
    return ("reply", view.text, view.reasoning, calls, view.finish), view


def _error(e: Exception) -> tuple[Any, ...]:
    response = getattr(e, "response", None)
    if isinstance(e, (openai.APIStatusError, anthropic.APIStatusError)):
        headers = {k: response.headers.get(k) for k in ("retry-after", "retry-after-ms")}
        body = e.body.get("error", e.body) if isinstance(e.body, dict) else e.body
        return ("error", type(e).__name__, e.status_code, body, headers)
    if isinstance(e, (openai.APIError, anthropic.APIError)) and not isinstance(
        e, (openai.APIConnectionError, anthropic.APIConnectionError)
    ):
        return ("error", type(e).__name__, e.message)
    return ("error", type(e).__name__)  # connection errors, a body that does not parse


def walk(driver: Driver, guide: Scenario, streamed: bool) -> list[Any]:
    """Play `guide`'s turns as the test harness does (SDK retries off): the attempts a
    fault spoils, then the one that is served; the outcome of each, in order."""
    walker = Walker(guide, driver)
    seen = []
    for turn in guide.turns:
        request = walker.request()
        fault = turn.fault
        spoiled = 0 if fault is None or fault.kind == "delay" else fault.times or 1
        extra = {"timeout": 0.5} if fault is not None and fault.stall else {}
        for _ in range(spoiled):
            seen.append(outcome(driver, {**request, **extra}, streamed)[0])
        if spoiled and fault is not None and fault.times is None:
            break  # every attempt gets the fault
        result, view = outcome(driver, request, streamed)
        seen.append(result)
        if view is None:
            break
        walker.advance(view)
    return seen


# --- the proof ----------------------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["create", "stream"])
@pytest.mark.parametrize("api", sorted(DRIVERS))
@pytest.mark.parametrize("guide", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_a_recorded_session_replays_as_it_happened(
    server: ServerProcess,
    recorder: Recorder,
    replay: ServerProcess,
    session: str,
    api: str,
    guide: Scenario,
    streamed: bool,
) -> None:
    """Directly against the upstream, through the recorder, and from the recorded file:
    the same client code sees the same replies and the same errors, attempt by attempt."""
    direct = play(server, guide.name, f"{session}-direct", api, guide, streamed)
    recorded = play(recorder.server, guide.name, session, api, guide, streamed)
    assert recorded == direct  # the recorder is transparent
    path = recorder.end(f"{guide.name}-{session}")
    (scenario,) = load_paths([path])  # schema-valid and checked, like any scenario file
    Client(replay.url).add_scenario(path)
    assert play(replay, scenario.name, session, api, guide, streamed) == recorded


def play(
    server: ServerProcess, scenario: str, session: str, api: str, guide: Scenario, streamed: bool
) -> list[Any]:
    driver = DRIVERS[api](server, scenario, session)
    try:
        return walk(driver, guide, streamed)
    finally:
        driver.close()
