"""The reference tool loop, the same on every API: ask the model, check what came back, run
only what may run, feed every result back (errors included), and stop on a final answer or
at a limit. The API modules (chat_completions, responses, anthropic_messages) supply the
wire: how a reply is streamed and read, and how messages and results are shaped.

Every `GaveUp` says why; an SDK error that retrying cannot fix (a 400) is raised as is.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Protocol

import jsonschema

from .toolbox import SCHEMAS, Toolbox

MAX_MODEL_CALLS = 10  # a model stuck in a tool loop costs at most this many calls
MAX_ATTEMPTS = 3  # per model call, on top of the SDK's own retries (which end at the 200)
NUDGE = "You {problem}. Call the tool through the tool interface, then answer from its result."


class GaveUp(Exception):
    """The harness stopped without an answer."""


class BrokenReply(Exception):
    """The reply did not arrive whole — cut short, an error event, unreadable: ask again."""


class EmptyReply(BrokenReply):
    """A 200 that says nothing: no text, no call (reasoning alone is not an answer either).
    Asked again like a broken reply, a bounded number of times; never shown as the answer."""


@dataclass
class Call:
    id: str
    name: str
    arguments: Any  # the JSON text (OpenAI), or what the SDK parsed it into (Anthropic)


@dataclass
class Reply:
    text: str
    calls: list[Call]
    finish: str  # stop | tool_calls | length | content_filter
    reasoning: str | None = None  # DeepSeek's reasoning_content
    raw: Any = None  # the SDK's object, for replaying the reply exactly as it came
    refusal: str | None = None  # the model declined (OpenAI's refusal field / part)


@dataclass(frozen=True)
class Result:
    content: str
    is_error: bool = False

    @classmethod
    def error(cls, why: str) -> Result:
        # OpenAI tool messages have no error flag, so the text itself must say it.
        return cls(f"Error: {why}", is_error=True)


class Api(Protocol):
    transient: tuple[type[Exception], ...]  # the SDK's errors that may go away on a retry

    def ask(self, history: list[Any]) -> Reply: ...
    def user(self, text: str) -> list[Any]: ...
    def assistant(self, reply: Reply) -> list[Any]: ...
    def results(self, answered: list[tuple[Call, Result]]) -> list[Any]: ...


def run(api: Api, question: str, toolbox: Toolbox, *, need_tool: bool = False) -> str:
    """The model's final answer to `question`. `need_tool`: the answer must rest on a tool's
    result (live data), so an answer given before any tool ran is sent back once."""
    history = api.user(question)
    nudged = tool_ran = False
    for _ in range(MAX_MODEL_CALLS):
        reply = ask(api, history)
        if reply.refusal is not None:  # asking again gets the same refusal: say it and stop
            raise GaveUp(f"the model refused: {reply.refusal}")
        refuse_duplicate_ids(reply)
        history += api.assistant(reply)
        if reply.calls:  # even with finish "stop": OpenAI says stop when tool_choice forces a call
            answered = [(call, answer(call, reply.finish, toolbox)) for call in reply.calls]
            history += api.results(answered)  # every call gets a result, errors included
            tool_ran = tool_ran or any(not result.is_error for _, result in answered)
            continue
        if reply.finish != "stop":
            raise GaveUp(f"the model stopped ({reply.finish}) without an answer")
        problem = not_an_answer(reply.text, need_tool and not tool_ran)
        if problem is None:
            return reply.text
        if nudged:
            raise GaveUp(f"the model {problem}, even when asked again")
        history += api.user(NUDGE.format(problem=problem))
        nudged = True
    raise GaveUp(f"no answer after {MAX_MODEL_CALLS} model calls")


def ask(api: Api, history: list[Any]) -> Reply:
    """One reply, asked again when it broke on the way. The SDKs retry a 429 or 5xx
    themselves, but not a stream that fails after its 200, nor past their own retries."""
    retryable: tuple[type[Exception], ...] = (BrokenReply, *api.transient)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            return not_empty(api.ask(history))
        except retryable as error:
            delay = retry_delay(error, attempt)
            if delay is None:
                raise
            if attempt == MAX_ATTEMPTS:
                raise GaveUp(f"no whole reply in {MAX_ATTEMPTS} attempts: {error}") from error
            time.sleep(delay)
    raise AssertionError("unreachable")


def not_empty(reply: Reply) -> Reply:
    """The reply, unless it finished normally with nothing in it (reasoning alone included):
    then EmptyReply, which `ask` asks again for."""
    nothing = not reply.calls and reply.refusal is None and not reply.text.strip()
    if reply.finish == "stop" and nothing:
        raise EmptyReply("the reply held no text and no call")
    return reply


def retry_delay(error: Exception, attempt: int) -> float | None:
    """Seconds to wait before asking again, or None when asking again cannot help."""
    status = getattr(error, "status_code", None)
    if status is None:
        status = getattr(error, "code", None)  # google-genai's errors
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if isinstance(response, dict):  # botocore's ClientError: the parsed answer
        meta = response.get("ResponseMetadata", {})
        status, headers = meta.get("HTTPStatusCode", status), meta.get("HTTPHeaders")
    if isinstance(status, int) and 400 <= status < 500 and status not in (408, 409, 429):
        return None  # the API refuses the request itself
    asked = retry_after(headers) if headers is not None else None
    if asked is None:
        asked = retry_info(getattr(error, "details", None))
    return asked if asked is not None else 0.1 * 2 ** (attempt - 1)


def retry_info(body: Any) -> float | None:
    """Google's delay: a google.rpc.RetryInfo detail in the error body ("retryDelay": "26s")."""
    details = body.get("error", {}).get("details", []) if isinstance(body, dict) else []
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("rpc.RetryInfo"):
            try:
                return float(str(detail.get("retryDelay", "")).removesuffix("s"))
            except ValueError:
                return None
    return None


def retry_after(headers: Any) -> float | None:
    for name, per_second in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            return float(headers[name]) / per_second
        except (KeyError, TypeError, ValueError):  # absent, or an HTTP date
            continue
    return None


def refuse_duplicate_ids(reply: Reply) -> None:
    """Results are matched to calls by id: two calls under one id cannot both be answered
    (and Anthropic refuses such a history), so nothing of the reply is run."""
    ids = [call.id for call in reply.calls]
    shared = sorted({i for i in ids if ids.count(i) > 1})
    if shared:
        raise GaveUp(f"the reply gives several calls the id {', '.join(shared)}; none was run")


def answer(call: Call, finish: str, toolbox: Toolbox) -> Result:
    if finish == "length":  # the token limit cut the reply: whatever the call says is partial
        return Result.error("the call was cut off by the output-token limit and was not run")
    return execute(call.name, call.arguments, toolbox)


def execute(name: str, arguments: Any, toolbox: Toolbox) -> Result:
    """Run one call after every check a model's call needs; any failure is an error result."""
    if name not in SCHEMAS:  # only what was offered, never what else happens to exist
        return Result.error(f"unknown tool {name!r}; the tools are {', '.join(SCHEMAS)}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as e:
            return Result.error(f"the arguments are not valid JSON ({e})")
    validator = jsonschema.Draft202012Validator(SCHEMAS[name])
    problem = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    if problem is not None:
        return Result.error(f"invalid arguments for {name}: {problem.message}")
    path = arguments.get("path")
    if isinstance(path, str) and not toolbox.inside(path):
        return Result.error(f"the path {path!r} is outside the project; it was not read")
    try:
        return Result(toolbox.functions[name](**arguments))
    except Exception as e:  # a failing tool is news for the model, not the end of the loop
        return Result.error(f"{name} failed: {e}")


def not_an_answer(text: str, ungrounded: bool) -> str | None:
    """What is wrong with a final text, if it cannot be shown as the answer."""
    if writes_a_call(text):
        return "wrote a tool call as text instead of calling the tool"
    if ungrounded:
        return "answered without calling a tool"
    return None


def writes_a_call(text: str) -> bool:
    """Whether the text holds a JSON object naming one of the tools (in prose, in a fence)."""
    decoder = json.JSONDecoder()
    for start in (i for i, char in enumerate(text) if char == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("name") in SCHEMAS:
            return True
    return False
