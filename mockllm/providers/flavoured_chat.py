"""Chat Completions in each provider's flavour (docs/flavours.md): the Chat adapter, with
the flavour's hooks (providers/flavours/) applied to what it renders.

One instance per flavour a server has been asked for: `--flavor` sets the first one's; a
`/f/FLAVOR/` URL picks a sibling pinned to its flavour, and a scenario's `flavor:` one for
the requests no URL pinned (URL, then scenario, then server)."""

from __future__ import annotations

import json
import re
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

from mockllm.core.encoding import canonical_json, dumps
from mockllm.core.engine import Resolved
from mockllm.core.ids import HEX, fresh
from mockllm.core.scenario import Scenario
from mockllm.errors import RequestError
from mockllm.providers.base import Adapter, Body, Parsed, Stream
from mockllm.providers.flavours import FLAVOURS, PARAMS, Flavour
from mockllm.providers.openai_chat import ChatCompletions

# Azure OpenAI's routes (docs/azure.md): the deployment in the path is the model, as
# `openai.AzureOpenAI` builds it; its GA `/openai/v1/` base takes the model from the body.
AZURE_DEPLOYMENT = re.compile(r"openai/deployments/(?P<deployment>[^/]+)/chat/completions")
AZURE_V1 = "openai/v1/chat/completions"
# The flavours that name their requests their own way (Qwen's UUID, Doubao's Ark id); the
# others send OpenAI's `req_…` (Flavour.request_id's None).
_OWN_REQUEST_IDS = {
    name: spec for name, spec in FLAVOURS.items() if type(spec).request_id is not Flavour.request_id
}


class FlavouredChat(ChatCompletions):
    routes = (*ChatCompletions.routes, AZURE_V1)
    route_pattern = AZURE_DEPLOYMENT
    route_help = ("openai/deployments/{deployment}/chat/completions", AZURE_V1)

    def __init__(self) -> None:
        self.pinned = False  # chosen by the URL: a scenario's flavor: does not override it
        self._siblings: dict[tuple[str, bool], FlavouredChat] = {}

    @property
    def spec(self) -> Flavour:
        return FLAVOURS.get(self.flavor) or FLAVOURS["openai"]

    def variant(self, flavor: str, pinned: bool = True) -> FlavouredChat:
        """This server's adapter for `flavor`; `pinned`: chosen by the URL."""
        if flavor == self.flavor and pinned == self.pinned:
            return self
        key = (flavor, pinned)
        found = self._siblings.get(key)
        if found is None:
            found = self._siblings[key] = FlavouredChat()
            found.flavor, found.pinned, found._siblings = flavor, pinned, self._siblings
        return found

    def for_route(self, route: str) -> Adapter:
        """Azure's routes answer as Azure, whatever the server's or the URL's flavour."""
        return self.variant("azure") if route.startswith("openai/") else self

    def parse_at(self, body: Any, route: str) -> Parsed:
        found = AZURE_DEPLOYMENT.fullmatch(route)
        if found is None or not isinstance(body, dict) or body.get("model") == found["deployment"]:
            return self.parse(body)
        # The deployment names the model; the body alone no longer says the request (the log
        # cannot parse it again from its bytes), so the parse is kept, not cached.
        return replace(self.parse({**body, "model": found["deployment"]}), cacheable=False)

    def for_scenario(self, scenario: Scenario) -> Adapter:
        if self.pinned or scenario.flavor is None or scenario.flavor == self.flavor:
            return self
        return self.variant(scenario.flavor, pinned=False)

    def _deepseek(self, scenario: Scenario) -> bool:
        return self.flavor == "deepseek"  # the precedence is settled by the time we render

    # --- parse -------------------------------------------------------------------------

    def _with_flavour(
        self, body: dict[str, Any], options: dict[str, Any], key: Hashable
    ) -> tuple[dict[str, Any], Hashable]:
        # The flavour is not in the key: the parse is shared by every flavour, so the server
        # keys a rendering by the answering adapter's flavor too (serving/exchange.py).
        if body.keys().isdisjoint(PARAMS):  # most requests: no flavour's own parameter
            return options, (key, "")
        params = {k: body[k] for k, kinds in PARAMS.items() if isinstance(body.get(k), kinds)}
        key = (key, canonical_json(params) if params else "")
        return ({**options, "params": params} if params else options), key

    # --- render ------------------------------------------------------------------------

    def call_id(self, scenario: Scenario, turn: int, index: int, attempt: int = 1) -> str:
        own = self.spec.call_id(scenario, turn, index, attempt)
        return own or super().call_id(scenario, turn, index, attempt)

    def completion_id(self, resolved: Resolved) -> str:
        return self.spec.completion_id(resolved) or super().completion_id(resolved)

    def render(self, resolved: Resolved, parsed: Parsed) -> Body:
        shown, notes = self._shown(resolved, parsed)
        body, own = super().render(shown, parsed)
        if _reshapes(self.spec):
            body = dumps(self.spec.body(json.loads(body), shown, parsed))
        return Body(body, own + notes)

    def render_stream(self, resolved: Resolved, parsed: Parsed) -> Stream:
        shown, notes = self._shown(resolved, parsed)
        events, own = super().render_stream(shown, parsed)
        if _reshapes(self.spec):
            events = self.spec.stream(events, shown, parsed)
        return Stream(events, own + notes)

    def _shown(self, resolved: Resolved, parsed: Parsed) -> tuple[Resolved, tuple[str, ...]]:
        """The reply as this flavour sends it, and the note of what it left out."""
        if resolved.reply.reasoning is None or self.spec.shows_reasoning(parsed):
            return resolved, ()
        note = f"{self.flavor}: the scripted reasoning was not sent (thinking is off)"
        return replace(resolved, reply=replace(resolved.reply, reasoning=None)), (note,)

    # --- errors ------------------------------------------------------------------------

    def request_id(self, *parts: object) -> str:
        """The flavour's own, else `Adapter.request_id`'s, written out: one call a request
        (was four: this, `spec`, the flavour's None, the base's)."""
        own = _OWN_REQUEST_IDS.get(self.flavor)
        if own is None:
            return fresh("req_", 32, *parts, alphabet=HEX)
        return own.request_id(*parts) or super().request_id(*parts)

    def error_body(self, error: RequestError, request_id: str) -> bytes:
        return self.spec.error_body(error, request_id)

    def fault_texts(self, status: int) -> tuple[str, str, str | None]:
        return self.spec.fault_texts(status)

    def stream_error_events(self, error: RequestError, sent: int) -> list[bytes]:
        return self.spec.stream_error_events(error, self.request_id("stream", sent))


def _reshapes(spec: Flavour) -> bool:
    """Whether the flavour changes what the Chat adapter renders (openai, deepseek: no)."""
    return type(spec).body is not Flavour.body


__all__ = ["FlavouredChat"]
