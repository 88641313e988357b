"""Fill the release check's wheelhouse: `python -m tests.support.wheelhouse DIR` (the Makefile does).

tests/release/test_release.py installs the built wheel and sdist into fresh virtualenvs with
`pip install --no-index --find-links DIR`, so at test time nothing is fetched. DIR holds
the wheels those installs need (mockllm-server's own dependencies, the SDKs and pytest
the checks drive, and setuptools to build the sdist) at the versions this environment
has, so the installed copy runs on what the rest of the suite tested.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

# What the release check installs beside mockllm-server (tests/release/test_release.py): the
# official SDKs of the four wires, pytest for the README's quick start, and the build
# backend an sdist install builds with.
CLIENTS = ("openai", "anthropic", "google-genai", "pytest")
BUILD = ("setuptools",)


def runtime_requirements() -> list[str]:
    """mockllm-server's own dependencies, without those of its extras."""
    requires = metadata.requires("mockllm-server") or []
    return [r for r in requires if "extra ==" not in r]


def pins(names: tuple[str, ...]) -> list[str]:
    """`name==version` as this environment has it (the test extra pins these)."""
    return [f"{name}=={metadata.version(name)}" for name in names]


def constraints() -> str:
    """Every distribution of this environment at its version: what pip may pick (the
    first found of a name, as import finds it, should a stale copy lie further on)."""
    versions: dict[str, str] = {}
    for dist in metadata.distributions():
        name = re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower()
        if name and name != "mockllm-server":
            versions.setdefault(name, dist.version)
    return "".join(f"{name}=={version}\n" for name, version in sorted(versions.items()))


def download(folder: Path, requirements: list[str]) -> None:
    """The wheels of `requirements` into `folder`, at this environment's versions."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        pinned = Path(tmp) / "constraints.txt"
        pinned.write_text(constraints())
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:"]
        command += ["--dest", str(folder), "--constraint", str(pinned), *requirements]
        subprocess.run(command, check=True)


def fill(wheelhouse: Path) -> None:
    download(wheelhouse, [*runtime_requirements(), *pins(CLIENTS), *pins(BUILD)])
    (wheelhouse / ".downloaded").touch()


if __name__ == "__main__":
    fill(Path(sys.argv[1]))
