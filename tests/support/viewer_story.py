"""One real run for the viewer to show: the official SDKs play bundled scenarios against a
real server — a tool loop (with hostile text in the user message), a stream cut inside a
call's arguments on each wire, a history refused by a provider rule, a history that
diverged. Used by the browser tests and by `make screenshots`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai

from tests.support import ServerProcess, assistant_message

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
PARAMETERS = TOOLS[0]["function"]["parameters"]


# The sessions of the run, each a part of the story: Story(base).cut is "BASE-cut".
PARTS = (
    "loop",
    "cut",
    "cut_responses",
    "cut_anthropic",
    "cut_gemini",
    "unoffered",
    "refused",
    "diverged",
)
# Text, then a call the stream breaks inside: Gemini sends the call whole in one frame, so
# the client has the text whole and nothing of the call (the viewer once guessed wrong).
CUT_AFTER_TEXT = {
    "name": "viewer-cut-after-text",
    "turns": [
        {
            "reply": {
                "text": "Checking Paris.",
                "tool_calls": [
                    {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
                ],
            },
            "fault": {"truncate": {"inside": "arguments"}},
        }
    ],
}


@dataclass
class Story:
    """What the SDK side saw, to compare with what the viewer shows."""

    base: str
    call_id: str = ""
    # session of a cut stream -> the arguments its SDK had received when the stream broke
    delivered: dict[str, str] = field(default_factory=dict)
    refusal: str = ""  # the provider's text, as the SDK raised it
    loop: str = field(init=False)
    cut: str = field(init=False)
    cut_responses: str = field(init=False)
    cut_anthropic: str = field(init=False)
    cut_gemini: str = field(init=False)
    unoffered: str = field(init=False)
    refused: str = field(init=False)
    diverged: str = field(init=False)

    def __post_init__(self) -> None:
        for part in PARTS:
            setattr(self, part, f"{self.base}-{part.replace('_', '-')}")

    @property
    def sessions(self) -> tuple[str, ...]:
        return tuple(getattr(self, part) for part in PARTS)


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
    call = reply.choices[0].message.tool_calls[0]
    story.call_id = call.id
    return [*messages, assistant_message(reply.choices[0].message)]


def answer_weather(server: ServerProcess, story: Story, messages: list[Any]) -> None:
    """Turn 1: the harness sends the result back; the model answers."""
    messages = [*messages, {"role": "tool", "tool_call_id": story.call_id, "content": RESULT}]
    with client(server, "weather-single", story.loop) as c:
        c.chat.completions.create(model="m", messages=messages, tools=TOOLS)


def cut_stream(server: ServerProcess, story: Story) -> None:
    """stream-cut on Chat Completions: the stream breaks inside the call's arguments; the
    SDK's accumulator says what arrived. Then the retry, served whole."""
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    with client(server, "stream-cut", story.cut) as c:
        with c.chat.completions.stream(model="m", messages=messages, tools=TOOLS) as stream:
            with pytest.raises(openai.APIConnectionError):
                for _ in stream:
                    pass
            call = stream.current_completion_snapshot.choices[0].message.tool_calls[0]
        story.delivered[story.cut] = call.function.arguments
        c.chat.completions.create(model="m", messages=messages, tools=TOOLS)


def cut_other_wires(server: ServerProcess, story: Story) -> None:
    """The same cut on Responses and on Anthropic Messages: what arrived is what each SDK's
    stream events delivered of the arguments before it broke."""
    tool = {"type": "function", "name": "get_weather", "parameters": PARAMETERS, "strict": False}
    got = ""
    with (
        client(server, "stream-cut", story.cut_responses) as c,
        c.responses.stream(model="m", input="Weather in Paris?", tools=[tool]) as stream,
        pytest.raises(openai.APIConnectionError),
    ):
        for event in stream:
            if event.type == "response.function_call_arguments.delta":
                got += event.delta
    story.delivered[story.cut_responses] = got
    url = f"{server.url}/s/stream-cut/{story.cut_anthropic}"
    got = ""
    with (
        anthropic.Anthropic(base_url=url, api_key="t", max_retries=0) as a,
        a.messages.stream(
            model="m",
            max_tokens=100,
            messages=[{"role": "user", "content": "Weather in Paris?"}],
            tools=[{"name": "get_weather", "input_schema": PARAMETERS}],
        ) as events,
        pytest.raises(Exception, match="peer closed connection"),  # httpx's, let through
    ):
        for part in events:
            if part.type == "input_json":
                got += part.partial_json
    story.delivered[story.cut_anthropic] = got


def cut_gemini(server: ServerProcess, story: Story) -> None:
    """On Gemini, text then a call cut inside its frame: google-genai has the text and no
    call when the stream breaks."""
    assert httpx.post(f"{server.url}/_mockllm/scenarios", json=CUT_AFTER_TEXT).is_success
    url = f"{server.url}/s/{CUT_AFTER_TEXT['name']}/{story.cut_gemini}"
    text, calls = "", []
    with (
        genai.Client(api_key="k", http_options={"base_url": url}) as g,
        pytest.raises(Exception, match="peer closed connection"),  # its httpx's, let through
    ):
        for chunk in g.models.generate_content_stream(model="gemini-2.5-flash", contents="Paris?"):
            for part in chunk.candidates[0].content.parts or []:
                text += part.text or ""
                calls += [part.function_call] if part.function_call else []
    assert text == "Checking Paris." and not calls
    story.delivered[story.cut_gemini] = ""


def call_unoffered(server: ServerProcess, story: Story) -> None:
    """hallucinated-tool: the model calls delete_file, which the request did not offer."""
    tools = [
        {"type": "function", "function": {"name": name, "parameters": PARAMETERS}}
        for name in ("read_file", "search")
    ]
    with client(server, "hallucinated-tool", story.unoffered) as c:
        reply = c.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Tidy the notes."}], tools=tools
        )
    assert reply.choices[0].message.tool_calls[0].function.name == "delete_file"


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
    story.refusal = e.value.body["message"]


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


def play(server: ServerProcess, base: str) -> Story:
    story = Story(base)
    answer_weather(server, story, ask_weather(server, story))
    cut_stream(server, story)
    cut_other_wires(server, story)
    cut_gemini(server, story)
    call_unoffered(server, story)
    refuse(server, story)
    diverge(server, story)
    return story


def rule_of(server: ServerProcess, story: Story) -> str:
    (entry,) = log_of(server, story.refused)
    return str(entry["violations"][0]["rule"])


# A pytest suite for `--mockllm-html`: one test passes, one forgets to answer the call,
# one has a broken scenario.
SUITE = """
import httpx
import pytest

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]

def ask(url, *messages):
    body = {"model": "m", "messages": [{"role": "user", "content": "Weather in Paris?"}, *messages], "tools": TOOLS}
    return httpx.post(url + "/chat/completions", json=body).json()["choices"][0]["message"]

def test_answers_the_call(mockllm):
    url = mockllm.url("weather-single")
    call = ask(url)
    ask(url, call, {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"], "content": "18"})
    mockllm.assert_all_tool_calls_answered()

def test_forgets_the_call(mockllm):
    ask(mockllm.url("weather-single"))
    mockllm.assert_all_tool_calls_answered()

@pytest.mark.mockllm("name: broken\\nturns: [{reply: {txt: hi}}]\\n")
def test_with_a_broken_scenario(mockllm):
    pass
"""
