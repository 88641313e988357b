"""What every framework test shares: the tool, the scenarios' prompts, and one check of a
run — the text it ended with or the exception it raised, the tool results the framework
fed back, and the server's verdict on the session.

A call cut by a fault never reached the client whole, so the verdict does not hold its
missing answer against the harness: a stream-cut run that raises has a clean verdict."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mockllm import Client, Session
from tests.support import session_id

# The first user message each bundled scenario expects.
PROMPTS = {
    "weather-parallel": "北京和上海?",
    "malformed-arguments": "What's the weather in Paris?",
    "stream-cut": "What's the weather in Paris?",
    "deepseek-reasoning": "What's the weather in Paris?",
    "tool-loop": "Find me cheap flights to Paris",
}
PARALLEL_TEXT = "北京多云25℃，上海小雨22℃。"  # weather-parallel's last reply
WEATHER = {"北京": "25度", "上海": "22度", "Paris": "18 °C"}


def get_weather(city: str, unit: str = "celsius") -> str:
    """Get the current weather of a city."""
    if city not in WEATHER:
        raise ValueError(f"no weather for {city!r}")
    return WEATHER[city]


def search(query: str) -> str:
    """Search the web."""
    return "no flights found"


@dataclass(frozen=True)
class Expect:
    """A run's observed outcome, asserted: a framework changing its behaviour fails here."""

    text: str | None = None  # the run completed with this final text
    raises: type[BaseException] | None = None  # ... or raised this (or a subclass)
    message: str = ""  # a regex the exception's text must contain
    fed_back: str | None = None  # a regex the first tool result must match
    is_error: bool | None = None  # that result's error flag (None: the wire has none)
    failed: frozenset[str] = field(default_factory=frozenset)  # verdict checks that fail


def fails(*checks: str) -> frozenset[str]:
    return frozenset(checks)


def check(run: Callable[[], str], mock: Session, expect: Expect) -> None:
    """Run the framework's loop once and compare what happened with `expect`."""
    __tracebackhide__ = True
    text: str | None = None
    error: BaseException | None = None
    try:
        text = run()
    except Exception as e:
        error = e
    transcript = mock.transcript()
    if expect.raises is None:
        assert error is None, f"the run raised {error!r}\n{transcript}"
        assert text == expect.text, transcript
    else:
        assert isinstance(error, expect.raises), (
            f"expected {expect.raises}, got {error!r}\n{transcript}"
        )
        assert re.search(expect.message, str(error)), str(error)
    results = [r for e in mock.requests() for r in e.tool_results]
    if expect.fed_back is not None:
        assert results, f"no tool result was fed back\n{transcript}"
        assert re.search(expect.fed_back, results[0].content), transcript
        assert results[0].is_error == expect.is_error, transcript
    verdict = mock.verdict()
    assert {c.name for c in verdict.failed} == expect.failed, f"{verdict.failed}\n{transcript}"


class FrameworkError(Exception):
    """What ended a run in a framework's own virtualenv: `Type: message`, as it printed it."""


Cell = tuple[str, bool, str, str]  # wire, streamed, base URL, prompt


def run_children(python: Path, script: Path, cells: list[Cell], timeout: float = 600) -> list[Any]:
    """Run a framework's agent script in its virtualenv over `cells`, importing the framework
    once (tests/frameworks/child.py prints one outcome per cell). Each outcome is the final
    text, or the FrameworkError that says what ended that run."""
    assert python.exists(), f"{python} is missing: `make frameworks` makes it (Makefile)"
    command = [str(python), str(script), json.dumps(cells)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    lines = [ln[3:] for ln in done.stdout.splitlines() if ln.startswith("@@ ")]
    assert done.returncode == 0 and len(lines) == len(cells), (
        f"exit {done.returncode}, {len(lines)} of {len(cells)} runs: {done.stderr[-3000:]}"
    )
    outcomes: list[Any] = []
    for line in lines:
        outcome = json.loads(line)
        assert not outcome["reached"], f"the framework tried to reach the network: {outcome}"
        error = outcome.get("error")
        outcomes.append(FrameworkError(error) if error else str(outcome["text"]))
    return outcomes


def replay(outcome: Any) -> Callable[[], str]:
    """A run for `check` that gives back what a run in another process ended with."""

    def run() -> str:
        if isinstance(outcome, BaseException):
            raise outcome
        return str(outcome)

    return run


# The `api` of Session.url for each wire a framework speaks.
API = {"gemini": "gemini", "anthropic": "anthropic", "openai-chat": "openai"}
API["openai-responses"] = "openai"


def check_cells(
    server: str, python: Path, script: Path, wire: str, expected: dict[tuple[str, bool], Expect]
) -> None:
    """Run every (scenario, streamed) cell of one framework on one wire in one process of
    its virtualenv, each in a session of its own, and `check` each: every cell that
    differs from its Expect is reported, not only the first."""
    client = Client(server)
    cases = sorted(expected)
    sessions = [
        client.session(session_id(f"{script.parent.name}-{wire}-{scenario}-{stream}"))
        for scenario, stream in cases
    ]
    api = next(API[part] for part in wire.split("/") if part in API)  # KIND/WIRE/VARIANT
    cells: list[Cell] = [
        (wire, stream, mock.url(scenario, api=api), PROMPTS[scenario])
        for (scenario, stream), mock in zip(cases, sessions, strict=True)
    ]
    outcomes = run_children(python, script, cells)
    problems = []
    for case, mock, outcome in zip(cases, sessions, outcomes, strict=True):
        try:
            check(replay(outcome), mock, expected[case])
        except AssertionError as error:
            problems.append(f"{wire} {case}: {error}")
    assert not problems, "\n\n".join(problems)
