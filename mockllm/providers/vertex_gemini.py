"""Gemini on Vertex AI: `generateContent`, `streamGenerateContent?alt=sse` and
`countTokens` under `projects/{p}/locations/{l}/publishers/google/models/{m}`, as
google-genai sends them with `vertexai=True` (and Google ADK with
GOOGLE_GENAI_USE_VERTEXAI=TRUE). The body, the answer, the stream and the error envelope
are the Gemini API's (gemini.py); the path and Vertex's 429 text are Vertex's own.
docs/http-api.md, "Vertex AI specifics".
"""

from __future__ import annotations

from typing import Any

from mockllm.errors import RequestError
from mockllm.providers import vertex
from mockllm.providers.base import Parsed
from mockllm.providers.gemini import Gemini

METHODS = "generateContent|streamGenerateContent"
ROUTE = vertex.publisher_route("google", "[^/:]+", METHODS, place_optional=True)
COUNT = vertex.publisher_route("google", "[^/:]+", "countTokens", place_optional=True)


class VertexGemini(Gemini):
    api = "vertex-gemini"
    route_pattern = ROUTE
    route_help = vertex.route_help("google", "generateContent", "streamGenerateContent")
    models_routes = ()

    def parse(self, body: Any) -> Parsed:
        return self.parse_at(body, "v1/publishers/google/models/mockllm:generateContent")

    def parse_at(self, body: Any, route: str) -> Parsed:
        """The path's model and method, read as the Gemini API's path would be."""
        match = ROUTE.fullmatch(route)
        if match is None:  # the app routes only matching paths here
            raise RequestError(404, f"mockllm: no Vertex AI method at /{route}", kind="not_found")
        return Gemini.parse_at(self, body, f"v1beta/models/{match['model']}:{match['method']}")

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        error_type, message, code = Gemini.fault_texts(self, status)
        return error_type, vertex.GEMINI_429 if status == 429 else message, code
