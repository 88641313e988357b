"""Every bundled scenario × every API, walked turn by turn to the end (a full tool round trip):
the official SDK parses each reply, and its stream accumulator yields the non-streamed reply."""

from __future__ import annotations

import anthropic
import openai
import pytest

from mockllm import load_paths
from mockllm.scenario import Scenario

from .drivers import DRIVERS, Walker
from .support import BUNDLED, ServerProcess

SCENARIOS = sorted(load_paths([BUNDLED]), key=lambda s: s.name)


@pytest.fixture(params=sorted(DRIVERS))
def api(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_stream_equals_non_stream_on_every_turn(
    server: ServerProcess, session: str, api: str, scenario: Scenario
) -> None:
    driver = DRIVERS[api](server, scenario.name, session)
    try:
        walker = Walker(scenario, driver)
        for turn in range(len(scenario.turns)):
            request = walker.request()
            plain = driver.create(request)
            assert driver.stream(request) == plain, f"turn {turn}"
            reply = scenario.turns[turn].reply
            assert plain.finish == reply.finish
            assert [name for _, name, _ in plain.calls] == [c.name for c in reply.tool_calls]
            assert (plain.text or "") == reply.text
            walker.advance(plain)
        if not scenario.turns[-1].repeat:  # every turn was used: one more request is exhausted
            entries_before = len(server.requests(session=session))
            with pytest.raises(
                (openai.BadRequestError, anthropic.BadRequestError), match="has no turn"
            ):
                driver.create(walker.request())
            assert server.requests(session=session)[entries_before]["response"]["status"] == 400
    finally:
        driver.close()
