"""What Vertex AI's publisher routes share, whichever model answers: the path
(`[v1|v1beta1/]projects/{project}/locations/{location}/publishers/{publisher}/models/
{model}:{method}`) and Google's error envelope for what Vertex itself refuses (quota,
unknown route). docs/http-api.md, "Vertex AI specifics", gives the sources.

google-genai puts `v1beta1/` (its Vertex default) or `v1/` before the path; AnthropicVertex's
base URL ends in `/v1`; Claude Code, given an ANTHROPIC_VERTEX_BASE_URL without a version,
sends the path with none (BerriAI/litellm PR #39625): all three are served.
"""

from __future__ import annotations

import re
from typing import Any

from mockllm.errors import RequestError
from mockllm.providers.base import dumps

# google.rpc.Code names by HTTP status: Vertex sends them in `error.status` as the Gemini API does.
from mockllm.providers.gemini import STATUS

_VERSION = r"(?:(?:v1|v1beta1)/)?"
_PLACE = r"projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/"
# Any path under a project, which Vertex's error shape answers when nothing serves it.
UNDER_PROJECT = re.compile(_VERSION + "projects/")


def publisher_route(
    publisher: str, model: str, methods: str, place_optional: bool
) -> re.Pattern[str]:
    """A publisher's model route; `place_optional`: Vertex express mode (an API key, no
    project) drops the `projects/…/locations/…/` part."""
    place = f"(?:{_PLACE})?" if place_optional else _PLACE
    return re.compile(
        f"{_VERSION}{place}publishers/{publisher}/models/(?P<model>{model}):(?P<method>{methods})"
    )


def route_help(publisher: str, *methods: str) -> tuple[str, ...]:
    return tuple(
        f"v1/projects/{{project}}/locations/{{location}}/publishers/{publisher}/models/{{model}}:{m}"
        for m in methods
    )


# Vertex's quota refusal for a partner model (cline/cline#651, anthropics/claude-code#1440;
# Vertex names the base model, mockllm does not know it here).
QUOTA_MESSAGE = (
    "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model. "
    "Please submit a quota increase request. "
    "https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai."
)
# Vertex's 429 for Gemini (google-gemini/gemini-cli#15498).
GEMINI_429 = (
    "Resource exhausted. Please try again later. Please refer to "
    "https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details."
)


def status_name(code: int) -> str:
    return STATUS.get(code, "INTERNAL" if code >= 500 else "INVALID_ARGUMENT")


def google_error(error: RequestError) -> bytes:
    """`{"error": {"code", "message", "status"}}`: Vertex's envelope."""
    body: dict[str, Any] = {
        "code": error.status,
        "message": error.message,
        "status": status_name(error.status),
    }
    return dumps({"error": body})
