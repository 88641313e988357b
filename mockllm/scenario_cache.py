"""Remember scenario files that passed the schema, so a restart skips PyYAML and jsonschema.

A test suite or a CI job starts mockllm many times on the same files; reading YAML and
validating it against the JSON Schema is most of its start-up. An entry is the file's
parsed data as JSON, named by a hash of the file's exact bytes, the schema, and mockllm's
version — any change to any of them is a miss, and a miss is checked in full. Only files
that passed are stored, so errors are always reported from the file itself.

Location: $MOCKLLM_CACHE_DIR, else $XDG_CACHE_HOME/mockllm, else ~/.cache/mockllm.
MOCKLLM_NO_CACHE=1 turns it off. A cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

_VERSION = "1"  # bump when the stored form changes


def get(raw: bytes) -> Any:
    """The parsed data of a file with exactly these bytes that passed before, or None."""
    path = _entry(raw)
    if path is None:
        return None
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def put(raw: bytes, data: Any) -> None:
    path = _entry(raw)
    if path is None:
        return
    try:
        text = json.dumps(data, ensure_ascii=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, "utf-8")
        tmp.replace(path)  # atomic: a concurrent start never reads half an entry
    except (OSError, TypeError, ValueError):
        pass  # a read-only home, or data JSON cannot hold: just not cached


def _entry(raw: bytes) -> Path | None:
    folder = _folder()
    if folder is None:
        return None
    return folder / (hashlib.blake2b(_salt() + raw, digest_size=20).hexdigest() + ".json")


def _folder() -> Path | None:
    if os.environ.get("MOCKLLM_NO_CACHE"):
        return None
    explicit = os.environ.get("MOCKLLM_CACHE_DIR")
    if explicit:
        return Path(explicit) / "scenarios"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mockllm" / "scenarios"


@cache
def _salt() -> bytes:
    from . import __version__

    schema = resources.files("mockllm").joinpath("scenario.schema.json").read_bytes()
    return f"mockllm {__version__} cache {_VERSION}\n".encode() + schema + b"\n"
