"""Wire-format adapters. Built-in ones register exactly as a third-party one would: with
`register`, when their module is imported. A package outside mockllm makes its wire known
by naming that module (or its `Adapter` subclass) in the `mockllm.wires` entry-point group
(docs/wires.md); every server, recorder and `mockllm` command loads them on first import."""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder

from mockllm.core.validation import RuleSet
from mockllm.errors import WireError
from mockllm.providers import (
    anthropic_rules,
    bedrock_rules,
    chat_flavour_rules,
    gemini_rules,
    ollama_rules,
    openai_responses_rules,
)
from mockllm.providers.anthropic import Messages
from mockllm.providers.anthropic_answers import MessagesAnswers
from mockllm.providers.base import (
    Adapter,
    Answers,
    Body,
    Parsed,
    RecordedResponses,
    SharedResponses,
    Stream,
    shares_responses,
)
from mockllm.providers.bedrock import Converse
from mockllm.providers.bedrock_answers import ConverseAnswers, InvokeAnswers
from mockllm.providers.bedrock_invoke import Invoke
from mockllm.providers.flavoured_chat import FlavouredChat
from mockllm.providers.gemini import Gemini
from mockllm.providers.gemini_answers import GeminiAnswers
from mockllm.providers.ollama import Ollama
from mockllm.providers.ollama_answers import OllamaAnswers
from mockllm.providers.openai_chat_answers import ChatAnswers
from mockllm.providers.openai_responses import Responses
from mockllm.providers.openai_responses_answers import ResponsesAnswers
from mockllm.providers.vertex_anthropic import VertexAnthropic
from mockllm.providers.vertex_gemini import VertexGemini

ADAPTERS: dict[str, type[Adapter]] = {}
# api → the reader of that wire's answers, for `mockllm record` (a wire without one is not
# recorded): kept beside the adapter, not on it, since serving never asks for it.
READERS: dict[str, type[Answers]] = {}


def register(
    adapter: type[Adapter], rules: RuleSet | None = None, answers: type[Answers] | None = None
) -> type[Adapter]:
    """Make a wire format (its history rules, and the reader of its answers that
    `mockllm record` uses) available to every server started afterwards."""
    if rules is not None:
        adapter.rules = rules
    if answers is not None:
        READERS[adapter.api] = answers
    ADAPTERS[adapter.api] = adapter
    return adapter


def answers_of(adapter: Adapter) -> type[Answers] | None:
    """The reader of `adapter`'s answers that `register` was given, if any."""
    return READERS.get(adapter.api)


# Chat Completions in its flavours (docs/flavours.md); their rules join the Chat rules.
register(FlavouredChat, chat_flavour_rules.RULES, ChatAnswers)
register(Responses, openai_responses_rules.RULES, ResponsesAnswers)
register(Messages, anthropic_rules.RULES, MessagesAnswers)
register(Gemini, gemini_rules.RULES, GeminiAnswers)
register(Converse, bedrock_rules.RULES, ConverseAnswers)
register(Invoke, anthropic_rules.RULES, InvokeAnswers)  # Anthropic's body: Anthropic's rules
# Vertex AI: the Gemini and Anthropic bodies under Vertex's paths, with their rules.
register(VertexGemini, gemini_rules.RULES, GeminiAnswers)
register(VertexAnthropic, anthropic_rules.RULES, MessagesAnswers)
register(Ollama, ollama_rules.RULES, OllamaAnswers)

WIRES_GROUP = "mockllm.wires"  # the entry-point group third-party wires are declared in


def load_wires() -> list[str]:
    """Import every wire installed packages declare under `mockllm.wires`: each entry point
    names a module whose import calls `register` (as the built-ins do), or an `Adapter`
    subclass, registered as it is. The names loaded, in order; a wire that fails to load
    stops the start with its entry point named (a wire that silently went missing would
    answer its SDK with 404s)."""
    if not _may_declare(WIRES_GROUP):
        return []
    from importlib.metadata import entry_points  # deferred: only a start pays the scan

    loaded = []
    for point in sorted(entry_points(group=WIRES_GROUP), key=lambda p: p.name):
        try:
            found = point.load()
            if isinstance(found, type) and issubclass(found, Adapter):
                register(found)
        except Exception as e:
            raise WireError(
                f"mockllm: the wire {point.name!r} ({WIRES_GROUP}: {point.value}) "
                f"failed to load: {type(e).__name__}: {e}"
            ) from e
        loaded.append(point.name)
    return loaded


def _may_declare(group: str) -> bool:
    """Whether an installed distribution may declare `group`: a look for its name in the
    entry_points.txt of each *.dist-info and *.egg-info on sys.path, where importlib.metadata
    finds them. Importing importlib.metadata and parsing every distribution's entry points
    cost a start about 12 ms (200 distributions); this look about 2. When the look cannot
    be sure (a zip or an egg on the path, another finder of distributions), yes."""
    if any(_other_finder(finder) for finder in sys.meta_path):
        return True
    needle = group.encode()
    for entry in sys.path:
        if not isinstance(entry, str) or entry.lower().endswith(".egg"):
            return True
        try:
            names = os.listdir(entry or ".")
        except OSError:
            if os.path.isfile(entry):  # a zip: importlib.metadata looks inside
                return True
            continue  # missing or unreadable: importlib.metadata skips it too
        for name in names:
            if name.lower().endswith((".dist-info", ".egg-info")):
                try:
                    with open(os.path.join(entry, name, "entry_points.txt"), "rb") as file:
                        if needle in file.read():
                            return True
                except OSError:
                    continue  # no entry points (or an egg-info file)
    return False


def _other_finder(finder: object) -> bool:
    return finder is not PathFinder and getattr(finder, "find_distributions", None) is not None


__all__ = [
    "ADAPTERS",
    "READERS",
    "Adapter",
    "Answers",
    "Body",
    "Parsed",
    "RecordedResponses",
    "SharedResponses",
    "Stream",
    "answers_of",
    "load_wires",
    "register",
    "shares_responses",
]

THIRD_PARTY = load_wires()  # after the built-ins: a third party's api may replace one
