"""The misbehaving replies and keep-alive comments, in process: what `misbehaving` makes of
a reply, what each kind is called, which wires carry what, and how comments ride on frames."""

from __future__ import annotations

import pytest

from mockllm.core.events import Event
from mockllm.core.keepalive import KeepAlive, with_comments
from mockllm.core.misbehaviour import (
    CARRIES,
    KINDS,
    REASONING_TEXT,
    REFUSAL_TEXT,
    cannot_carry,
    misbehaving,
)
from mockllm.core.scenario import Reply, ScriptedCall
from mockllm.providers import ADAPTERS

APIS = tuple(ADAPTERS)  # every registered wire

REPLY = Reply(text="It is 18 °C.", tool_calls=(ScriptedCall("get_weather", "{}"),))


@pytest.mark.parametrize(
    ("kind", "text", "finish", "others"),
    [
        ("refusal", "", "stop", {"refusal": REFUSAL_TEXT}),
        ("content_filter", "It is ", "content_filter", {}),  # the first half of the text
        ("empty", "", "stop", {"empty": "null"}),
        ("reasoning_only", "", "stop", {"reasoning": REASONING_TEXT}),
    ],
)
def test_each_misbehaving_reply_keeps_nothing_of_the_turn_but_what_it_says(
    kind: str, text: str, finish: str, others: dict[str, str]
) -> None:
    made = misbehaving(REPLY, kind)
    assert (made.text, made.tool_calls, made.finish, made.kind) == (text, (), finish, kind)
    for key, value in others.items():
        assert getattr(made, key) == value
    assert not made.text_part or kind == "content_filter"


def test_a_reply_names_its_kind() -> None:
    assert Reply(text="hi").kind is None
    assert Reply(reasoning="r", tool_calls=REPLY.tool_calls).kind is None  # reasoning + a call
    assert Reply(reasoning="r").kind == "reasoning_only"
    assert Reply(blocked="SAFETY").kind == "blocked_prompt"
    assert Reply(empty="string").kind == "empty" and not Reply(empty="string").text_part
    assert Reply().text_part  # `reply: {}` keeps its empty text part, as before


def test_every_wire_says_what_it_carries() -> None:
    assert set(CARRIES) == set(APIS)
    assert all(set(kinds) <= set(KINDS) for kinds in CARRIES.values())
    assert cannot_carry("blocked_prompt", ("gemini",)) == ()
    gemini = ("gemini", "vertex-gemini")
    assert cannot_carry("blocked_prompt", None) == tuple(a for a in APIS if a not in gemini)
    assert cannot_carry("refusal", None) == ()


def test_comments_ride_on_the_frames_so_the_events_keep_their_count() -> None:
    events = [Event(b"data: 1\n\n", "head"), Event(b"data: 2\n\n", "call:0", inside=7)]
    ping = KeepAlive(comment="ping", before=2, between=1, blank_line=True)
    out = with_comments(events, ping)
    assert [e.data for e in out] == [
        b": ping\n\n: ping\n\ndata: 1\n\n: ping\n\n",
        b"data: 2\n\n",
    ]
    assert out[1].inside == 7  # only the first frame moves: comments go before it
    plain = with_comments(events, KeepAlive(comment="x", before=1, between=0))
    assert plain[0].data == b": x\ndata: 1\n\n"  # no blank line: part of the event's block
