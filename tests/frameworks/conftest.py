"""The agent frameworks group: each framework driven as its users would, against the
shared `mockllm serve` of this worker, with nothing reaching the internet.

The switches below must be set before any framework is imported, which is why they sit
at the top of this conftest (pytest imports it before the group's test modules).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from . import network_guard

# LiteLLM fetches its model cost map from GitHub at import unless told to use its copy.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
# The OpenAI Agents SDK exports traces to OpenAI from a background thread by default.
os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
# huggingface_hub (smolagents) reports usage unless told not to.
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
# LangChain traces to LangSmith when either of these is true in the environment.
os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"

network_guard.install()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The matrix cells (marked `matrix`) run under `make frameworks`, which sets
    MOCKLLM_MATRIX=1 and makes their virtualenvs; `make test` leaves them out, whatever
    `-m` its ARGS give (they spend minutes importing frameworks, not testing mockllm)."""
    if os.environ.get("MOCKLLM_MATRIX") == "1":
        return
    left = [item for item in items if item.get_closest_marker("matrix")]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = [item for item in items if not item.get_closest_marker("matrix")]


@pytest.fixture(autouse=True)
def no_network() -> Iterator[None]:
    """Fail the test that tried to reach the internet, even if the framework swallowed it."""
    before = len(network_guard.attempts)
    yield
    tried = network_guard.attempts[before:]
    assert not tried, f"a framework tried to reach the network: {tried}"
