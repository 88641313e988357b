from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import httpcore2  # noqa: F401 (see below)
import httpx
import openai
import pytest

from .redis_server import RedisServer, redis_server
from .support import ServerProcess, running_server, session_id

# httpx2 maps httpcore2's errors to its own through a table it fills on the first error,
# importing httpcore2 then. Imported here, before any in-process `pytester` run, httpcore2
# outlives the module snapshots those runs restore: otherwise a run that imported it
# first leaves the table holding classes of a module the next run imports afresh, and a
# cut stream's error escapes unmapped (a flaky docs test under -n).
# Servers started by the tests cache validated scenarios here, never in the user's home.
os.environ.setdefault("MOCKLLM_CACHE_DIR", tempfile.mkdtemp(prefix="mockllm-test-cache-"))


@pytest.fixture(scope="session")
def server() -> Iterator[ServerProcess]:
    """One real `mockllm serve` per test process (per xdist worker)."""
    with running_server("--max-body", "1MB") as s:
        yield s


@pytest.fixture(scope="session")
def warn_server() -> Iterator[ServerProcess]:
    """A second server whose provider rules only log (--validation warn)."""
    with running_server("--validation", "warn") as s:
        yield s


@pytest.fixture
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server of the test's own, on a free port; stopped afterwards."""
    with redis_server(tmp_path_factory.mktemp("redis")) as r:
        yield r


@pytest.fixture
def session(request: pytest.FixtureRequest) -> str:
    """A session name unique to the test, so tests never see each other's requests."""
    return session_id(request.node.nodeid)


@pytest.fixture
def chat(server: ServerProcess, session: str) -> Iterator[ChatFactory]:
    factory = ChatFactory(server, session)
    yield factory
    factory.close()


class ChatFactory:
    """`chat("weather-single")` → an official OpenAI client bound to that scenario and session."""

    def __init__(self, server: ServerProcess, session: str) -> None:
        self.server, self.session = server, session
        self._clients: list[openai.OpenAI] = []

    def __call__(self, scenario: str, **kwargs: object) -> openai.OpenAI:
        options = {"api_key": "test", "max_retries": 0, **kwargs}
        client = openai.OpenAI(base_url=self.server.openai_url(scenario, self.session), **options)
        self._clients.append(client)
        return client

    def raw(self, scenario: str, body: dict[str, object]) -> httpx.Response:
        url = self.server.openai_url(scenario, self.session) + "/chat/completions"
        return httpx.post(url, json=body)

    def close(self) -> None:
        for c in self._clients:
            c.close()
