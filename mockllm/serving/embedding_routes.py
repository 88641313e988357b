"""Embeddings requests (docs/embeddings.md): OpenAI's `POST /v1/embeddings` and Gemini's
`:embedContent` / `:batchEmbedContents`, behind the usual /s/SCENARIO[/SESSION] prefix.

Never a turn: answered from the text alone (core/embeddings.py) and the scenario's
`embeddings:` section (core/embedding_rules.py), logged as a side request
(`side.name: embeddings`) with its own `api`, so the viewer shows it and the verdict
leaves it out as it leaves out the scenario's other side requests.
"""

from __future__ import annotations

from typing import Any

from mockllm.core import wirejson
from mockllm.core.embedding_rules import NO_RULES, Asked, EmbeddingRules, fault_for, vectors
from mockllm.core.engine import Engine
from mockllm.errors import RequestError
from mockllm.log.journal import Journal, LiveEntry
from mockllm.options import ServerOptions
from mockllm.providers import Adapter
from mockllm.providers import embedding_bedrock as bedrock
from mockllm.providers import embedding_ollama as ollama
from mockllm.providers import embedding_wires as wires
from mockllm.serving.asgi import Receive, Scope, Send, read_body
from mockllm.serving.responder import Responder
from mockllm.serving.routing import (
    AZURE_EMBEDDINGS,
    BEDROCK_INVOKE,
    GEMINI_EMBED,
    embedding_wire,
)

APIS = {
    "openai": "openai-embeddings",
    "gemini": "gemini-embeddings",
    "ollama": "ollama-embeddings",
    "bedrock": "bedrock-embeddings",
}
WHY = "an embeddings request: answered from its text, never a turn"


class EmbeddingRoutes:
    def __init__(
        self, engine: Engine, journal: Journal, options: ServerOptions, shapes: dict[str, Adapter]
    ) -> None:
        """`shapes`: the adapter whose error shape each wire answers in ('openai', 'gemini')."""
        self.engine, self.journal, self.options, self.shapes = engine, journal, options, shapes

    async def handle(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        route: str,
        names: tuple[str | None, str | None],
    ) -> None:
        wire = embedding_wire(route)
        assert wire is not None
        headers = dict(scope["headers"])
        entry = self.journal.open(scope["path"], scope["headers"])
        entry.api = APIS[wire]
        entry.side = {"name": "embeddings", "why": WHY}
        asked_session = headers.get(b"x-mockllm-session", b"").decode("latin-1")
        entry.session = names[1] or asked_session or "default"
        scenario = names[0] or headers.get(b"x-mockllm-scenario", b"").decode("latin-1")
        entry.scenario = scenario or self.engine.default
        adapter = self.shapes[wire]
        responder = Responder(self.journal, entry, send, receive, adapter, self.options.max_stall)
        try:
            await self._answer(receive, wire, route, entry, responder, adapter)
        except RequestError as error:
            await responder.error(error)
        except Exception:
            await responder.crashed()
        finally:
            if (written := self.journal.close(entry)) is not None:
                await written

    async def _answer(
        self,
        receive: Receive,
        wire: str,
        route: str,
        entry: LiveEntry,
        responder: Responder,
        adapter: Adapter,
    ) -> None:
        entry.body = await read_body(receive, self.options.max_body)
        try:
            body = wirejson.loads(entry.body)
        except wirejson.InvalidJson as e:
            raise adapter.invalid_json(e.detail) from None
        asked, render = _parsed(wire, route, body)
        rules = self._rules(entry.scenario)
        fault = fault_for(rules, asked)
        dims = asked.dims
        if fault is not None:
            entry.fault = {"kind": fault.kind, "detail": fault.describe(), "why": "embeddings"}
            if fault.http is not None:
                h = fault.http
                raise adapter.fault_error(h.status, h.type, h.message, h.code, h.headers)
            if fault.over_limit:
                raise _over_limit(wire, asked)
            dims = fault.dimensions or dims
        found = vectors(rules, asked, dims)
        kinds = [how for _, how in found]
        entry.note(_summary(asked, dims, kinds))
        await responder.json(render([v for v, _ in found]))

    def _rules(self, name: str | None) -> EmbeddingRules:
        """The scenario's `embeddings:` rules; none when no scenario is named nor default
        (an embeddings request needs none), the usual 404 for a name that is unknown."""
        if not name:
            return NO_RULES
        return self.engine.find(name).embeddings or NO_RULES


def _parsed(wire: str, route: str, body: Any) -> tuple[Asked, Any]:
    if wire == "openai":
        azure = AZURE_EMBEDDINGS.fullmatch(route)
        if azure is not None and isinstance(body, dict):  # the deployment names the model
            body = {**body, "model": azure["deployment"]}
        asked, encoding = wires.openai_request(body)
        return asked, lambda found: wires.openai_body(asked, found, encoding)
    if wire == "bedrock":
        found = BEDROCK_INVOKE.fullmatch(route)
        assert found is not None
        asked = bedrock.bedrock_request(body, found["model"])
        return asked, lambda vectors: bedrock.bedrock_body(asked, vectors, body)
    if wire == "ollama":
        legacy = route == "api/embeddings"
        asked = ollama.ollama_request(body, legacy)
        return asked, lambda found: ollama.ollama_body(asked, found, legacy)
    match = GEMINI_EMBED.fullmatch(route)
    assert match is not None
    batch = match["method"] == "batchEmbedContents"
    asked = wires.gemini_request(body, match["model"], batch)
    return asked, lambda found: wires.gemini_body(found, batch)


def _over_limit(wire: str, asked: Asked) -> RequestError:
    if wire == "openai":
        return wires.openai_over_limit()
    if wire == "ollama":
        return ollama.ollama_over_limit()
    if wire == "bedrock":
        return bedrock.bedrock_over_limit()
    return wires.gemini_over_limit(max(wires.GEMINI_MAX_TOKENS + 1, *asked.tokens))


def _summary(asked: Asked, dims: int, kinds: list[str]) -> str:
    counted = ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds))
    return (
        f"embeddings: {len(asked.texts)} input(s) of model {asked.model}, {dims} dims ({counted})"
    )


__all__ = ["EmbeddingRoutes"]
