"""Turns found by content (docs/scenarios.md): seeded assistant messages are not turns,
keyed turns answer what they match, a request no turn matches is told the nearest ones,
and the log's `why` says which rule picked the turn. Real HTTP, the OpenAI SDK."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from tests.support import ServerProcess
from tests.support.clients import openai_client
from tests.support.doc_examples import examples_server_fixture

QWEN_ENV = "This is the Qwen Code. We are setting up the context for our chat."
SEEDED = "Got it. Thanks for the context!"
READ_FILE = {
    "type": "function",
    "function": {
        "name": "read_file",
        "parameters": {"type": "object", "properties": {"absolute_path": {"type": "string"}}},
    },
}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
EXTRA = {
    "qwen-bundled": """
name: qwen-bundled
include: [harness/qwen-code]
turns:
  - reply:
      tool_calls: [{name: read_file, arguments: {absolute_path: /repo/README.md}}]
  - reply: {text: The README says hello.}
""",
    "qwen-unseeded": """
name: qwen-unseeded
turns:
  - reply:
      tool_calls: [{name: read_file, arguments: {absolute_path: /repo/README.md}}]
  - reply: {text: The README says hello.}
""",
    "seed-like-reply": """
name: seed-like-reply
seed: [{regex: "^Ok"}]
turns:
  - reply: {text: "Ok, done."}
  - reply: {text: second}
""",
}


server = examples_server_fixture(extra=EXTRA)


_client = openai_client


def _qwen_run(server: ServerProcess, scenario: str, session: str) -> list[str]:
    """Qwen Code's loop: its history opens with the environment context and the assistant
    reply it writes itself, then the user's prompt; each tool result goes back."""
    printed = []
    history: list[Any] = [
        {"role": "system", "content": "You are Qwen Code, an interactive CLI agent."},
        {"role": "user", "content": QWEN_ENV},
        {"role": "assistant", "content": SEEDED},
        {"role": "user", "content": "read the README"},
    ]
    with _client(server, scenario, session) as client:
        while True:
            reply = client.chat.completions.create(model="m", messages=history, tools=[READ_FILE])
            message = reply.choices[0].message
            if not message.tool_calls:
                printed.append(f"qwen: {message.content}")
                return printed
            history.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                printed.append(f"qwen calls {call.function.name}({call.function.arguments})")
                history.append({"role": "tool", "tool_call_id": call.id, "content": "hello"})


def test_qwen_seeded_history_passes_without_placeholders(
    server: ServerProcess, session: str
) -> None:
    printed = _qwen_run(server, "qwen-seeded", session)
    assert printed == [
        'qwen calls read_file({"absolute_path":"/repo/README.md"})',
        "qwen: The README says hello.",
    ]
    entries = server.requests(session=session)
    assert [(e["turn"], e["why"]) for e in entries] == [
        (0, "counted: 0 assistant replies in the history, 1 seeded left out"),
        (1, "counted: 1 assistant reply in the history, 1 seeded left out"),
    ]
    assert all(not e["violations"] for e in entries)
    verdict = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    assert verdict["ok"], verdict


def test_the_bundled_qwen_rule_set_seeds_and_answers_the_memory_agent(
    server: ServerProcess, session: str
) -> None:
    assert _qwen_run(server, "qwen-bundled", session)[-1] == "qwen: The README says hello."
    with _client(server, "qwen-bundled", session) as client:
        memory = client.chat.completions.create(
            model="m",
            messages=[
                {"role": "system", "content": "You are a memory extraction agent."},
                {"role": "user", "content": "read the README"},
            ],
            tools=[READ_FILE],
        )
    assert memory.choices[0].message.content == "No memories to save."
    assert server.last(session)["side"]["rules"] == "harness/qwen-code"


def test_without_the_seed_the_seeded_reply_shifts_the_turn(
    server: ServerProcess, session: str
) -> None:
    """The failure seeds fix: Qwen's own reply counted as turn 0, so its first request asks
    for turn 1, and the history departs from what turn 0 served (it made a call)."""
    with pytest.raises(openai.BadRequestError) as e:
        _qwen_run(server, "qwen-unseeded", session)
    assert "history diverged at messages[2] (the reply of turn 0)" in e.value.body["message"]
    assert server.last(session)["turn"] == 1


def test_a_reply_the_scenario_serves_is_never_a_seed(server: ServerProcess, session: str) -> None:
    with _client(server, "seed-like-reply", session) as client:
        first = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert first.choices[0].message.content == "Ok, done."
        second = client.chat.completions.create(
            model="m",
            messages=[
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "Ok, done."},
                {"role": "user", "content": "more"},
            ],
        )
    assert second.choices[0].message.content == "second"


def test_keyed_turns_answer_what_they_match(server: ServerProcess, session: str) -> None:
    with _client(server, "keyed", session) as client:
        time_first = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "what time is it?"}]
        )
        assert time_first.choices[0].message.content == "It is noon."
        history: list[Any] = [{"role": "user", "content": "and the weather?"}]
        asked = client.chat.completions.create(model="m", messages=history, tools=[WEATHER])
        message = asked.choices[0].message
        assert message.tool_calls and message.tool_calls[0].function.name == "get_weather"
        history += [
            message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "18 °C"},
        ]
        answered = client.chat.completions.create(model="m", messages=history, tools=[WEATHER])
    assert answered.choices[0].message.content == "It is mild in Paris."
    whys = [e["why"] for e in server.requests(session=session)]
    assert whys == [
        "matched turn 2: new user message containing 'time'",
        "matched turn 0: new user message containing 'weather'",
        "matched turn 1: a tool result containing '°C'",
    ]


def test_a_request_no_turn_matches_names_the_nearest(server: ServerProcess, session: str) -> None:
    with _client(server, "keyed", session) as client, pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hello"}])
    message = e.value.body["message"]
    assert message.startswith(
        "mockllm: no turn of scenario 'keyed' matches this request (its history holds 0 "
        "assistant replies, and turn 0 is keyed). Nearest: turn 0 (new user message "
        "containing 'weather'): the new user message is 'hello', not containing 'weather'"
    ), message
    entry = server.last(session)
    assert entry["response"]["error"]["kind"] == "no_turn_matched"


def test_keyed_divergence_compares_with_the_turn_whose_ids_it_carries(
    server: ServerProcess, session: str
) -> None:
    with _client(server, "keyed", session) as client:
        asked = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "weather?"}], tools=[WEATHER]
        )
        call = asked.choices[0].message.tool_calls[0]
        mangled = {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Lyon"}'},
                }
            ],
        }
        history = [
            {"role": "user", "content": "weather?"},
            mangled,
            {"role": "tool", "tool_call_id": call.id, "content": "18 °C"},
        ]
        with pytest.raises(openai.BadRequestError) as e:
            client.chat.completions.create(model="m", messages=history, tools=[WEATHER])
    assert "(the reply of turn 0): tool_calls[0].arguments" in e.value.body["message"]
