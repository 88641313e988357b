"""A client for a running mockllm server's admin routes — standard library only.

Installing mockllm is all a CI job needs to read the log of a server started
elsewhere, so this speaks HTTP with urllib rather than pulling in an HTTP library.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote, urlencode

from mockllm.core.scenario import FLAVORS, Flavor
from mockllm.errors import ClientError, did_you_mean
from mockllm.loading.loader import load_mapping, load_paths, load_text, parse_yaml
from mockllm.log.records import LogEntry, ScenarioInfo, Verdict
from mockllm.testing.session import APIS, WITH_V1, Api, ScenarioSource, Session

# A test server is local: an HTTP(S)_PROXY set for the CI job must not capture its traffic.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Client:
    """`Client("http://127.0.0.1:8000")`: the request log, scenarios and resets of one server."""

    def __init__(self, base_url: str, timeout: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._names: set[str] = set()  # scenarios known to be on the server
        # Named in resets, so the server can tell when two clients use one session at once.
        self.id = "c" + os.urandom(4).hex()
        self.epochs: dict[str, str] = {}  # session -> the use this client's reset began

    def __repr__(self) -> str:
        return f"Client({self.base_url!r})"

    def url(
        self,
        scenario: str,
        session: str | None = None,
        api: Api = "openai",
        flavor: Flavor | None = None,
    ) -> str:
        """The base URL to give an SDK: OpenAI's and AnthropicVertex's carry `/v1`;
        Anthropic's, Gemini's (on Vertex AI too), Bedrock's (boto3's endpoint_url) and
        Azure's (AzureOpenAI's azure_endpoint) do not.
        `flavor` ("qwen", "kimi", …) starts it with `/f/FLAVOR`, so Chat Completions answers
        as that provider (docs/flavours.md); Mistral's has no `/v1`, which its SDK adds.
        Raises ClientError when the server has no scenario of that name."""
        __tracebackhide__ = True
        if api not in APIS:
            raise ValueError(f"api must be one of {', '.join(map(repr, APIS))}, not {api!r}")
        if flavor is not None and flavor not in FLAVORS:
            known = ", ".join(FLAVORS)
            raise ValueError(f"no flavour {flavor!r}{did_you_mean(flavor, FLAVORS)} ({known})")
        if flavor is not None and api != "openai":
            raise ValueError("a flavour is a Chat Completions one: it takes api='openai'")
        self._check_scenario(scenario)
        path = f"/s/{quote(scenario, safe='')}" + (f"/{quote(session, safe='')}" if session else "")
        prefix = f"/f/{flavor}" if flavor is not None else ""
        return self.base_url + prefix + path + _version(api, flavor)

    def _check_scenario(self, name: str) -> None:
        """A mistyped name fails here, where it was written, not as a 404 deep in an SDK."""
        __tracebackhide__ = True
        if name in self._names:
            return
        try:
            self._names = {s.name for s in self.scenarios()}
        except ClientError as e:
            if e.status is None:  # no server to ask: the SDK's own request will say so
                return
            raise
        if name not in self._names:
            raise ClientError(
                f"no scenario named {name!r} on {self.base_url}{did_you_mean(name, self._names)}"
                " (add one with add_scenario(), or @pytest.mark.mockllm in pytest)",
                404,
            )

    def session(self, name: str) -> Session:
        """One session of this server: its URLs, its log and the assertions over them."""
        return Session(self, name)

    def health(self) -> dict[str, Any]:
        """`{"status": "ok", "scenarios": N}` once the server answers."""
        result: dict[str, Any] = self._call("GET", "/_mockllm/health")
        return result

    def scenarios(self) -> list[ScenarioInfo]:
        """Every scenario the server serves, by name."""
        return [ScenarioInfo.from_json(s) for s in self._call("GET", "/_mockllm/scenarios")]

    def add_scenario(self, source: ScenarioSource) -> str:
        """Add (or replace) one scenario; returns its name. It is checked here first, so a
        mistake raises ScenarioError located in your file, not in the server's copy."""
        names = self.add_scenarios(source)
        if len(names) != 1:
            raise ValueError(f"{source} holds {len(names)} scenarios; use add_scenarios()")
        return names[0]

    def add_scenarios(self, *sources: ScenarioSource) -> list[str]:
        """Add every scenario in these sources (folders are searched recursively)."""
        documents = [doc for source in sources for doc in _documents(source)]
        for doc in documents:  # all were checked before the first is sent
            self._call("POST", "/_mockllm/scenarios", body=doc.body, content_type=doc.type)
            self._names.add(doc.name)
        return [doc.name for doc in documents]

    def requests(
        self, session: str | None = None, scenario: str | None = None, since: int = 0
    ) -> list[LogEntry]:
        """The request log in arrival order: of one session and/or scenario, and only the
        entries after sequence number `since` (for polling)."""
        query = {"session": session, "scenario": scenario, "since": since or None}
        return [LogEntry.from_json(e) for e in self._call("GET", "/_mockllm/requests", query)]

    def verdict(self, session: str, max_calls: int | None = None) -> Verdict:
        """The protocol verdict of one session; `max_calls`: model calls beyond which a
        tool loop is assumed (the server's default when None)."""
        query = {"session": session, "max_calls": max_calls}
        return Verdict.from_json(self._call("GET", "/_mockllm/verdict", query))

    def allow(self, session: str, allow: Mapping[str, str], origin: str | None = None) -> None:
        """Waive verdict checks for one session, each with its reason (docs/verdict.md);
        the log records them with `origin`, where they came from."""
        body = json.dumps(dict(allow)).encode()
        query = {"session": session, "origin": origin or "Client.allow()"}
        self._call("PUT", "/_mockllm/allow", query, body=body)

    def clear(self, session: str | None = None) -> int:
        """Forget the log (of one session); returns how many entries went."""
        return int(self._call("DELETE", "/_mockllm/requests", {"session": session})["deleted"])

    def reset(self, session: str | None = None) -> int:
        """A fresh start (for one session): attempt counters and log; returns entries deleted.
        The session is this client's until `release`: another client resetting it meanwhile
        is said in the log (docs/http-api.md)."""
        query = {"session": session, "client": self.id if session is not None else None}
        answer = self._call("POST", "/_mockllm/reset", query)
        if session is not None and answer.get("epoch"):
            self.epochs[session] = str(answer["epoch"])
        return int(answer["deleted"])

    def release(self, session: str) -> None:
        """This client is done with `session`: another may reset it now without a clash."""
        self._call("POST", "/_mockllm/release", {"session": session, "client": self.id})

    def _call(
        self,
        method: str,
        path: str,
        query: Mapping[str, Any] | None = None,
        body: bytes | None = None,
        content_type: str = "application/json",
    ) -> Any:
        params = urlencode({k: v for k, v in (query or {}).items() if v is not None})
        url = self.base_url + path + (f"?{params}" if params else "")
        request = urllib.request.Request(url, data=body, method=method)
        if method != "GET":  # the server refuses state changes without a JSON or YAML type
            request.add_header("Content-Type", content_type)
        try:
            with _OPENER.open(request, timeout=self.timeout) as response:
                answer = response.read()
        except urllib.error.HTTPError as e:
            raise ClientError(f"{method} {url}: {e.code} {_message(e)}", e.code) from e
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ClientError(f"{method} {url}: cannot reach mockllm: {reason}") from e
        try:
            return json.loads(answer)
        except ValueError as e:  # something else answers on that port
            start = answer[:80].decode("utf-8", "replace")
            raise ClientError(f"{method} {url}: not a mockllm answer: {start!r}") from e


class _Document(NamedTuple):
    name: str
    body: bytes
    type: str


def _documents(source: ScenarioSource) -> list[_Document]:
    """One body to POST per scenario in `source`, each checked as the server will check it."""
    if isinstance(source, Mapping):
        return [_json(load_mapping(source).name, source)]
    if isinstance(source, str) and "\n" in source:
        name = load_text(source, "<add_scenario>").name
        return [_Document(name, source.encode(), "application/yaml")]
    found = []
    for scenario in load_paths([source]):
        data = parse_yaml(Path(scenario.source).read_text("utf-8"), scenario.source)
        # A file's name defaults to its stem, which the server cannot know: say it.
        found.append(_json(scenario.name, {**data, "name": scenario.name}))
    return found


def _json(name: str, data: Mapping[str, Any]) -> _Document:
    return _Document(name, json.dumps(data, ensure_ascii=False).encode(), "application/json")


def _message(error: urllib.error.HTTPError) -> str:
    body = error.read().decode("utf-8", "replace")
    try:
        return str(json.loads(body)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return body or str(error.reason)


def _version(api: Api, flavor: Flavor | None) -> str:
    """`/v1` for the SDKs of WITH_V1; not for Mistral's, which adds it itself (and whose
    other clients, the OpenAI SDK and ChatMistralAI, are served at `…/chat/completions` too)."""
    return "/v1" if api in WITH_V1 and flavor != "mistral" else ""
