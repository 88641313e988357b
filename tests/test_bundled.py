"""Every bundled scenario, walked turn by turn: the stream accumulates to the non-streamed reply."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from mockllm import load_paths
from mockllm.scenario import Scenario

from .conftest import ChatFactory
from .support import BUNDLED, ChatWalker, assistant_message

SCENARIOS = sorted(load_paths([BUNDLED]), key=lambda s: s.name)


def streamed_final(client: openai.OpenAI, body: dict[str, Any]) -> Any:
    """The SDK accumulator's final completion (its helper raises on length/content_filter)."""
    try:
        with client.chat.completions.stream(**body) as stream:
            return stream.get_final_completion()
    except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as e:
        return e.completion


def view(completion: Any) -> dict[str, Any]:
    choice = completion.choices[0]
    message = choice.message
    return {
        "content": message.content or None,
        "reasoning": (message.model_extra or {}).get("reasoning_content"),
        "tool_calls": [
            (c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()
        ],
        "finish": choice.finish_reason,
    }


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_stream_equals_non_stream_on_every_turn(chat: ChatFactory, scenario: Scenario) -> None:
    client = chat(scenario.name)
    walker = ChatWalker(scenario)
    for turn in range(len(scenario.turns)):
        body = walker.request()
        plain = client.chat.completions.create(**body)
        assert view(streamed_final(client, body)) == view(plain), f"turn {turn}"
        assert plain.choices[0].finish_reason == scenario.turns[turn].reply.finish
        walker.advance(assistant_message(plain.choices[0].message))
    if not scenario.turns[-1].repeat:  # the walk used every turn: one more is exhausted
        with pytest.raises(openai.BadRequestError, match="has no turn"):
            client.chat.completions.create(**walker.request())
