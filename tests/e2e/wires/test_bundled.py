"""Every bundled scenario × every API, walked turn by turn to the end (a full tool round trip):
the official SDK parses each reply, and its stream accumulator yields the non-streamed reply.

Where a scenario spoils a turn on purpose, the test asserts how instead of looking away:
the attempts a fault's `times` spoils fail as the fault says, and the attempts after it are
compared; arguments Anthropic cannot carry in a non-streamed `input` are answered 400
`unrepresentable_reply`, and streamed go out verbatim for the SDK's accumulator to make what
it can of; two calls under one id are refused by the Responses stream accumulator.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from google.genai import errors as genai_errors

from mockllm import load_paths
from mockllm.core.scenario import Fault, Misbehave, Reply, Scenario
from tests.support import BUNDLED, ServerProcess
from tests.support.drivers import DRIVERS, Driver, View, Walker

SCENARIOS = sorted(load_paths([BUNDLED]), key=lambda s: s.name)

# What create() (the drivers turn SDK retries off) raises on an attempt the fault spoils.
FAULT_ERRORS: dict[str, tuple[type[Exception], ...]] = {
    "http": (openai.APIStatusError, anthropic.APIStatusError, genai_errors.APIError),
    # not streamed: a status
    "stream_error": (openai.APIStatusError, anthropic.APIStatusError, genai_errors.APIError),
    # google-genai does not wrap transport errors
    "truncate": (
        openai.APIConnectionError,
        anthropic.APIConnectionError,
        json.JSONDecodeError,
        httpx2.TransportError,
    ),
    "stall": (openai.APITimeoutError, anthropic.APITimeoutError, httpx2.TimeoutException),
}


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
        for turn in scenario.turns:
            request = walker.request()
            if not spoiled_attempts(server, session, driver, request, turn.fault):
                return  # every attempt gets the fault: nothing more to walk
            commented = scenario.stream.keep_alive is not None
            view = reply_of(server, session, api, driver, request, turn.reply, commented)
            if view is None:
                return  # the SDK cannot assemble this reply (asserted): the walk ends here
            finish = shown_finish(api, turn.reply)
            assert_served_as_scripted(view, turn.reply, served_calls(server, session), finish)
            walker.advance(view)
        if not scenario.turns[-1].repeat:  # every turn was used: one more request is exhausted
            entries_before = len(server.requests(session=session))
            with pytest.raises(
                (openai.BadRequestError, anthropic.BadRequestError, genai_errors.ClientError),
                match="has no turn",
            ):
                driver.create(walker.request())
            assert server.requests(session=session)[entries_before]["response"]["status"] == 400
    finally:
        driver.close()


def spoiled_attempts(
    server: ServerProcess,
    session: str,
    driver: Driver,
    request: dict[str, Any],
    fault: Fault | None,
) -> bool:
    """Make the attempts the turn's fault spoils, each failing as the fault says; False when
    it spoils every attempt (no `times`)."""
    if fault is None or fault.kind == "delay":
        return True
    if isinstance(fault.part, Misbehave):  # a whole 200, with nothing of the turn in it
        for _ in range(fault.times or 1):
            view = driver.create(request)
            assert (view.text, view.calls) == (None, [])
            # Responses: a reasoning item, its summary empty unless the request asks for one.
            items = [i.type for i in view.raw.output] if hasattr(view.raw, "output") else None
            reasoned = view.reasoning is not None or items == ["reasoning"]
            assert reasoned == (fault.kind == "reasoning_only")
            assert server.last(session)["response"]["fault"]["kind"] == fault.kind
        return fault.times is not None
    timeout = {"timeout": 0.5} if fault.kind == "stall" else {}
    for _ in range(fault.times or 1):
        with pytest.raises(FAULT_ERRORS[fault.kind]):
            driver.create({**request, **timeout})
        assert server.last(session)["response"]["fault"]["kind"] == fault.kind
    return fault.times is not None


def reply_of(
    server: ServerProcess,
    session: str,
    api: str,
    driver: Driver,
    request: dict[str, Any],
    reply: Reply,
    commented: bool = False,
) -> View | None:
    """The turn's reply through create() and through the SDK's stream helper, which agree
    wherever the wire and the SDK can carry it. `commented`: the stream holds keep-alive
    comments, which google-genai's stream reader cannot read (docs/failure-modes.md)."""
    if api == "gemini" and commented:
        with pytest.raises(genai_errors.UnknownApiResponseError, match="OPENROUTER PROCESSING"):
            driver.stream(request)
        return driver.create(request)
    if api == "anthropic" and not_an_input(reply):
        return anthropic_streamed_only(server, session, driver, request)
    if api == "gemini" and not_an_object(reply):
        gemini_without_the_call(server, session, driver, request, reply)
        return None
    if api == "anthropic" and repeated_tool_use_ids(request):
        # The API refuses a history that repeats a tool_use id (rule A13): so does mockllm.
        with pytest.raises(anthropic.BadRequestError, match="`tool_use` ids must be unique"):
            driver.create(request)
        return None
    scripted = [c.id for c in reply.tool_calls]
    if api == "responses" and len(set(scripted)) < len(scripted) and None not in scripted:
        plain = driver.create(request)
        # The SDK's Responses accumulator keys function_call items by call_id.
        with pytest.raises(RuntimeError, match="conflicting output identities"):
            driver.stream(request)
        return plain
    # Two requests are two attempts at the turn, each with ids of its own (docs/scenarios.md,
    # "Retries"): the stream first, so that the log's last entry is the reply returned.
    streamed = driver.stream(request)
    plain = driver.create(request)
    assert without_ids(streamed) == without_ids(plain)
    return plain


def without_ids(view: View) -> View:
    return dataclasses.replace(view, calls=[("", name, args) for _, name, args in view.calls])


def repeated_tool_use_ids(request: dict[str, Any]) -> bool:
    ids = [
        block["id"]
        for message in request["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    ]
    return len(set(ids)) < len(ids)


def not_an_input(reply: Reply) -> bool:
    """Arguments a non-streamed Anthropic `tool_use.input` cannot carry: neither an object nor
    a cut-off one (docs/http-api.md, Anthropic specifics)."""
    return any(
        c.generate in ("not_an_object", "double_encoded")
        or (c.generate is None and not c.arguments.lstrip().startswith("{"))
        for c in reply.tool_calls
    )


def not_an_object(reply: Reply) -> bool:
    """Arguments a Gemini functionCall (args: an object, sent whole) cannot carry."""
    return any(
        c.generate in ("not_an_object", "double_encoded")
        or (c.generate is None and c.arguments_object() is None)
        for c in reply.tool_calls
    )


def gemini_without_the_call(
    server: ServerProcess, session: str, driver: Driver, request: dict[str, Any], reply: Reply
) -> None:
    """Sent as the API sends a call the model could not form: no content, only the finish
    reason, streamed and not; the log says so and lists no call. The client can only ask
    again and gets the same: the walk ends here."""
    reason = "MAX_TOKENS" if reply.finish == "length" else "MALFORMED_FUNCTION_CALL"
    for view in (driver.create(request), driver.stream(request)):
        assert view.raw.candidates[0].content is None and view.calls == []
        assert view.raw.candidates[0].finish_reason.value == reason
        response = server.last(session)["response"]
        assert response["tool_calls"] == [] and f"finishReason {reason}" in response["notes"][0]


def anthropic_streamed_only(
    server: ServerProcess, session: str, driver: Driver, request: dict[str, Any]
) -> View | None:
    with pytest.raises(anthropic.BadRequestError, match="which are not a JSON object"):
        driver.create(request)
    assert server.last(session)["response"]["error"]["kind"] == "unrepresentable_reply"
    try:
        streamed: View | None = driver.stream(request)
    except ValueError as e:
        streamed, error = None, str(e)
    served = [c["arguments"] for c in served_calls(server, session)]
    if streamed is None:
        # A JSON string cut into fragments: no prefix of it partial-parses.
        assert error.startswith("Unable to parse tool parameter JSON from model")
        assert any(a.startswith('"') for a in served)
        return None
    # The accumulator keeps the served JSON value as the input (none at all for "").
    assert [json.loads(a) for _, _, a in streamed.calls] == [json.loads(a or "{}") for a in served]
    return streamed


def served_calls(server: ServerProcess, session: str) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = server.last(session)["response"]["tool_calls"]
    return calls


def shown_finish(api: str, reply: Reply) -> str:
    """The finish the driver shows for the scripted reply: Anthropic's refusal and Gemini's
    SAFETY stop are what the drivers read as content_filter."""
    if reply.refusal is not None and api in ("anthropic", "gemini"):
        return "content_filter"
    return reply.finish


def assert_served_as_scripted(
    view: View, reply: Reply, served: list[dict[str, Any]], finish: str
) -> None:
    """What the SDK shows is what the server logged as sent, and that is the script — with
    `generate:` arguments and near-miss names made concrete."""
    assert view.finish == finish
    # MiniMax writes the thinking into the content, ahead of the text (docs/flavours.md).
    thought = f"<think>\n{reply.reasoning}\n</think>\n\n" if reply.reasoning else None
    text = view.text or ""
    assert (text.removeprefix(thought) if thought else text) == reply.text
    assert [name for _, name, _ in view.calls] == [c["name"] for c in served]
    for scripted, sent, (_, _, arguments) in zip(reply.tool_calls, served, view.calls, strict=True):
        if scripted.near_miss:  # a plausible wrong name, derived from the scripted one
            assert sent["name"] != scripted.name
        else:
            assert sent["name"] == scripted.name
        if isinstance(parsed(sent["arguments"]), dict):
            assert parsed(arguments) == parsed(sent["arguments"])


def parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return None
