"""The Python client and the session helpers read the real verdict route."""

from __future__ import annotations

import openai
import pytest

from mockllm import Check, Client, LogEntry, Verdict
from mockllm.testing.assertions import assert_clean_verdict
from tests.support import TOOL_PARAMETERS, ServerProcess

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": TOOL_PARAMETERS}}]
ASK = [{"role": "user", "content": "Paris?"}]


def executes_the_hallucinated_tool(server: ServerProcess, session: str) -> None:
    with openai.OpenAI(base_url=server.openai_url("hallucinated", session), api_key="k") as client:
        first = (
            client.chat.completions.create(model="m", messages=ASK, tools=TOOLS).choices[0].message
        )
        result = {
            "role": "tool",
            "tool_call_id": first.tool_calls[0].id,
            "content": "deleted 3 files",
        }
        client.chat.completions.create(
            model="m", messages=[*ASK, first.model_dump(exclude_none=True), result], tools=TOOLS
        )


def test_client_reads_a_failed_verdict(server: ServerProcess, session: str) -> None:
    executes_the_hallucinated_tool(server, session)
    verdict = Client(server.url).verdict(session)
    assert verdict.session == session and verdict.ok is False
    assert [c.name for c in verdict.failed] == ["errors_fed_back"]
    assert "delete_everything" in verdict.failed[0].message


def test_the_verdict_takes_max_calls_as_the_route_does(server: ServerProcess, session: str) -> None:
    executes_the_hallucinated_tool(server, session)  # two model calls
    client = Client(server.url)
    assert "no_tool_loop" not in [c.name for c in client.verdict(session).failed]
    looping = client.session(session).verdict(max_calls=1)
    assert [c.name for c in looping.failed] == ["errors_fed_back", "no_tool_loop"]


def test_a_failed_verdict_names_its_checks_and_shows_the_conversation(
    server: ServerProcess, session: str
) -> None:
    executes_the_hallucinated_tool(server, session)
    with pytest.raises(AssertionError) as failure:
        Client(server.url).session(session).assert_clean_verdict()
    message = str(failure.value)
    assert message.startswith("mockllm: the protocol verdict failed 1 check\n")
    assert "delete_everything" in message and "deleted 3 files" in message
    assert "  - errors_fed_back: " in message


def test_a_clean_verdict_passes() -> None:
    assert_clean_verdict(Verdict("s", True, (Check("calls_answered", True, ""),)), [])


def test_records_tolerate_fields_they_do_not_know_and_pending_responses() -> None:
    entry = LogEntry.from_json(
        {"seq": 7, "path": "/v1/chat/completions", "response": None, "future_field": {"x": 1}}
    )
    assert entry.seq == 7 and entry.response is None and entry.tool_calls == ()
    assert entry.conversation == () and entry.raw["future_field"] == {"x": 1}
