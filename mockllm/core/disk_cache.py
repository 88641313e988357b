"""Remember, across runs, what was expensive to establish and depends only on bytes.

A test suite or a CI job starts mockllm many times on the same files and sends it the same
tools; reading YAML, validating it against the JSON Schema, and checking tool schemas
against the meta-schema would each import jsonschema (or PyYAML) at start or on the first
request. An entry is JSON, named by a hash of the exact bytes it is about, the scenario
schema, and mockllm's version — any change to any of them is a miss, and a miss is done
in full. Namespaces: `scenarios` (the parsed data of a file that passed the schema: files
that fail are never stored, so errors always come from the file itself), `schemas`
(whether a tool's JSON Schema is valid, and why not) and `options` (the flags' help, read
from options.py's field docs). core/compiled.py keeps its one file of code here too.

Location: $MOCKLLM_CACHE_DIR, else $XDG_CACHE_HOME/mockllm, else ~/.cache/mockllm.
MOCKLLM_NO_CACHE=1 turns it off. A cache that cannot be read or written is ignored. Bounded
per namespace by MOCKLLM_CACHE_MAX_ENTRIES (default 1000) and MOCKLLM_CACHE_MAX_BYTES
(default 16 MB): past either, the oldest written go first.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

_VERSION = "1"  # bump when the stored form changes


def get(namespace: str, raw: bytes) -> Any:
    """What was stored for exactly these bytes, or None."""
    path = _entry(namespace, raw)
    if path is None:
        return None
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def put(namespace: str, raw: bytes, value: Any) -> None:
    path = _entry(namespace, raw)
    if path is None:
        return
    try:
        text = json.dumps(value, ensure_ascii=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, "utf-8")
        tmp.replace(path)  # atomic: a concurrent start never reads half an entry
        _trim(path.parent)
    except (OSError, TypeError, ValueError):
        pass  # a read-only home, or a value JSON cannot hold: just not cached


MAX_ENTRIES = 1000
"""Entries kept per namespace: every distinct tool schema a client sends is one, so the
oldest go (by modification time) rather than the folder growing for ever."""
MAX_BYTES = 16 << 20
"""Bytes kept per namespace: a few big schemas must not fill a disk either."""


def _limit(name: str, default: int) -> int:
    text = os.environ.get(name, "")
    return int(text) if text.isdigit() else default


def _trim(folder: Path) -> None:
    """Only a miss writes, and a miss has just run jsonschema: listing the folder is cheap
    beside it."""
    most, room = (
        _limit("MOCKLLM_CACHE_MAX_ENTRIES", MAX_ENTRIES),
        _limit("MOCKLLM_CACHE_MAX_BYTES", MAX_BYTES),
    )
    entries = []
    for path in folder.glob("*.json"):
        try:
            entries.append((path.stat(), path))
        except OSError:
            continue  # trimmed by another process meanwhile
    total = sum(stat.st_size for stat, _ in entries)
    if len(entries) <= most and total <= room:
        return
    entries.sort(key=lambda e: e[0].st_mtime)  # oldest first
    for stat, old in entries:
        if len(entries) <= most and total <= room:
            break
        old.unlink(missing_ok=True)
        total -= stat.st_size
        entries = entries[1:]


def _entry(namespace: str, raw: bytes) -> Path | None:
    base = folder()
    if base is None:
        return None
    named = _salted().copy()  # the same as digest(_salt() + raw, 20): the salt hashed once
    named.update(raw)
    return base / namespace / f"{named.hexdigest()}.json"


def folder() -> Path | None:
    """Where the caches live (None when turned off); core/compiled.py keeps its file here too."""
    if os.environ.get("MOCKLLM_NO_CACHE"):
        return None
    explicit = os.environ.get("MOCKLLM_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mockllm"


@cache
def _salted() -> Any:
    """BLAKE2b (encoding.digest's) fed the salt: it holds the 38 KB scenario schema, and a
    start looks up about 50 entries."""
    return hashlib.blake2b(_salt(), digest_size=20)


@cache
def _salt() -> bytes:
    from mockllm._version import __version__

    # beside the module, as loading/loader.py finds it (importlib.resources, and the
    # tempfile, shutil and zipfile it imports, cost a start more than they offer here)
    schema = (Path(__file__).parent.parent / "loading" / "scenario.schema.json").read_bytes()
    return f"mockllm {__version__} cache {_VERSION}\n".encode() + schema + b"\n"
