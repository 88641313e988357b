"""mockllm: an offline, deterministic fake LLM server for testing tool-calling harnesses."""

from .errors import MockLLMError, Problem, RequestError, ScenarioError
from .loader import load_mapping, load_paths, load_text
from .scenario import Scenario

__version__ = "0.1.0"

__all__ = [
    "MockLLMError",
    "Problem",
    "RequestError",
    "Scenario",
    "ScenarioError",
    "__version__",
    "load_mapping",
    "load_paths",
    "load_text",
]
