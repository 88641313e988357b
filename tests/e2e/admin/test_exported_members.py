"""The public names (as httpx's tests/e2e/admin/test_exported_members.py): everything in `mockllm.__all__`
resolves, lazy attributes included, and nothing mockllm defines at the top is left out."""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module

import pytest

import mockllm


def test_every_exported_name_resolves() -> None:
    for name in mockllm.__all__:
        assert getattr(mockllm, name) is not None, name


def test_all_is_sorted_and_without_duplicates() -> None:
    assert mockllm.__all__ == sorted(set(mockllm.__all__))


def test_lazy_names_are_their_modules_own_objects() -> None:
    for name, module in mockllm._LAZY.items():
        assert name in mockllm.__all__
        assert getattr(mockllm, name) is getattr(import_module(f"mockllm.{module}"), name)


def test_dir_and_all_agree() -> None:
    """What mockllm itself defines and `dir()` shows at the top is exactly `__all__`."""
    names = dir(mockllm)
    assert set(mockllm.__all__) <= set(names)
    defined_here = {
        name
        for name in names
        if not name.startswith("_")
        and getattr(getattr(mockllm, name), "__module__", "").startswith("mockllm.")
    }
    assert defined_here == set(mockllm.__all__) - {"__version__"}


def test_an_unknown_name_is_an_attribute_error_that_says_so() -> None:
    with pytest.raises(AttributeError, match=r"^module 'mockllm' has no attribute 'Clinet'$"):
        mockllm.Clinet  # noqa: B018
    with pytest.raises(ImportError, match=r"cannot import name 'Clinet' from 'mockllm'"):
        from mockllm import Clinet  # noqa: F401


def test_the_version_is_the_package_s() -> None:
    from importlib.metadata import version

    assert mockllm.__version__ == version("mockllm-server")


def test_import_mockllm_loads_no_server_or_http_client() -> None:
    """The lazy names exist so that `import mockllm` (and `mockllm validate`) stay light: a
    fresh interpreter shows what importing pulls in."""
    code = (
        "import sys, mockllm; "
        "print(sorted(m for m in ('uvicorn', 'starlette', 'urllib.request') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout) == (0, "[]\n"), result.stderr
