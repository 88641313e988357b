"""Every Gemini and Anthropic history rule holds on Vertex AI too, both sides through the
Vertex SDKs: strict, google-genai with `vertexai=True` and AnthropicVertex each get the
provider's 400 with the same text as on the direct APIs (Claude's own refusals keep
Anthropic's envelope on Vertex); --validation warn serves the same bad history and logs
the violation. The bad histories are tests/test_validation.py's."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic import AnthropicVertex
from google.genai import errors as genai_errors

from tests.e2e.wires.test_validation import CASES, GEMINI_TOOLS, Case, first_reply, matches
from tests.e2e.wires.test_vertex_gemini import vertex_client
from tests.support import ServerProcess

VERTEX_CASES = [c for c in CASES if c.api in ("gemini", "anthropic")]
API = {"gemini": "vertex-gemini", "anthropic": "vertex-anthropic"}


def send(server: ServerProcess, case: Case, session: str, body: dict[str, Any]) -> Any:
    base = f"{server.url}/s/{case.scenario}/{session}"
    if case.api == "gemini":
        with vertex_client(base) as client:
            config = {"tools": GEMINI_TOOLS, "automatic_function_calling": {"disable": True}}
            return client.models.generate_content(
                model=body["model"], contents=body["contents"], config=config
            )
    claude = AnthropicVertex(
        base_url=base + "/v1",
        region="us-east5",
        project_id="mock-project",
        access_token="test",
        max_retries=0,
    )
    with claude:  # /v1/messages: the SDK moves the model into the rawPredict path
        return claude.post("/v1/messages", body=body, cast_to=object)


@pytest.mark.parametrize("case", VERTEX_CASES, ids=[c.id for c in VERTEX_CASES])
def test_rule_strict_rejects_as_on_the_direct_api(
    server: ServerProcess, session: str, case: Case
) -> None:
    body = case.build(first_reply(server, case.api, case.scenario, case.setup))
    if case.api == "gemini":
        with pytest.raises(genai_errors.ClientError) as google:
            send(server, case, session, body)
        assert (google.value.code, google.value.status) == (400, "INVALID_ARGUMENT")
        message = str(google.value.message)
    else:
        with pytest.raises(anthropic.BadRequestError) as caught:
            send(server, case, session, body)
        got: Any = caught.value.body
        assert got["type"] == "error" and got["error"]["type"] == "invalid_request_error"
        message = got["error"]["message"]
    assert matches(case.message, message), message
    entry = server.last(session)
    rule = case.rule.split("/")[0]
    assert entry["api"] == API[case.api]
    assert entry["violations"][0] == {"rule": rule, "message": message}


@pytest.mark.parametrize("case", VERTEX_CASES, ids=[c.id for c in VERTEX_CASES])
def test_rule_warn_serves_and_logs(warn_server: ServerProcess, session: str, case: Case) -> None:
    body = case.build(first_reply(warn_server, case.api, case.scenario, case.setup))
    send(warn_server, case, session, body)  # no exception: served
    entry = warn_server.last(session)
    assert entry["api"] == API[case.api] and entry["response"]["status"] == 200
    assert case.rule.split("/")[0] in [v["rule"] for v in entry["violations"]]
