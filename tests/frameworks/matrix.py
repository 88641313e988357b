"""What every framework test shares: the tool, the scenarios' prompts, and one check of a
run — the text it ended with or the exception it raised, the tool results the framework
fed back, and the server's verdict on the session.

A call cut by a fault never reached the client whole, so the verdict does not hold its
missing answer against the harness: a stream-cut run that raises has a clean verdict."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from mockllm import Session

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
