"""The recorder's pure parts, in-process and with hostile input: whatever an upstream says
comes back byte for byte from the written file, and SSE frames do not depend on how the
bytes were chunked. (The proxy itself is tested through real HTTP in test_record.py.)"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm import load_text
from mockllm.core.heard import Heard, HeardCall, HeardError
from mockllm.core.scenario import HttpFault
from mockllm.providers.openai_chat import ChatCompletions
from mockllm.recording.attempt import Attempt
from mockllm.recording.compose import Meta, scenario_text
from mockllm.recording.redact import MASK, Redactor
from mockllm.recording.sse import SseFrames
from tests.support.hypothesis_profiles import examples

META = Meta("recorded", "https://api.example.com", "2026-01-01")
ADAPTER = ChatCompletions()
# Text as models and users write it, control characters and odd whitespace included.
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)
JSON_OBJECTS = st.dictionaries(
    st.text(max_size=10),
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        ),
        max_leaves=8,
    ),
    max_size=4,
)
ARGUMENTS = (
    TEXT  # anything, malformed JSON included
    | JSON_OBJECTS.map(lambda d: json.dumps(d, ensure_ascii=False, separators=(",", ":")))
    | JSON_OBJECTS.map(json.dumps)  # spaced: not what a mapping would dump back to
)


def attempt(heard: Heard, user: str = "hi", turn: int = 0) -> Attempt:
    messages: list[dict[str, object]] = [{"role": "user", "content": user}]
    messages += [
        {"role": "assistant", "content": "earlier"},
        {"role": "user", "content": user},
    ] * turn
    parsed = ADAPTER.parse({"model": "gpt-4o-mini", "messages": messages})
    found = Attempt(ADAPTER, parsed, turn, 1, status=200, heard=heard, done=True)
    return found


def written(*attempts: Attempt, redactor: Redactor | None = None) -> str:
    redact = redactor or Redactor()
    return scenario_text(META, list(attempts), redact, redact.clean_prefix)


@settings(max_examples=examples(150))
@given(text=TEXT, reasoning=st.none() | TEXT, arguments=st.lists(ARGUMENTS, max_size=3))
def test_texts_and_arguments_come_back_byte_for_byte(
    text: str, reasoning: str | None, arguments: list[str]
) -> None:
    calls = [HeardCall(f"tool_{i}", a, f"call_{i}") for i, a in enumerate(arguments)]
    heard = Heard(text, reasoning, calls, complete=True)
    scenario = load_text(written(attempt(heard)), "<written>")
    reply = scenario.turns[0].reply
    assert (reply.text, reply.reasoning) == (text, reasoning)
    assert [c.arguments for c in reply.tool_calls] == arguments
    assert all(c.id is None for c in reply.tool_calls)  # mockllm's own ids on replay


@settings(max_examples=examples(100))
@given(user=TEXT)
def test_the_derived_user_expectation_matches_the_request_it_came_from(user: str) -> None:
    first = attempt(Heard("ok", complete=True), user)
    scenario = load_text(written(first), "<written>")
    expect = scenario.turns[0].expect
    if expect is not None and expect.user is not None:
        assert expect.user.matches(first.parsed.conversation.latest_user_text or "")


@settings(max_examples=examples(100))
@given(message=TEXT, kind=st.text(min_size=1, max_size=30), status=st.integers(400, 599))
def test_an_error_is_written_as_the_http_fault_it_was(message: str, kind: str, status: int) -> None:
    failed = Attempt(ADAPTER, attempt(Heard()).parsed, 0, 1, status=status, done=True)
    failed.error = HeardError(kind, message or None, None)
    failed.headers = (("retry-after", "7"), ("x-request-id", "req_1"))
    fault = load_text(written(failed), "<written>").turns[0].fault
    assert fault is not None and isinstance(http := fault.part, HttpFault) and fault.times is None
    assert (http.status, http.type, http.message) == (
        status,
        kind,
        message or None,
    )
    assert http.headers == (("retry-after", "7"),)  # only what the SDKs retry by


def test_a_second_answer_and_a_second_kind_of_failure_are_named_not_dropped() -> None:
    rate_limited = Attempt(ADAPTER, attempt(Heard()).parsed, 0, 1, status=429, done=True)
    cut = attempt(Heard("par", complete=False))
    cut.number, cut.ending = 2, "reset"
    served, again = (
        attempt(Heard("partial answer", complete=True)),
        attempt(Heard("other", complete=True)),
    )
    served.number, again.number = 3, 4
    text = written(rate_limited, cut, served, again)
    assert "different failures on one turn; the fault is the first's" in text
    assert "not kept: 1 later attempt(s) at this turn" in text
    turn = load_text(text, "<written>").turns[0]
    assert (
        turn.fault is not None and isinstance(turn.fault.part, HttpFault) and turn.fault.times == 2
    )
    assert turn.reply.text == "partial answer"


def test_a_turn_never_seen_live_is_taken_from_the_next_request_s_history() -> None:
    later = attempt(Heard("second", complete=True), turn=1)
    scenario = load_text(written(later), "<written>")
    assert [t.reply.text for t in scenario.turns] == ["earlier", "second"]


@given(
    secret=st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=8, max_size=30),
    text=TEXT,
)
def test_a_credential_from_the_headers_is_masked_wherever_it_appears(
    secret: str, text: str
) -> None:
    redactor = Redactor()
    redactor.learn([("Authorization", f"Bearer {secret}"), ("anthropic-version", "2023-06-01")])
    masked = redactor(text + secret + text)
    assert secret not in masked and MASK in masked
    assert redactor("2023-06-01") == "2023-06-01"  # not a credential


@settings(max_examples=examples(200))
@given(
    frames=st.lists(
        st.tuples(
            st.none() | st.sampled_from(["delta", "error"]),
            TEXT.filter(lambda t: "\n" not in t and "\r" not in t),
        ),
        max_size=8,
    ),
    cuts=st.lists(st.integers(0, 10_000), max_size=10),
    crlf=st.booleans(),
)
def test_sse_frames_do_not_depend_on_how_the_bytes_were_chunked(
    frames: list[tuple[str | None, str]], cuts: list[int], crlf: bool
) -> None:
    end = "\r\n" if crlf else "\n"
    raw = "".join(
        (f"event: {name}{end}" if name else "") + f": a comment{end}data: {data}{end}{end}"
        for name, data in frames
    ).encode()
    points = sorted({c % (len(raw) + 1) for c in cuts})
    pieces = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    parser = SseFrames()
    got = [frame for piece in pieces for frame in parser.feed(piece)]
    assert got == frames


def test_a_deepseek_model_is_replayed_under_deepseek_s_rules() -> None:
    heard = Heard("ok", complete=True, model="deepseek-reasoner")
    assert load_text(written(attempt(heard)), "<written>").flavor == "deepseek"
    assert load_text(written(attempt(Heard("ok", complete=True))), "<written>").flavor is None


def test_the_header_names_the_file_not_the_recording_machines_path() -> None:
    meta = Meta("recorded", "https://api.example.com", "2026-01-01", "/home/alice/work/rec.yaml")
    redact = Redactor()
    text = scenario_text(meta, [attempt(Heard(text="hi"))], redact, redact.clean_prefix)
    assert "# Replay: mockllm serve --scenarios rec.yaml (from its folder;" in text
    assert "/home/alice" not in text
