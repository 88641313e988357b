"""What a framework's agent script shares when it runs in a virtualenv of its own (its pins
conflict with the suite's): the network guard, the weather tool's data, and the one line
of JSON it prints per run for the test to read (`{"text": …}` or `{"error": "Type: message"}`,
with `"reached"`: the non-loopback addresses it tried). Standard library only: it is
imported by path from each framework's script, never from the suite's virtualenv."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

WEATHER = {"北京": "25度", "上海": "22度", "Paris": "18 °C"}

# Every telemetry switch a framework here reads: none may leave the machine.
QUIET = {
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "ANONYMIZED_TELEMETRY": "false",
    "DO_NOT_TRACK": "1",
    "GOOGLE_GENAI_USE_VERTEXAI": "false",
}
os.environ.update(QUIET)

_spec = importlib.util.spec_from_file_location(
    "network_guard", Path(__file__).with_name("network_guard.py")
)
assert _spec is not None and _spec.loader is not None
guard = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(guard)
guard.install()


def weather(city: str) -> str:
    if city not in WEATHER:
        raise ValueError(f"no weather for {city!r}")
    return WEATHER[city]


def main(run: Callable[[str, bool, str, str], Awaitable[str] | str]) -> None:
    """Run each cell of argv[1] (a JSON list of `[wire, stream, base_url, prompt]`) once,
    in order, and print one line of JSON per cell: the framework is imported once."""
    for wire, stream, url, prompt in json.loads(sys.argv[1]):
        guard.attempts.clear()
        outcome: dict[str, object]
        try:
            result = run(wire, stream, url, prompt)
            if asyncio.iscoroutine(result):
                result = asyncio.run(result)
            outcome = {"text": str(result).strip()}
        except Exception as error:  # a framework's own exception is the result
            outcome = {"error": f"{type(error).__name__}: {error}"}
        outcome["reached"] = list(guard.attempts)
        sys.stdout.flush()
        print("\n@@ " + json.dumps(outcome, ensure_ascii=False), flush=True)
