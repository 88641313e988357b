"""One real run for the viewer to show: the official OpenAI SDK plays bundled scenarios
against a real server — a tool loop (with hostile text in the user message), a stream cut
inside a call's arguments, a history refused by a provider rule, a history that diverged.
Used by the browser tests and by `make screenshots`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import openai
import pytest

from .support import ServerProcess, assistant_message

HOSTILE = "Weather in Paris? <script>window.pwned = 1</script></textarea><b>bold?</b>"
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
RESULT = "18 °C and sunny </script>"


@dataclass
class Story:
    """What the SDK side saw, to compare with what the viewer shows."""

    base: str  # the sessions: BASE-loop, BASE-cut, BASE-refused, BASE-diverged
    call_id: str = ""
    cut_call_id: str = ""
    cut_delivered: str = ""  # the arguments the SDK had accumulated when the stream broke
    refusal: str = ""  # the provider's text, as the SDK raised it

    @property
    def loop(self) -> str:
        return f"{self.base}-loop"

    @property
    def cut(self) -> str:
        return f"{self.base}-cut"

    @property
    def refused(self) -> str:
        return f"{self.base}-refused"

    @property
    def diverged(self) -> str:
        return f"{self.base}-diverged"

    @property
    def sessions(self) -> tuple[str, ...]:
        return (self.loop, self.cut, self.refused, self.diverged)


def client(server: ServerProcess, scenario: str, session: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.openai_url(scenario, session), api_key="t", max_retries=0)


def ask_weather(server: ServerProcess, story: Story, session: str = "") -> list[Any]:
    """Turn 0 of the tool loop: the model calls get_weather."""
    messages: list[Any] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": HOSTILE},
    ]
    with client(server, "weather-single", session or story.loop) as c:
        reply = c.chat.completions.create(model="m", messages=messages, tools=TOOLS)
    call = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
    story.call_id = call.id
    return [*messages, assistant_message(reply.choices[0].message)]


def answer_weather(server: ServerProcess, story: Story, messages: list[Any]) -> None:
    """Turn 1: the harness sends the result back; the model answers."""
    messages = [*messages, {"role": "tool", "tool_call_id": story.call_id, "content": RESULT}]
    with client(server, "weather-single", story.loop) as c:
        c.chat.completions.create(model="m", messages=messages, tools=TOOLS)


def cut_stream(server: ServerProcess, story: Story) -> None:
    """stream-cut: the stream breaks inside the call's arguments; the SDK's accumulator
    says what arrived. Then the retry, served whole."""
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    with client(server, "stream-cut", story.cut) as c:
        with c.chat.completions.stream(model="m", messages=messages, tools=TOOLS) as stream:
            with pytest.raises(openai.APIConnectionError):
                for _ in stream:
                    pass
            call = stream.current_completion_snapshot.choices[0].message.tool_calls[0]  # type: ignore[index]
        story.cut_call_id, story.cut_delivered = call.id, call.function.arguments
        c.chat.completions.create(model="m", messages=messages, tools=TOOLS)


def refuse(server: ServerProcess, story: Story) -> None:
    """A tool result for a call that was never made: strict validation refuses it."""
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "tool", "tool_call_id": "call_never_made", "content": "18"},
    ]
    with (
        client(server, "weather-single", story.refused) as c,
        pytest.raises(openai.BadRequestError) as e,
    ):
        c.chat.completions.create(model="m", messages=messages, tools=TOOLS)
    story.refusal = e.value.body["message"]  # type: ignore[index]


def diverge(server: ServerProcess, story: Story) -> None:
    """The harness sends the call back with other arguments than were served: strict mode
    refuses the history."""
    *messages, assistant = ask_weather(server, story, story.diverged)
    assistant["tool_calls"][0]["function"]["arguments"] = '{"city": "Rome"}'
    result = {"role": "tool", "tool_call_id": story.call_id, "content": RESULT}
    with (
        client(server, "weather-single", story.diverged) as c,
        pytest.raises(openai.BadRequestError, match="history diverged"),
    ):
        c.chat.completions.create(model="m", messages=[*messages, assistant, result], tools=TOOLS)


def log_of(server: ServerProcess, session: str) -> list[dict[str, Any]]:
    return server.requests(session=session)


# ---- what a person sees --------------------------------------------------------------


def play(server: ServerProcess, base: str) -> Story:
    story = Story(base)
    answer_weather(server, story, ask_weather(server, story))
    cut_stream(server, story)
    refuse(server, story)
    diverge(server, story)
    return story


def rule_of(server: ServerProcess, story: Story) -> str:
    (entry,) = log_of(server, story.refused)
    return str(entry["violations"][0]["rule"])


# ---- the tests -----------------------------------------------------------------------
