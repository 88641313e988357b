"""The package list, found rather than written out (metadata and the rest: pyproject.toml).

`[tool.setuptools.packages.find]` alone cannot list mockllm.bundled: that package is the
top-level scenarios/ folder, mapped by `package-dir`, and find only sees folders under
mockllm/. So the found packages and that one are given here; a new subpackage under
mockllm/ is found with no edit (tests/release/test_release.py fails the build that leaves one out).
"""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["mockllm", "mockllm.*"]), "mockllm.bundled"])
