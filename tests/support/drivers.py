"""One driver per wire format, over the official Python SDKs, and a walker that plays a
scenario turn by turn on any of them — so a test can say "every scenario × every API"."""

from __future__ import annotations

import ssl
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import anthropic
import openai
from google import genai
from google.genai import types as genai_types

from examples.harness.toolbox import SCHEMAS
from mockllm.core.scenario import Scenario
from tests.support import TOOL_PARAMETERS, ServerProcess, sample_text

ANTHROPIC_STOP = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}
# One TLS context for every client: each SDK client would otherwise load the CA bundle
# again (about 0.1 s), though the servers under test speak plain HTTP.
TLS = ssl.create_default_context()
RESPONSES_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}
GEMINI_FINISH = {"MAX_TOKENS": "length", "SAFETY": "content_filter"}


def schema(tool: str) -> dict[str, Any]:
    """The bundled scenarios are written for the reference harness's tools: their schemas
    (required properties, enums) are what `generate:` derives arguments from."""
    return SCHEMAS.get(tool, TOOL_PARAMETERS)


@dataclass
class View:
    """What a harness sees of one reply, in neutral terms; `raw` is the SDK's object."""

    text: str | None
    reasoning: str | None
    calls: list[tuple[str, str, str]]  # (id, name, arguments as a JSON string)
    finish: str
    raw: Any = field(default=None, compare=False, repr=False)


class Driver(ABC):
    api: str
    model: str

    def __init__(self, server: ServerProcess, scenario: str, session: str) -> None:
        self.client = self.make_client(server, scenario, session)

    @abstractmethod
    def make_client(self, server: ServerProcess, scenario: str, session: str) -> Any: ...

    def close(self) -> None:
        self.client.close()

    # request building: each gets the neutral pieces and returns SDK kwargs / history items
    @abstractmethod
    def request(
        self, system: str | None, history: list[Any], tools: list[str], tool_choice: Any, model: str
    ) -> dict[str, Any]: ...

    @abstractmethod
    def user(self, text: str) -> list[Any]: ...

    @abstractmethod
    def assistant(self, view: View) -> list[Any]: ...

    @abstractmethod
    def results(self, results: list[tuple[str, str, bool]]) -> list[Any]: ...

    # calls
    @abstractmethod
    def create(self, kwargs: dict[str, Any]) -> View: ...

    @abstractmethod
    def stream(self, kwargs: dict[str, Any]) -> View:
        """The reply as the SDK's own stream accumulator assembles it."""
        ...


class OpenAIDriver(Driver):
    """Chat Completions and Responses: the same official client."""

    def make_client(self, server: ServerProcess, scenario: str, session: str) -> Any:
        return openai.OpenAI(
            base_url=server.openai_url(scenario, session),
            api_key="test",
            max_retries=0,
            http_client=openai.DefaultHttpxClient(verify=TLS),
        )


class ChatDriver(OpenAIDriver):
    api = "chat"
    model = "gpt-4o-mini"

    def request(
        self, system: str | None, history: list[Any], tools: list[str], tool_choice: Any, model: str
    ) -> dict[str, Any]:
        messages = ([{"role": "system", "content": system}] if system else []) + history
        kwargs: dict[str, Any] = {"model": model, "messages": messages}
        if tools:
            kwargs["tools"] = [
                {"type": "function", "function": {"name": n, "parameters": schema(n)}}
                for n in tools
            ]
        if tool_choice is not None:
            kwargs["tool_choice"] = (
                {"type": "function", "function": {"name": tool_choice.name}}
                if tool_choice.mode == "tool"
                else tool_choice.mode
            )
        return kwargs

    def user(self, text: str) -> list[Any]:
        return [{"role": "user", "content": text}]

    def assistant(self, view: View) -> list[Any]:
        return [view.raw.choices[0].message.model_dump(exclude_none=True)]

    def results(self, results: list[tuple[str, str, bool]]) -> list[Any]:
        return [{"role": "tool", "tool_call_id": i, "content": c} for i, c, _ in results]

    def create(self, kwargs: dict[str, Any]) -> View:
        return self.view(self.client.chat.completions.create(**kwargs))

    def stream(self, kwargs: dict[str, Any]) -> View:
        try:
            with self.client.chat.completions.stream(**kwargs) as s:
                return self.view(s.get_final_completion())
        except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as e:
            return self.view(
                e.completion
            )  # the helper refuses these finishes; the snapshot rides along

    @staticmethod
    def view(completion: Any) -> View:
        choice = completion.choices[0]
        message = choice.message
        calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()]
        reasoning = (message.model_extra or {}).get("reasoning_content")
        return View(message.content or None, reasoning, calls, choice.finish_reason, completion)


class ResponsesDriver(OpenAIDriver):
    api = "responses"
    model = "gpt-4.1"

    def request(
        self, system: str | None, history: list[Any], tools: list[str], tool_choice: Any, model: str
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": model, "input": history}
        if system:
            kwargs["instructions"] = system
        if tools:
            kwargs["tools"] = [
                {"type": "function", "name": n, "parameters": schema(n), "strict": False}
                for n in tools
            ]
        if tool_choice is not None:
            kwargs["tool_choice"] = (
                {"type": "function", "name": tool_choice.name}
                if tool_choice.mode == "tool"
                else tool_choice.mode
            )
        return kwargs

    def user(self, text: str) -> list[Any]:
        return [{"role": "user", "content": text}]

    def assistant(self, view: View) -> list[Any]:
        return [item.model_dump(exclude_none=True) for item in view.raw.output]

    def results(self, results: list[tuple[str, str, bool]]) -> list[Any]:
        return [{"type": "function_call_output", "call_id": i, "output": c} for i, c, _ in results]

    def create(self, kwargs: dict[str, Any]) -> View:
        return self.view(self.client.responses.create(**kwargs))

    def stream(self, kwargs: dict[str, Any]) -> View:
        with self.client.responses.stream(**kwargs) as s:
            final = None
            for event in s:
                if event.type in ("response.completed", "response.incomplete"):
                    final = event.response
            if final is not None and final.status == "completed":
                final = s.get_final_response()
        assert final is not None, (
            "the stream ended without response.completed or response.incomplete"
        )
        return self.view(final)

    @staticmethod
    def view(response: Any) -> View:
        calls = [
            (i.call_id, i.name, i.arguments) for i in response.output if i.type == "function_call"
        ]
        texts = [
            c.text
            for i in response.output
            if i.type == "message"
            for c in i.content
            if c.type == "output_text"  # not a refusal part
        ]
        summaries = [s.text for i in response.output if i.type == "reasoning" for s in i.summary]
        if response.status == "incomplete":
            finish = RESPONSES_INCOMPLETE[response.incomplete_details.reason]
        else:
            finish = "tool_calls" if calls else "stop"
        return View(
            "".join(texts) or None,
            "".join(summaries) if summaries else None,
            calls,
            finish,
            response,
        )


class AnthropicDriver(Driver):
    api = "anthropic"
    model = "claude-sonnet-4-6"

    def make_client(self, server: ServerProcess, scenario: str, session: str) -> Any:
        return anthropic.Anthropic(
            base_url=f"{server.url}/s/{scenario}/{session}",
            api_key="test",
            max_retries=0,
            http_client=anthropic.DefaultHttpxClient(verify=TLS),
        )

    def request(
        self, system: str | None, history: list[Any], tools: list[str], tool_choice: Any, model: str
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": model,
            "max_tokens": 1024,
            "messages": _merge_users(history),
        }
        if system:
            kwargs["system"] = system
        if tools:
            kwargs["tools"] = [{"name": n, "input_schema": schema(n)} for n in tools]
        if tool_choice is not None:
            mode = {"required": "any"}.get(tool_choice.mode, tool_choice.mode)
            kwargs["tool_choice"] = (
                {"type": "tool", "name": tool_choice.name} if mode == "tool" else {"type": mode}
            )
        return kwargs

    def user(self, text: str) -> list[Any]:
        return [{"role": "user", "content": [{"type": "text", "text": text}]}]

    def assistant(self, view: View) -> list[Any]:
        return [
            {
                "role": "assistant",
                # warnings=False: a tool_use input that is not an object is replayed as sent.
                "content": [
                    b.model_dump(exclude_none=True, warnings=False) for b in view.raw.content
                ],
            }
        ]

    def results(self, results: list[tuple[str, str, bool]]) -> list[Any]:
        blocks = [
            {"type": "tool_result", "tool_use_id": i, "content": c, "is_error": e}
            for i, c, e in results
        ]
        return [{"role": "user", "content": blocks}] if blocks else []

    def create(self, kwargs: dict[str, Any]) -> View:
        return self.view(self.client.messages.create(**kwargs))

    def stream(self, kwargs: dict[str, Any]) -> View:
        with self.client.messages.stream(**kwargs) as s:
            return self.view(s.get_final_message())

    @staticmethod
    def view(message: Any) -> View:
        import json

        texts = [b.text for b in message.content if b.type == "text"]
        thinking = [b.thinking for b in message.content if b.type == "thinking"]
        calls = [
            (b.id, b.name, json.dumps(b.input, ensure_ascii=False, separators=(",", ":")))
            for b in message.content
            if b.type == "tool_use"
        ]
        reasoning = "".join(thinking) if thinking else None
        return View(
            "".join(texts) or None, reasoning, calls, ANTHROPIC_STOP[message.stop_reason], message
        )


def _merge_users(history: list[Any]) -> list[Any]:
    """Anthropic wants the results and any following user text in one user message."""
    out: list[Any] = []
    for m in history:
        if out and m["role"] == "user" and out[-1]["role"] == "user":
            out[-1] = {"role": "user", "content": out[-1]["content"] + m["content"]}
        else:
            out.append(m)
    return out


class GeminiDriver(Driver):
    """google-genai with automatic function calling off: the walker runs the calls."""

    api = "gemini"
    model = "gemini-2.5-flash"

    def make_client(self, server: ServerProcess, scenario: str, session: str) -> Any:
        return genai.Client(
            api_key="test", http_options={"base_url": f"{server.url}/s/{scenario}/{session}"}
        )

    def request(
        self, system: str | None, history: list[Any], tools: list[str], tool_choice: Any, model: str
    ) -> dict[str, Any]:
        config: dict[str, Any] = {"automatic_function_calling": {"disable": True}}
        if system:
            config["system_instruction"] = system
        if tools:
            declarations = [{"name": n, "parameters_json_schema": schema(n)} for n in tools]
            config["tools"] = [{"function_declarations": declarations}]
        if tool_choice is not None:
            mode = {"required": "ANY", "tool": "ANY"}.get(tool_choice.mode, tool_choice.mode)
            calling: dict[str, Any] = {"mode": mode.upper()}
            if tool_choice.mode == "tool":
                calling["allowed_function_names"] = [tool_choice.name]
            config["tool_config"] = {"function_calling_config": calling}
        return {"model": model, "contents": history, "config": config}

    def user(self, text: str) -> list[Any]:
        return [{"role": "user", "parts": [{"text": text}]}]

    def assistant(self, view: View) -> list[Any]:
        content = view.raw.candidates[0].content
        return [content] if content is not None else []

    def results(self, results: list[tuple[str, str, bool]]) -> list[Any]:
        """By name (the call's `id` stands in for it when the reply gave none), in call order."""
        parts = [
            {
                "function_response": {
                    "name": self.names.get(i, i),
                    "response": {"error" if e else "result": c},
                }
            }
            for i, c, e in results
        ]
        return [{"role": "user", "parts": parts}] if parts else []

    def create(self, kwargs: dict[str, Any]) -> View:
        return self.view(self.client.models.generate_content(**self.timed(kwargs)))

    def stream(self, kwargs: dict[str, Any]) -> View:
        return self.view(merged(list(self.client.models.generate_content_stream(**kwargs))))

    @staticmethod
    def timed(kwargs: dict[str, Any]) -> dict[str, Any]:
        """A `timeout` (seconds, as the other drivers take it) as google-genai's http_options."""
        if "timeout" not in kwargs:
            return kwargs
        rest = {k: v for k, v in kwargs.items() if k != "timeout"}
        http = {"timeout": int(kwargs["timeout"] * 1000)}
        return {**rest, "config": {**rest.get("config", {}), "http_options": http}}

    def view(self, response: Any) -> View:
        import json

        candidate = response.candidates[0]
        parts = candidate.content.parts if candidate.content and candidate.content.parts else []
        calls = [p.function_call for p in parts if p.function_call]
        keys = [c.id or c.name for c in calls]
        self.names = {k: c.name for k, c in zip(keys, calls, strict=True)}
        texts = [p.text for p in parts if p.text and not p.thought]
        thoughts = [p.text for p in parts if p.text and p.thought]
        reason = candidate.finish_reason.value if candidate.finish_reason else None
        finish = GEMINI_FINISH.get(reason or "", "tool_calls" if calls else reason or "?")
        finish = "stop" if finish == "STOP" else finish
        arguments = [json.dumps(c.args, ensure_ascii=False, separators=(",", ":")) for c in calls]
        return View(
            "".join(texts) or None,
            "".join(thoughts) if thoughts else None,
            [(k, c.name, a) for k, c, a in zip(keys, calls, arguments, strict=True)],
            finish,
            response,
        )

    names: dict[str, str] = {}  # noqa: RUF012 (set per reply by view)


def merged(chunks: list[Any]) -> Any:
    """A streamed reply as one response: the chunks' parts in order, adjacent text of one kind
    joined (the SDK keeps one content per chunk; the API reads consecutive contents of a role
    as one turn), with the last chunk's finish reason and usage."""
    parts: list[Any] = []
    for chunk in chunks:
        content = chunk.candidates[0].content if chunk.candidates else None
        for part in content.parts if content and content.parts else ():
            previous = parts[-1] if parts else None
            if (
                part.text is not None
                and previous is not None
                and previous.text is not None
                and bool(previous.thought) == bool(part.thought)
                and not part.thought_signature
            ):
                parts[-1] = previous.model_copy(update={"text": previous.text + part.text})
            elif part.text != "" or part.thought_signature:
                parts.append(part)
    last = chunks[-1]
    candidate = last.candidates[0].model_copy(
        update={"content": genai_types.Content(role="model", parts=parts) if parts else None}
    )
    return last.model_copy(update={"candidates": [candidate]})


DRIVERS: dict[str, type[Driver]] = {
    d.api: d for d in (ChatDriver, ResponsesDriver, AnthropicDriver, GeminiDriver)
}


class Walker:
    """Plays a scenario on one API: each request satisfies the turn's expectations, and
    carries the replies the server gave plus results shaped for the next turn."""

    def __init__(self, scenario: Scenario, driver: Driver) -> None:
        self.scenario, self.driver, self.turn = scenario, driver, 0
        first = scenario.turns[0].expect
        self.system = sample_text(first.system, "") if first and first.system else None
        self.history: list[Any] = driver.user(sample_text(first.user if first else None, "hi"))
        self.last_user = sample_text(first.user if first else None, "hi")

    @property
    def expect(self) -> Any:
        turn = self.scenario.turn(self.turn)
        return turn.expect if turn else None

    def tools(self) -> list[str]:
        names: list[str] = []
        for t in self.scenario.turns:
            names += list(t.expect.tools or ()) if t.expect else []
            names += [c.name for c in t.reply.tool_calls]
        return list(dict.fromkeys(names))

    def request(self) -> dict[str, Any]:
        expect = self.expect
        model = sample_text(expect.model if expect else None, self.driver.model)
        choice = expect.tool_choice if expect else None
        return self.driver.request(self.system, list(self.history), self.tools(), choice, model)

    def advance(self, view: View) -> None:
        self.history += self.driver.assistant(view)
        self.turn += 1
        expect = self.expect
        wanted = list(expect.tool_results or ()) if expect else []
        results = []
        for i, (call_id, _, _) in enumerate(view.calls):
            match = wanted[i] if i < len(wanted) else None
            content = (match.contains if match and match.contains else None) or f"result {i}"
            results.append((call_id, content, bool(match and match.is_error)))
        self.history += self.driver.results(results)
        wanted_user = expect.user if expect else None
        if not view.calls or (wanted_user and not wanted_user.matches(self.last_user)):
            # After a text reply the user speaks next (Anthropic would merge two assistant
            # messages into one reply); else only when the next turn expects other words.
            self.last_user = sample_text(wanted_user, "go on")
            self.history += self.driver.user(self.last_user)
