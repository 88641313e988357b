"""The SDK clients the end-to-end tests share: the `chat` fixture's factory and a bare
OpenAI client. Kept out of conftest.py, which tests/unit loads too, so that the unit tier
starts without the SDK stack (tests/unit/conftest.py)."""

from __future__ import annotations

from typing import Any

import httpx
import openai

from tests.support import ServerProcess


def openai_client(
    server: ServerProcess, scenario: str, session: str, **options: Any
) -> openai.OpenAI:
    """An official OpenAI client on `/s/SCENARIO/SESSION/v1`; no retries unless asked."""
    options = {"api_key": "k", "max_retries": 0, **options}
    return openai.OpenAI(base_url=server.openai_url(scenario, session), **options)


class ChatFactory:
    """`chat("weather-single")` → an official OpenAI client bound to that scenario and session."""

    def __init__(self, server: ServerProcess, session: str) -> None:
        self.server, self.session = server, session
        self._clients: list[openai.OpenAI] = []

    def __call__(self, scenario: str, **kwargs: object) -> openai.OpenAI:
        client = openai_client(self.server, scenario, self.session, api_key="test", **kwargs)
        self._clients.append(client)
        return client

    def raw(self, scenario: str, body: dict[str, object]) -> httpx.Response:
        url = self.server.openai_url(scenario, self.session) + "/chat/completions"
        return httpx.post(url, json=body)

    def close(self) -> None:
        for c in self._clients:
            c.close()
