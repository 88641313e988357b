"""Where a model request goes: its route, behind an optional /s/NAME[/SESSION] prefix, itself
behind an optional /f/FLAVOR prefix (docs/flavours.md). Shared by `mockllm serve` and
`mockllm record`, so both read a URL the same way."""

from __future__ import annotations

import re
from collections.abc import Iterable

from mockllm.providers import Adapter, vertex_anthropic, vertex_gemini
from mockllm.providers.embedding_bedrock import is_embedding_model

# `/s/NAME[/SESSION]/mcp/SERVER`: a scripted MCP server of the scenario (serving/mcp.py).
MCP_PREFIX = "mcp/"
# Token counting, answered beside the turns (side_routes.py): Anthropic's, and Gemini's
# with the model in the path (a Gemini path is a route already: its model listing's).
ANTHROPIC_COUNT = "v1/messages/count_tokens"
GEMINI_COUNT = re.compile(r"(?:v1|v1beta)/models/(?P<model>[^/:]+):countTokens")
# Embeddings, answered beside the turns (embedding_routes.py): OpenAI's, with or without
# /v1 in the base URL as Chat Completions is, and Gemini's two methods.
OPENAI_EMBEDDINGS = frozenset({"v1/embeddings", "embeddings", "openai/v1/embeddings"})
# Azure OpenAI's, as AzureOpenAI posts them: the deployment is the model (docs/azure.md).
AZURE_EMBEDDINGS = re.compile(r"openai/deployments/(?P<deployment>[^/]+)/embeddings")
OLLAMA_EMBEDDINGS = frozenset({"api/embed", "api/embeddings"})
GEMINI_EMBED = re.compile(
    r"(?:v1|v1beta)/models/(?P<model>[^/:]+):(?P<method>embedContent|batchEmbedContents)"
)


# Bedrock's InvokeModel for an embedding model (Titan, Cohere): the Invoke wire's route.
BEDROCK_INVOKE = re.compile(r"model/(?P<model>.+)/invoke")


def embedding_wire(route: str) -> str | None:
    """'openai', 'gemini', 'ollama' or 'bedrock' for an embeddings route, else None."""
    if route in OPENAI_EMBEDDINGS or AZURE_EMBEDDINGS.fullmatch(route):
        return "openai"
    if route in OLLAMA_EMBEDDINGS:
        return "ollama"
    found = BEDROCK_INVOKE.fullmatch(route)
    if found is not None:
        return "bedrock" if is_embedding_model(found["model"]) else None
    return "gemini" if GEMINI_EMBED.fullmatch(route) else None


# Vertex AI's: Gemini's under its publisher path, Claude's as `count-tokens:rawPredict`.
VERTEX_GEMINI_COUNT = vertex_gemini.COUNT
VERTEX_ANTHROPIC_COUNT = vertex_anthropic.COUNT


class Routes:
    def __init__(self, adapters: Iterable[Adapter]) -> None:
        self.adapters = list(adapters)
        self.posts: dict[str, Adapter] = {r: a for a in self.adapters for r in a.routes}
        self.patterned = [a for a in self.adapters if a.route_pattern is not None]
        self.listings = {r for a in self.adapters for r in a.models_routes}

    def post(self, route: str) -> Adapter | None:
        """The adapter that answers POST `route`: by its fixed routes, else by pattern (a
        model in the path, as Gemini's); the hot path never needs the patterns."""
        adapter = self.posts.get(route)
        if adapter is None:
            adapter = next(
                (a for a in self.patterned if a.route_pattern and a.route_pattern.fullmatch(route)),
                None,
            )
        return adapter

    def listing(self, route: str) -> str | None:
        """'v1beta/models/x' → 'v1beta/models': the model listing a GET path belongs to."""
        version, _, rest = route.partition("/")
        found = f"{version}/models" if rest == "models" or rest.startswith("models/") else ""
        return found if found in self.listings else None

    def getter(self, route: str) -> Adapter | None:
        """The adapter that answers GET `route` (e.g. v1/responses/{id}), if any."""
        return next(
            (a for a in self.adapters if a.get_prefix and route.startswith(a.get_prefix)), None
        )

    @staticmethod
    def flavour(path: str) -> tuple[str | None, str]:
        """'/f/FLAVOR/REST' → (FLAVOR, '/REST'): the Chat Completions flavour a base URL
        chose (outermost, so that it composes with /s/NAME[/SESSION]); else (None, path)."""
        if not path.startswith("/f/"):
            return None, path
        flavor, _, rest = path[3:].partition("/")
        return flavor, "/" + rest

    def split(self, path: str) -> tuple[str | None, str | None, str]:
        """'/s/NAME[/SESSION]/ROUTE' → (NAME, SESSION, ROUTE); a plain path has neither."""
        if not path.startswith("/s/"):
            return None, None, path[1:]
        scenario, _, rest = path[3:].partition("/")
        if self._is_route(rest):
            return scenario, None, rest
        session, _, route = rest.partition("/")
        return scenario, session, route

    def _is_route(self, rest: str) -> bool:
        return (
            (rest.startswith(MCP_PREFIX) and "/" not in rest[len(MCP_PREFIX) :])
            or rest == ANTHROPIC_COUNT
            or embedding_wire(rest) is not None
            or VERTEX_GEMINI_COUNT.fullmatch(rest) is not None
            or VERTEX_ANTHROPIC_COUNT.fullmatch(rest) is not None
            or self.post(rest) is not None
            or self.listing(rest) is not None
            or self.getter(rest) is not None
        )
