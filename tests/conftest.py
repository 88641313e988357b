"""Fixtures for every tier. tests/unit loads this file too and must start without the SDK
stack (openai, anthropic, google-genai, httpcore2: tests/release/test_unit_tier.py), so what the
end-to-end fixtures need is imported inside them, and the SDK helpers are in
tests/support/clients.py."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support import hypothesis_profiles

if TYPE_CHECKING:
    from mockllm import Session
    from tests.support import ServerProcess
    from tests.support.clients import ChatFactory
    from tests.support.redis_server import RedisServer

# Servers started by the tests cache validated scenarios here, never in the user's home.
os.environ.setdefault("MOCKLLM_CACHE_DIR", tempfile.mkdtemp(prefix="mockllm-test-cache-"))
hypothesis_profiles.load()

TESTS = Path(__file__).parent
UNIT = TESTS / "unit"

# The tiers, one folder each, marked here and nowhere else (docs/design.md, "Tests"): `-m`
# picks or leaves out a tier, e.g. `pytest -m "not redis and not browser and not node and
# not agents"` for a machine without redis-server, Chromium, Node or the agent CLIs.
TIERS = {
    "unit": "unit",
    "e2e": "e2e",
    "fleet": "redis",
    "browser": "browser",
    "node": "node",
    "release": "release",
    "tooling": "tooling",
    "frameworks": "frameworks",
    "agent_clis": "agents",
    "image": "image",
}
# A test elsewhere that needs one of these parts says so by the fixture it asks for.
NEEDS = {"redis": "redis"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.relative_to(TESTS).parts if item.path.is_relative_to(TESTS) else ()
        if parts and parts[0] in TIERS:
            item.add_marker(TIERS[parts[0]])
        for fixture, marker in NEEDS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)


def pytest_collection_finish(session: pytest.Session) -> None:
    # httpx2 maps httpcore2's errors to its own through a table it fills on the first error,
    # importing httpcore2 then. Imported here, after collection and before any test (so
    # before any in-process `pytester` run), httpcore2 outlives the module snapshots those
    # runs restore: otherwise a run that imported it first leaves the table holding classes
    # of a module the next run imports afresh, and a cut stream's error escapes unmapped (a
    # flaky docs test under -n). A run of tests/unit alone has no such run and skips it.
    if any(not item.path.is_relative_to(UNIT) for item in session.items):
        import httpcore2  # noqa: F401


@pytest.fixture(autouse=True)
def _no_event_loop_left_open() -> Iterator[None]:
    """A library whose sync call runs on `asyncio.get_event_loop()` leaves that loop set on
    the thread and open; collected later, its ResourceWarning fails whichever test the
    collector meets it in (seen once in a full run). The loop is closed after the test that
    left it, so a warning lands on no innocent test."""
    yield
    import asyncio

    loop = getattr(asyncio.get_event_loop_policy(), "_local", None)
    loop = getattr(loop, "_loop", None)
    if loop is not None and not loop.is_running() and not loop.is_closed():
        asyncio.set_event_loop(None)
        loop.close()


@pytest.fixture(scope="session")
def server() -> Iterator[ServerProcess]:
    """One real `mockllm serve` per test process (per xdist worker)."""
    from tests.support import running_server

    with running_server("--max-body", "1MB") as s:
        yield s


@pytest.fixture(scope="session")
def warn_server() -> Iterator[ServerProcess]:
    """A second server whose provider rules only log (--validation warn)."""
    from tests.support import running_server

    with running_server("--validation", "warn") as s:
        yield s


@pytest.fixture
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server of the test's own, on a free port; stopped afterwards."""
    from tests.support.redis_server import redis_server

    with redis_server(tmp_path_factory.mktemp("redis")) as r:
        yield r


@pytest.fixture
def session(request: pytest.FixtureRequest) -> str:
    """A session name unique to the test, so tests never see each other's requests."""
    from tests.support import session_id

    return session_id(request.node.nodeid)


@pytest.fixture
def mock(server: ServerProcess, session: str) -> Session:
    """The test's own session on the shared server, as a user of mockllm.testing holds it."""
    from mockllm import Client

    return Client(server.url).session(session)


@pytest.fixture
def chat(server: ServerProcess, session: str) -> Iterator[ChatFactory]:
    from tests.support.clients import ChatFactory

    factory = ChatFactory(server, session)
    yield factory
    factory.close()
