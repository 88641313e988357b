"""Retries (docs/scenarios.md, "Retries"): each attempt at a turn gets fresh, deterministic
call and response ids; divergence and the verdict compare a later request with the attempt
whose reply it carries. Real HTTP, the OpenAI and Anthropic SDKs."""

from __future__ import annotations

import contextlib
from typing import Any

import anthropic
import openai
import pytest

from tests.support import ServerProcess
from tests.support.clients import openai_client
from tests.support.doc_examples import examples_server_fixture

EXTRA = {
    "retry-cut": """
name: retry-cut
turns:
  - fault: {truncate: {inside: arguments}, disconnect: close, times: 1}
    reply:
      tool_calls: [{name: read, arguments: {path: README.md}}]
  - reply: {text: done}
""",
    "retry-scripted-id": """
name: retry-scripted-id
turns:
  - reply:
      tool_calls: [{name: read, arguments: {path: README.md}, id: call_fixed}]
  - reply: {text: done}
""",
}
READ = {
    "type": "function",
    "function": {
        "name": "read",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}
ASK = [{"role": "user", "content": "read the README"}]


server = examples_server_fixture(extra=EXTRA)


_client = openai_client


def _ask(client: openai.OpenAI) -> Any:
    return client.chat.completions.create(model="m", messages=ASK, tools=[READ])


def test_each_attempt_has_fresh_ids_and_every_run_the_same(
    server: ServerProcess, session: str
) -> None:
    runs = []
    for run in ("a", "b"):
        with _client(server, "opencode-read", session + run) as client:
            replies = [_ask(client) for _ in range(3)]
        runs.append([(r.id, r.choices[0].message.tool_calls[0].id) for r in replies])
    first, second = runs
    assert first == second  # deterministic: attempt N gets the same ids in every run
    assert len({ids for pair in first for ids in pair}) == 6  # and every attempt its own
    log = server.requests(session=session + "a")
    assert [c["id"] for e in log for c in e["response"]["tool_calls"]] == [p[1] for p in first]


def test_a_later_request_is_compared_with_the_attempt_it_carries(
    server: ServerProcess, session: str
) -> None:
    """The harness asked turn 0 three times and goes on with the second answer: no
    divergence; the first and third replies were set aside, so their calls are owed no
    result (docs/verdict.md), and the verdict says it left them out."""
    with _client(server, "opencode-read", session) as client:
        replies = [_ask(client) for _ in range(3)]
        kept = replies[1].choices[0].message
        call = kept.tool_calls[0]
        history = [
            *ASK,
            kept.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "hello"},
        ]
        done = client.chat.completions.create(model="m", messages=history, tools=[READ])
        assert done.choices[0].message.content == "The README says hello."
        changed = {**history[1], "tool_calls": [{**history[1]["tool_calls"][0]}]}
        changed["tool_calls"][0]["function"] = {"name": "read", "arguments": '{"path":"x"}'}
        with pytest.raises(openai.BadRequestError) as e:
            client.chat.completions.create(
                model="m", messages=[*ASK, changed, history[2]], tools=[READ]
            )
    assert "tool_calls[0].arguments: expected" in e.value.body["message"]
    verdict = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    checks = {c["name"]: c for c in verdict["checks"]}
    answered = checks["calls_answered"]
    first_id, third_id = (replies[i].choices[0].message.tool_calls[0].id for i in (0, 2))
    assert answered["ok"], answered
    assert answered["message"].count("was set aside: the harness went on from request") == 2
    assert first_id in answered["message"] and third_id in answered["message"]
    assert call.id not in answered["message"]


def test_merging_two_answers_by_id_is_caught(server: ServerProcess, session: str) -> None:
    """What Qwen Code did: two answers to one turn, merged into one call answered twice.
    With fresh ids the merge cannot happen silently: the second answer's call is its own."""
    with _client(server, "opencode-read", session) as client:
        a, b = _ask(client), _ask(client)
    ids = {r.choices[0].message.tool_calls[0].id for r in (a, b)}
    assert len(ids) == 2


def test_a_retry_after_a_cut_stream_gets_its_own_ids(server: ServerProcess, session: str) -> None:
    with _client(server, "retry-cut", session) as client:
        with pytest.raises(Exception):  # noqa: B017 (the SDK's own error for a cut body)
            _ask(client)
        served = _ask(client)
        call = served.choices[0].message.tool_calls[0]
        history = [
            *ASK,
            served.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "hello"},
        ]
        done = client.chat.completions.create(model="m", messages=history, tools=[READ])
    assert done.choices[0].message.content == "done"
    entries = server.requests(session=session)
    assert [e["attempt"] for e in entries] == [1, 2, 1]
    assert entries[0]["response"]["tool_calls"][0]["id"] != call.id
    verdict = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    assert verdict["ok"], verdict


def test_scripted_ids_stay_as_written(server: ServerProcess, session: str) -> None:
    with _client(server, "retry-scripted-id", session) as client:
        ids = {_ask(client).choices[0].message.tool_calls[0].id for _ in range(2)}
    assert ids == {"call_fixed"}


def test_anthropic_retry_ids(server: ServerProcess, session: str) -> None:
    url = f"{server.url}/s/opencode-read/{session}"
    tools: Any = [{"name": "read", "input_schema": {"type": "object"}}]
    messages: Any = [{"role": "user", "content": "read"}]
    with anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client:
        first, second = (
            client.messages.create(
                model="claude-sonnet-4-6", max_tokens=100, messages=messages, tools=tools
            )
            for _ in range(2)
        )
        use = second.content[0]
        assert first.id != second.id and first.content[0].id != use.id
        history: Any = [
            *messages,
            {"role": "assistant", "content": [use.model_dump()]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "hi"}],
            },
        ]
        done = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=100, tools=tools, messages=history
        )
    assert done.content[0].text == "The README says hello."


# --- a turn asked again: the replaced reply's calls need no answer (docs/verdict.md) ------


def _checks(server: ServerProcess, session: str) -> dict[str, dict[str, Any]]:
    data = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    return {c["name"]: c for c in data["checks"]}


def _reask_then_answer(server: ServerProcess, session: str, answer_old: bool) -> None:
    """Ask turn 0, ask it again (a harness whose own timeout fired), and go on from the
    later reply; `answer_old`: the result sent names the replaced reply's call instead."""
    with _client(server, "opencode-read", session) as client:
        first = _ask(client).choices[0].message
        second = _ask(client).choices[0].message
        assert first.tool_calls[0].id != second.tool_calls[0].id  # each attempt its own ids
        answered = (first if answer_old else second).tool_calls[0].id
        messages: Any = [
            *ASK,
            second.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": answered, "content": "# README"},
        ]
        with contextlib.suppress(openai.BadRequestError):  # refused when it is wrong; logged
            client.chat.completions.create(model="m", messages=messages, tools=[READ])


def test_a_turn_asked_again_needs_only_its_later_reply_answered(
    server: ServerProcess, session: str
) -> None:
    _reask_then_answer(server, session, answer_old=False)
    checks = _checks(server, session)
    assert checks["calls_answered"]["ok"], checks["calls_answered"]
    assert (
        "was set aside: the harness went on from request (log seq"
        in (checks["calls_answered"]["message"])
    )
    assert "turn 0 asked again: not counted" in checks["calls_answered"]["message"]
    assert checks["results_known"]["ok"]


def test_answering_the_replaced_reply_after_taking_the_new_one_fails(
    server: ServerProcess, session: str
) -> None:
    _reask_then_answer(server, session, answer_old=True)
    checks = _checks(server, session)
    assert not checks["results_known"]["ok"]
    assert "which no call in its history made" in checks["results_known"]["message"]
    assert not checks["calls_answered"]["ok"]  # and the new reply's call went unanswered
    assert checks["calls_answered"]["message"].count("was never answered") == 1


def test_a_turn_asked_again_and_never_gone_on_from_owes_every_reply(
    server: ServerProcess, session: str
) -> None:
    """No later request answered either reply: nothing says which was set aside."""
    with _client(server, "opencode-read", session) as client:
        ids = [_ask(client).choices[0].message.tool_calls[0].id for _ in range(2)]
    message = _checks(server, session)["calls_answered"]["message"]
    assert message.count("was never answered") == 2 and all(i in message for i in ids)
