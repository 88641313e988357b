"""The proof that each bundled scenario catches the mistake it is about: the reference
harness (examples/harness) plays every scenario on every API twice — the correct loop and
the naive one, each in its own session — and each ends as OUTCOMES says, protocol verdict
included. docs/failure-modes.md shows the same table; a test keeps the two equal.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import boto3
import openai
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from google import genai
from google.genai import errors as genai_errors

from examples.harness import (
    anthropic_messages,
    bedrock_converse,
    chat_completions,
    gemini,
    naive,
    responses,
)
from examples.harness.toolbox import Toolbox
from mockllm import load_paths
from mockllm.judge.verdict import REQUEST_CHECKS
from tests.support import BUNDLED, ROOT, ServerProcess, sample_text

APIS = ("chat", "responses", "anthropic", "gemini", "bedrock")
API_NAMES = {
    "chat": "Chat",
    "responses": "Responses",
    "anthropic": "Anthropic",
    "gemini": "Gemini",
    "bedrock": "Bedrock",
}

# An outcome says how a loop ends, then the protocol verdict of its session:
#   answer "TEXT"            it returns an answer containing TEXT
#   raises Name("TEXT")      it raises an exception of class Name whose message contains TEXT
#   · clean                  every verdict check passes
#   · fails a, b             exactly the checks a and b fail
# An outcome is one string for every API, or a mapping "chat, responses" / "anthropic" → string.
Outcome = str | dict[str, str]
PARIS = 'answer "It is 18 °C" · clean'
NEVER_ANSWERED = "fails calls_answered, errors_fed_back"  # a refused call's result never came
# Gemini cannot carry arguments that are not an object: the reply comes as finishReason
# MALFORMED_FUNCTION_CALL with no content, every attempt (docs/http-api.md, Gemini).
UNFORMED = 'raises GaveUp("could not form its function call") · clean'
NO_CALLS = 'raises TypeError("not iterable") · clean'  # naive: response.function_calls is None
FILTERED = 'raises GaveUp("stopped (content_filter)") · clean'  # the finish reason read
NOT_ASKED_AGAIN = "fails empty_replies_asked_again"  # an empty reply sent back, or kept
# Bedrock: a call whose arguments no toolUse.input can carry comes as stopReason
# malformed_tool_use with no toolUse (docs/http-api.md, Bedrock); the naive loop sends the
# empty assistant turn back, which Bedrock refuses (rule B5).
MALFORMED_USE = 'raises GaveUp("could not form its tool use") · clean'
EMPTY_TURN = 'raises ValidationException("content field in the Message object") · clean'
BEDROCK_REFUSED = 'raises ValidationException("expectation failed") · fails errors_fed_back'
BEDROCK_NOTE = (
    " Bedrock: the reply comes as stopReason malformed_tool_use with no toolUse; the naive "
    "loop sends the empty turn back, which Bedrock refuses (B5)."
)
GEMINI_NOTE = (
    " Gemini: no call can carry these arguments, so the reply is MALFORMED_FUNCTION_CALL with "
    "no content, every attempt; the correct loop asks again and gives up, having run nothing."
)


@dataclass(frozen=True)
class Row:
    correct: Outcome
    naive: Outcome
    note: str = ""

    def outcome(self, harness: str, api: str) -> str:
        outcome = self.correct if harness == "correct" else self.naive
        if isinstance(outcome, str):
            return outcome
        return next(text for apis, text in outcome.items() if api in apis.split(", "))


OUTCOMES: dict[str, Row] = {
    "hello": Row(
        'answer "Hello!" · clean',
        'answer "Hello!" · clean',
        "The baseline: nothing to get wrong.",
    ),
    "weather-single": Row(PARIS, PARIS, "The baseline tool round trip: both loops get it right."),
    "weather-parallel": Row(
        'answer "北京多云25℃" · clean',
        'answer "我先查一下。" · fails calls_answered',
        "The naive loop does answer every call of a reply, but stops at the text before them.",
    ),
    "json-in-prose": Row(PARIS, 'answer "get_weather" · clean'),
    "json-in-fence": Row(PARIS, 'answer "get_weather" · clean'),
    "fabricated-answer": Row(
        PARIS,
        'answer "22 °C" · clean',
        "Run with need_tool=True: the task says the answer must rest on a tool's result.",
    ),
    "preamble-text": Row(PARIS, 'answer "Let me check" · fails calls_answered'),
    "sequential-calls": Row(
        'answer "Louvre" · clean', 'answer "reading them now" · fails calls_answered'
    ),
    "malformed-arguments": Row(
        {"chat, responses, anthropic, bedrock": PARIS, "gemini": UNFORMED},
        {
            "chat, responses": f'raises JSONDecodeError("Unterminated string") · {NEVER_ANSWERED}',
            "anthropic, bedrock": f'raises TypeError("missing 1 required") · {NEVER_ANSWERED}',
            "gemini": NO_CALLS,
        },
        "Anthropic's stream helper partial-parses the cut object to {}; Bedrock's non-streamed "
        "toolUse.input keeps its complete parameters, none here." + GEMINI_NOTE,
    ),
    "empty-arguments": Row(
        {"chat, responses, anthropic, bedrock": PARIS, "gemini": UNFORMED},
        {
            "chat, responses": f'raises JSONDecodeError("Expecting value") · {NEVER_ANSWERED}',
            "anthropic, bedrock": f'raises TypeError("missing 1 required") · {NEVER_ANSWERED}',
            "gemini": NO_CALLS,
        },
        "Anthropic streams no input_json_delta for it: the SDK shows input {}; Bedrock sends "
        "input {}." + GEMINI_NOTE,
    ),
    "arguments-not-object": Row(
        {"chat, responses, anthropic": PARIS, "gemini": UNFORMED, "bedrock": MALFORMED_USE},
        {
            "chat, responses, anthropic": f'raises TypeError("must be a mapping") · {NEVER_ANSWERED}',
            "gemini": NO_CALLS,
            "bedrock": EMPTY_TURN,
        },
        GEMINI_NOTE.strip() + BEDROCK_NOTE,
    ),
    "double-encoded-arguments": Row(
        {
            "chat, responses": PARIS,
            "anthropic": 'raises GaveUp("Unable to parse tool parameter JSON") · ' + NEVER_ANSWERED,
            "gemini": UNFORMED,
            "bedrock": MALFORMED_USE,
        },
        {
            "chat, responses": f'raises TypeError("must be a mapping") · {NEVER_ANSWERED}',
            "anthropic": f'raises ValueError("Unable to parse tool parameter JSON") · {NEVER_ANSWERED}',
            "gemini": NO_CALLS,
            "bedrock": EMPTY_TURN,
        },
        "Anthropic: the SDK's stream accumulator cannot parse a JSON string cut into fragments "
        "and raises before any harness code sees the reply; the correct loop retries (the same "
        "reply comes back) and gives up, having run nothing." + GEMINI_NOTE + BEDROCK_NOTE,
    ),
    "hallucinated-tool": Row(
        'answer "cannot delete files" · clean',
        {
            "chat, responses": 'answer "cannot delete files" · fails errors_fed_back',
            "anthropic": 'raises BadRequestError("expectation failed") · fails errors_fed_back',
            "gemini": 'raises ClientError("expectation failed") · fails errors_fed_back',
            "bedrock": BEDROCK_REFUSED,
        },
        "The naive loop runs delete_file. Anthropic's is_error flag (Gemini's \"error\" key) is "
        "checked by turn 1's expectation; OpenAI wires have no flag, so there the verdict "
        "catches it.",
    ),
    "near-miss-tool": Row(PARIS, f'raises KeyError("get_weatehr") · {NEVER_ANSWERED}'),
    "schema-missing-required": Row(
        PARIS, f'raises TypeError("missing 1 required") · {NEVER_ANSWERED}'
    ),
    "schema-wrong-type": Row(
        PARIS,
        {
            "chat, responses": 'answer "It is 18 °C" · fails errors_fed_back',
            "anthropic": 'raises BadRequestError("expectation failed") · fails errors_fed_back',
            "gemini": 'raises ClientError("expectation failed") · fails errors_fed_back',
            "bedrock": BEDROCK_REFUSED,
        },
        'The tool runs with unit ["celsius"] and answers; only the verdict (or Anthropic\'s '
        "is_error expectation) sees it.",
    ),
    "schema-enum-violation": Row(
        PARIS,
        {
            "chat, responses": 'answer "It is 18 °C" · fails errors_fed_back',
            "anthropic": 'raises BadRequestError("expectation failed") · fails errors_fed_back',
            "gemini": 'raises ClientError("expectation failed") · fails errors_fed_back',
            "bedrock": BEDROCK_REFUSED,
        },
        'The tool runs with unit "Fahrenheit" and silently answers in Celsius.',
    ),
    "path-traversal": Row(
        'answer "only read files inside" · clean',
        {
            "chat, responses, anthropic": 'raises BadRequestError("expectation failed") · clean',
            "gemini": 'raises ClientError("expectation failed") · clean',
            "bedrock": 'raises ValidationException("expectation failed") · clean',
        },
        "The verdict cannot see a path escape (the call fits its schema): turn 1's expectation "
        "refuses a result that does not name the path — the naive loop sent the file instead.",
    ),
    "tool-error-retry": Row(
        'answer "Louvre" · clean',
        'raises FileNotFoundError("notes/paris.txt") · fails calls_answered',
    ),
    "tool-loop": Row(
        'raises GaveUp("no answer after 10 model calls") · fails calls_answered',
        'raises RuntimeError("no answer after 50 model calls") · fails calls_answered, no_tool_loop',
        "The correct loop stops at its cap, leaving its last reply's call unanswered on "
        "purpose. The naive loop's 50 is a safety stop for the tests; no_tool_loop flags it.",
    ),
    "stream-cut": Row(
        PARIS,
        {
            "chat, responses": "raises APIConnectionError · clean",
            "anthropic, gemini": 'raises RemoteProtocolError("peer closed connection") · clean',
            "bedrock": 'raises ConnectionClosedError("Connection was closed") · clean',
        },
        "Neither Anthropic's stream helper nor google-genai wraps httpx's own error. The "
        "correct Bedrock loop sees the streamed cut as a quiet end without messageStop.",
    ),
    "stream-ends-early": Row(
        PARIS,
        {
            "chat": 'raises JSONDecodeError("Unterminated string") · clean',
            "responses": 'raises RuntimeError("response.completed") · clean',
            "anthropic": 'raises TypeError("missing 1 required") · clean',
            "gemini": 'raises JSONDecodeError("Expecting property name") · clean',
            "bedrock": 'raises KeyError("output") · clean',
        },
        "No exception on Chat and Anthropic: the naive loop runs the cut call. The verdict "
        'counts no call a fault cut (its calls_answered says "cut by fault"): the loop\'s '
        "exception is what shows the mistake. The naive Gemini and Bedrock loops do not "
        "stream: the body is cut inside the call's args (botocore then parses no output).",
    ),
    "stream-error-event": Row(
        PARIS,
        {
            "chat": 'raises APIError("The server had an error") · clean',
            "responses": 'raises RuntimeError("response.completed") · clean',
            "anthropic": 'raises APIStatusError("overloaded_error") · clean',
            "gemini": 'raises ServerError("UNAVAILABLE") · clean',
            "bedrock": "raises ModelErrorException · clean",
        },
        "The naive Gemini loop does not stream: the same failure comes as an HTTP 503, which "
        "google-genai does not retry by default. Nor does the naive Bedrock loop: there the "
        "fault is an HTTP 424 ModelErrorException.",
    ),
    "stall": Row(
        PARIS,
        {
            "chat, responses": "raises APITimeoutError · clean",
            "anthropic, gemini": "raises ReadTimeout · clean",
            "bedrock": "raises ReadTimeoutError · clean",
        },
        "Both loops get a client with a 0.5 s timeout.",
    ),
    "finish-length": Row(
        {
            "chat, responses, anthropic, bedrock": PARIS,
            "gemini": 'raises GaveUp("stopped (length) without an answer") · clean',
        },
        {
            "chat": f"raises LengthFinishReasonError · {NEVER_ANSWERED}",
            "responses": f'raises RuntimeError("response.completed") · {NEVER_ANSWERED}',
            "anthropic": 'raises BadRequestError("expectation failed") · fails errors_fed_back',
            "gemini": NO_CALLS,
            "bedrock": BEDROCK_REFUSED,
        },
        'Anthropic (and Bedrock) keeps the complete parameters ({"city": "Paris"}): the naive loop runs them. '
        "Gemini sends calls whole: the cut one is not sent (MAX_TOKENS, no content), so there "
        "is nothing to answer.",
    ),
    "rate-limited": Row(
        PARIS,
        {
            "chat, responses, anthropic": PARIS,
            "gemini": 'raises ClientError("RESOURCE_EXHAUSTED") · clean',
            "bedrock": 'raises ThrottlingException("Too many requests") · clean',
        },
        "Not shown by the naive loop on OpenAI and Anthropic: their SDKs retry 429 twice by "
        "themselves, honouring retry-after-ms. The scenario catches a client without those "
        "retries (test_rate_limited_catches_a_client_without_sdk_retries) — which is what "
        "google-genai is by default, and boto3 here: botocore's own retries ignore "
        "retry-after-ms (a random backoff), so both Bedrock loops get a client without them "
        "and the correct one retries as the SDKs do.",
    ),
    "overloaded": Row(
        PARIS,
        {
            "chat, responses": 'raises InternalServerError("overloaded") · clean',
            "anthropic": "raises OverloadedError · clean",
            "gemini": 'raises ServerError("UNAVAILABLE") · clean',
            "bedrock": "raises ServiceUnavailableException · clean",
        },
        "The verdict has nothing to judge: no reply was ever served to the naive loop. Gemini "
        "has no 529: the fault is served as its overload, 503 UNAVAILABLE; nor has AWS: 503 "
        "ServiceUnavailableException.",
    ),
    "duplicate-call-ids": Row(
        {
            "chat, anthropic, gemini, bedrock": 'raises GaveUp("call_dup_0001") · '
            "fails calls_answered",
            "responses": 'raises RuntimeError("conflicting output identities") · '
            "fails calls_answered",
        },
        {
            "chat, bedrock": 'answer "both 18 °C" · fails answered_once',
            "anthropic": 'raises BadRequestError("`tool_use` ids must be unique") · '
            "fails answered_once",
            "responses": 'raises RuntimeError("conflicting output identities") · '
            "fails calls_answered",
            "gemini": 'answer "both 18 °C" · clean',
        },
        "The correct loop refuses the reply and runs nothing. On Anthropic the naive loop's "
        "replayed history is refused as the API refuses it (rule A13). On Responses the SDK's "
        "stream accumulator itself refuses two function_call items with one call_id, before "
        "any harness code: the naive loop's mistake cannot show there. On Gemini results "
        "answer by name and position, so the shared id does a name-based loop no harm.",
    ),
    "deepseek-reasoning": Row(
        PARIS,
        {
            "chat": 'raises BadRequestError("reasoning_content") · clean',
            "responses, anthropic, gemini, bedrock": PARIS,
        },
        "Run with model deepseek-reasoner. Not shown on Responses, Anthropic, Gemini and "
        "Bedrock: they have no reasoning_content; the reasoning item / thinking block / "
        "thought part / reasoningContent block rides in the output the naive loop replays "
        "whole.",
    ),
    "refusal": Row(
        {
            "chat, responses": 'raises GaveUp("the model refused") · clean',
            "anthropic, gemini, bedrock": FILTERED,
        },
        {
            "chat, responses, anthropic": 'raises RuntimeError("no answer after 50 model calls") '
            "· fails no_tool_loop, no_refusal_loop",
            "gemini": NO_CALLS,
            "bedrock": EMPTY_TURN,
        },
        "The correct loop stops at once: asking again gets the same refusal. The naive loop "
        "finds no text and no call and asks again, forever (the turn repeats): no_tool_loop "
        "and no_refusal_loop flag it; on Gemini (no content) and Bedrock (the empty turn sent back, B5) it "
        "crashes first. Anthropic, Gemini and Bedrock carry no refusal text: their refusal "
        "is a stop reason (refusal, SAFETY, content_filtered), which the reference harness "
        "reads as a content filter.",
    ),
    "content-filter": Row(
        FILTERED,
        {
            "chat": 'raises ContentFilterFinishReasonError("rejected by the content filter") '
            "· clean",
            "responses": 'raises RuntimeError("response.completed") · clean',
            "anthropic, gemini, bedrock": 'answer "you will first need to" · clean',
        },
        "The openai stream helper raises ContentFilterFinishReasonError (the correct loop "
        "catches it and reads the finish reason); the Responses helper finds no "
        "response.completed (the stream ends response.incomplete). Elsewhere the naive loop "
        "shows the half sentence the filter stopped.",
    ),
    "empty-reply": Row(
        PARIS,
        {
            "chat, anthropic": f'raises BadRequestError("history diverged") · {NOT_ASKED_AGAIN}',
            "responses": PARIS,
            "gemini": f'raises TypeError("not iterable") · {NOT_ASKED_AGAIN}',
            "bedrock": EMPTY_TURN.replace("clean", NOT_ASKED_AGAIN),
        },
        "The correct loop asks again (EmptyReply, up to 3 attempts). The naive loop sends the "
        "empty reply back as a turn and asks on: the history no longer holds the turn's "
        "call (Chat, Anthropic), or Bedrock refuses the empty turn (B5); on Gemini it "
        "iterates the calls of a reply that has none and the session ends on the empty "
        "reply; empty_replies_asked_again flags each. Not shown on Responses: with no output "
        "item there is nothing to send back, so the naive loop's next request is the retry.",
    ),
    "reasoning-only": Row(
        PARIS,
        {
            "chat, anthropic": f'raises BadRequestError("history diverged") · {NOT_ASKED_AGAIN}',
            "responses": 'raises BadRequestError("without its required following item") '
            f"· {NOT_ASKED_AGAIN}",
            "gemini": f'raises TypeError("not iterable") · {NOT_ASKED_AGAIN}',
            "bedrock": EMPTY_TURN.replace("clean", NOT_ASKED_AGAIN),
        },
        "The reasoning is not an answer: the correct loop asks again. Responses refuses a "
        "reasoning item replayed with nothing after it; Bedrock a turn holding only "
        "reasoning; empty_replies_asked_again flags each.",
    ),
    "keep-alive-comments": Row(
        {
            "chat, responses, anthropic, bedrock": PARIS,
            "gemini": 'raises GaveUp("Failed to parse response as JSON") · fails calls_answered',
        },
        PARIS,
        "The openai and anthropic SDKs skip the comments and the empty blocks. google-genai "
        "does not: its stream reader takes a line that is not data: for a line of a JSON "
        "error body, and fails on the first comment (Gemini's own API sends none; a proxy "
        "in front of it may). The naive Gemini and Bedrock loops do not stream; Bedrock's "
        "event stream has no comments. A hand-written SSE reader that mishandles them is "
        "shown failing in tests/e2e/wires/test_misbehaviour_e2e.py.",
    ),
}

CASES = [(s, api, h) for s in OUTCOMES for api in APIS for h in ("correct", "naive")]
OUTCOME = re.compile(
    r'(?:answer "(?P<answer>[^"]+)"|raises (?P<error>\w+)(?:\("(?P<message>[^"]+)"\))?)'
    r" · (?:clean|fails (?P<checks>[\w, ]+))"
)

# How each scenario is run: the task's words matter only where an expectation checks them.
NEEDS_A_TOOL = {"fabricated-answer"}
MODELS = {
    "chat": "gpt-4o-mini",
    "responses": "gpt-4.1",
    "anthropic": "claude-sonnet-4-6",
    "gemini": "gemini-2.5-flash",
    "bedrock": "us.anthropic.claude-sonnet-4-6",
}
MODEL_FOR = {"deepseek-reasoning": "deepseek-reasoner"}
TIMEOUT_FOR = {"stall": 0.5}  # seconds; else 10 s, so that nothing can hang the suite
# The table holds the failure modes every wire can show; the quirk scenarios of the other
# provider flavours (Qwen, Kimi, GLM, Doubao, MiniMax) are walked in tests/e2e/wires/test_flavours_e2e.py.
SCENARIOS = {s.name: s for s in load_paths([BUNDLED]) if s.flavor in (None, "openai", "deepseek")}

Loop = Callable[..., str]
CORRECT: dict[str, Loop] = {
    "chat": chat_completions.run,
    "responses": responses.run,
    "anthropic": anthropic_messages.run,
    "gemini": gemini.run,
    "bedrock": bedrock_converse.run,
}
NAIVE: dict[str, Loop] = {
    "chat": naive.chat,
    "responses": naive.responses_api,
    "anthropic": naive.messages,
    "gemini": naive.gemini_api,
    "bedrock": naive.bedrock,
}


@pytest.mark.parametrize(("scenario", "api", "harness"), CASES, ids=["-".join(c) for c in CASES])
def test_each_loop_ends_as_the_table_says(
    server: ServerProcess, session: str, tmp_path: Path, scenario: str, api: str, harness: str
) -> None:
    expected = OUTCOMES[scenario].outcome(harness, api)
    ending = play(server, session, tmp_path, scenario, api, harness)
    failed = failed_checks(server, session)
    assert matches(expected, ending, failed), (
        f"expected {expected}\n     got {describe(ending, failed)}"
    )


def test_the_table_covers_every_bundled_scenario_and_parses() -> None:
    assert sorted(OUTCOMES) == sorted(SCENARIOS)
    for name, row in OUTCOMES.items():
        for api in APIS:
            for harness in ("correct", "naive"):
                assert OUTCOME.fullmatch(row.outcome(harness, api)), (name, api, harness)


def test_the_docs_show_the_same_table() -> None:
    doc = (ROOT / "docs" / "failure-modes.md").read_text(encoding="utf-8")
    assert markdown_table() in doc


def test_rate_limited_catches_a_client_without_sdk_retries(
    server: ServerProcess, session: str, tmp_path: Path
) -> None:
    """The naive loop gets through rate-limited only because the SDK retries for it."""
    for api in APIS:
        client = client_for(server, api, "rate-limited", f"{session}-{api}", max_retries=0)
        limited = (
            openai.RateLimitError,
            anthropic.RateLimitError,
            genai_errors.ClientError,
            ClientError,  # botocore's ThrottlingException
        )
        with client as sdk, pytest.raises(limited):
            NAIVE[api](sdk, "Weather?", project(tmp_path / api), model=MODELS[api])


def test_path_traversal_naive_sends_a_file_from_outside_the_sandbox(
    server: ServerProcess, session: str, tmp_path: Path
) -> None:
    """What the expectation refused: the naive loop read ../../etc/passwd and sent it."""
    play(server, session, tmp_path, "path-traversal", "chat", "naive")
    sent = server.requests(session=session)[-1]["tool_results"]
    assert sent[0]["content"].startswith("root:x:0:0")


# --- playing a scenario --------------------------------------------------------------------


def play(
    server: ServerProcess, session: str, tmp_path: Path, scenario: str, api: str, harness: str
) -> str | Exception:
    """The loop's answer, or what it raised."""
    loop = CORRECT[api] if harness == "correct" else NAIVE[api]
    options = {"need_tool": scenario in NEEDS_A_TOOL} if harness == "correct" else {}
    model = MODEL_FOR.get(scenario, MODELS[api])
    timeout = TIMEOUT_FOR.get(scenario, 10.0)
    with client_for(server, api, scenario, session, timeout=timeout) as client:
        try:
            return loop(client, question(scenario), project(tmp_path), model=model, **options)
        except Exception as e:
            return e


def question(scenario: str) -> str:
    first = SCENARIOS[scenario].turns[0].expect
    return sample_text(first.user if first else None, "Can you help me with this?")


def project(tmp_path: Path) -> Toolbox:
    """A sandbox two levels below a fake /etc/passwd, so ../../etc/passwd finds something."""
    root = tmp_path / "home" / "project"
    root.mkdir(parents=True)
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    return Toolbox.demo(root)


def client_for(server: ServerProcess, api: str, scenario: str, session: str, **options: Any) -> Any:
    if api == "bedrock":  # boto3: any credentials. botocore's retries are off: they ignore
        # retry-after(-ms) (a random backoff), so the harnesses retry themselves.
        timeout = options.get("timeout", 60)
        config = Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            read_timeout=timeout,
            connect_timeout=timeout,
        )
        client = boto3.client(
            "bedrock-runtime",
            endpoint_url=f"{server.url}/s/{scenario}/{session}",
            region_name="us-east-1",
            aws_access_key_id="AKIDEXAMPLE",
            aws_secret_access_key="dummy",
            config=config,
        )
        return contextlib.closing(client)
    if api == "gemini":  # google-genai: no retries unless asked; timeout in milliseconds
        http: dict[str, Any] = {"base_url": f"{server.url}/s/{scenario}/{session}"}
        if "timeout" in options:
            http["timeout"] = int(options["timeout"] * 1000)
        return genai.Client(api_key="test", http_options=http)
    if api == "anthropic":
        url = f"{server.url}/s/{scenario}/{session}"
        return anthropic.Anthropic(base_url=url, api_key="test", **options)
    return openai.OpenAI(base_url=server.openai_url(scenario, session), api_key="test", **options)


def failed_checks(server: ServerProcess, session: str) -> list[str]:
    """The failed checks of the tool protocol. The request-level ones (a refused request,
    a failed expectation: docs/verdict.md) are left out: the ending already names the
    refusal the loop raised, so the table says each thing once."""
    verdict = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    return [c["name"] for c in verdict["checks"] if not c["ok"] and c["name"] not in REQUEST_CHECKS]


# --- outcomes --------------------------------------------------------------------------------


def matches(expected: str, ending: str | Exception, failed: list[str]) -> bool:
    want = OUTCOME.fullmatch(expected)
    assert want is not None, f"not an outcome: {expected}"
    if (want["checks"].split(", ") if want["checks"] else []) != failed:
        return False
    if isinstance(ending, str):
        return want["answer"] is not None and want["answer"] in ending
    return type(ending).__name__ == want["error"] and (want["message"] or "") in str(ending)


def describe(ending: str | Exception, failed: list[str]) -> str:
    how = f"answer {ending!r}" if isinstance(ending, str) else f"raises {ending!r}"
    return f"{how} · " + (f"fails {', '.join(failed)}" if failed else "clean")


def markdown_table() -> str:
    lines = ["| scenario | correct loop | naive loop | note |", "|---|---|---|---|"]
    for name, row in OUTCOMES.items():
        cells = (f"`{name}`", markdown(row.correct), markdown(row.naive), row.note)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def markdown(outcome: Outcome) -> str:
    if isinstance(outcome, str):
        return f"`{outcome}`"
    return "<br>".join(
        ", ".join(API_NAMES[a] for a in apis.split(", ")) + f": `{text}`"
        for apis, text in outcome.items()
    )
