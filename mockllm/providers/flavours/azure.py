"""Azure OpenAI's Chat Completions (docs/azure.md): OpenAI's body with Azure's content
filter annotations, and its 400 when the prompt filter blocks a request.

Every body carries `prompt_filter_results` and, on each choice, `content_filter_results`
(all `filtered: false` unless the reply says `finish: content_filter`); a stream opens with
a chunk that has no choices, only the prompt's results, which is what breaks clients that
read `choices[0]` of every chunk. Keys come in Azure's alphabetical order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mockllm.core.encoding import dumps, sse_frame
from mockllm.core.engine import Resolved
from mockllm.core.events import Event
from mockllm.errors import RequestError
from mockllm.providers.base import Parsed
from mockllm.providers.flavours.base import Flavour, drop, map_chunks
from mockllm.providers.openai_chat import openai_error_body

# The categories Azure's default filter reports on a completion, and on a prompt (which
# adds jailbreak, a yes/no "detected" rather than a severity).
_OUTPUT = ("hate", "self_harm", "sexual", "violence")
_PROMPT = ("hate", "jailbreak", "self_harm", "sexual", "violence")
# What a reply that says `finish: content_filter` was filtered for (mockllm's choice).
_FILTERED_OUTPUT = ("violence", "high")


def filter_results(categories: tuple[str, ...], flagged: tuple[str, str] | None = None) -> Any:
    """`content_filter_results` with every category safe, but `flagged` (category, severity)."""
    out: dict[str, Any] = {}
    for category in categories:
        hit = flagged is not None and flagged[0] == category
        if category == "jailbreak":
            out[category] = {"filtered": hit, "detected": hit}
        else:
            severity = flagged[1] if hit and flagged is not None else "safe"
            out[category] = {"filtered": hit, "severity": severity}
    return out


def _prompt_results() -> list[dict[str, Any]]:
    return [{"prompt_index": 0, "content_filter_results": filter_results(_PROMPT)}]


def _choice_results(choice: dict[str, Any], text: bool) -> Any:
    """What Azure annotates a choice with: nothing to judge (a call, a role chunk) is `{}`."""
    if choice.get("finish_reason") == "content_filter":
        return filter_results(_OUTPUT, _FILTERED_OUTPUT)
    return filter_results(_OUTPUT) if text else {}


def _sorted(obj: dict[str, Any]) -> dict[str, Any]:
    return dict(sorted(obj.items()))


class Azure(Flavour):
    name = "azure"
    # Azure's throttling answer: `{"error": {"code": "429", "message"}}` (docs/azure.md).
    fault_table: ClassVar[Mapping[int, tuple[str, str, str | None]]] = {
        429: (
            "",
            "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version "
            "2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. "
            "Please retry after 1 second. Please go here: https://aka.ms/oai/quotaincrease if "
            "you would like to further increase the default rate limit.",
            "429",
        ),
    }

    def body(self, obj: dict[str, Any], resolved: Resolved, parsed: Parsed) -> dict[str, Any]:
        choices = []
        for choice in obj["choices"]:
            text = bool(choice["message"].get("content"))
            choice["content_filter_results"] = _choice_results(choice, text)
            choice["message"] = _sorted(choice["message"])
            choices.append(_sorted(choice))
        obj["choices"] = choices
        obj["prompt_filter_results"] = _prompt_results()
        return _sorted(drop(obj, "service_tier"))

    def stream(self, events: list[Event], resolved: Resolved, parsed: Parsed) -> list[Event]:
        def change(obj: dict[str, Any], part: str) -> dict[str, Any] | None:
            choices = []
            for choice in obj["choices"]:
                text = bool(choice["delta"].get("content"))
                choice["content_filter_results"] = _choice_results(choice, text)
                choice["delta"] = _sorted(choice["delta"])
                choices.append(_sorted(choice))
            obj["choices"] = choices
            return _sorted(drop(obj, "service_tier"))

        opening = {"choices": [], "created": 0, "id": "", "model": "", "object": ""}
        opening["prompt_filter_results"] = _prompt_results()
        first = Event(sse_frame(dumps(opening)), "head")
        return [first, *map_chunks(events, change)]

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        if error.status == 429:
            return dumps({"error": {"code": error.code or "429", "message": error.message}})
        if error.filtered is None:
            return openai_error_body(error)
        inner = {
            "code": "ResponsibleAIPolicyViolation",
            "content_filter_result": filter_results(_PROMPT, error.filtered),
        }
        body = {
            "message": error.message,
            "type": None,
            "param": error.param,
            "code": error.code,
            "status": error.status,
            "innererror": inner,
        }
        return dumps({"error": body})
