"""Dataclasses' generated methods compiled once, not at every start.

Making a dataclass compiles the source text of its `__init__`, `__repr__`, `__eq__`, ...
with `exec` (one text per method before Python 3.13, one per class since): mockllm makes
about 80 at import, some 340 texts, and parsing and compiling them was a quarter of the
instructions of `mockllm serve` to its first answer. Within `remembered()`, the
dataclasses module's `exec` is given the code compiled from the same text at an earlier
start, kept in one file beside the other caches (core/disk_cache.py's folder), named by
the interpreter's bytecode magic; a text not seen before is compiled as `exec` would.
Compiling a text always gives the same code, so the classes made are the same.

The file holds code that runs, as `__pycache__` does: it is read only when this user owns
it and nobody else may write it.
"""

from __future__ import annotations

import dataclasses
import marshal
import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

from mockllm.core.disk_cache import folder

_VERSION = "1"  # bump when what is stored for a text changes

MAX_ENTRIES = 2048
"""Texts kept in the file: the whole package makes about 400; past this, only those the
last start used (so texts of an older mockllm do not pile up)."""

_known: dict[str, CodeType] | None = None  # the file's texts, read at the first use
_new: dict[str, CodeType] = {}  # texts compiled by this process, not yet in the file
_depth = 0  # remembered() may nest (the package's imports within a command's)


@contextmanager
def remembered() -> Iterator[None]:
    """While inside, dataclasses take their methods' code from the file; on leaving the
    outermost, what was compiled anew is added to it."""
    global _depth, _known
    if _known is None:
        _known = _read()
    _depth += 1
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # shadows the builtin
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            del dataclasses.exec  # type: ignore[attr-defined]
            if _new:
                _write({**_known, **_new} if len(_known) + len(_new) <= MAX_ENTRIES else _new)
                _known.update(_new)
                _new.clear()


def _exec(source: Any, globals: Any = None, locals: Any = None) -> None:
    if type(source) is str:
        assert _known is not None
        code = _known.get(source) or _new.get(source)
        if code is None:
            # dont_inherit: this module's `from __future__ import annotations` must not
            # turn the generated methods' annotations into strings
            code = _new[source] = compile(source, "<string>", "exec", dont_inherit=True)
        source = code
    exec(source, globals, locals)


def _path() -> Path | None:
    base = folder()
    return None if base is None else base / "code" / f"{MAGIC_NUMBER.hex()}-{_VERSION}.marshal"


def _read() -> dict[str, CodeType]:
    path = _path()
    try:
        if path is None or not _trusted(os.stat(path)):
            return {}
        found = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}  # none yet, unreadable, or written by a build marshal cannot read
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, CodeType)}


def _trusted(stat: os.stat_result) -> bool:
    """Owned by this user and writable by nobody else (where the system has owners)."""
    getuid = getattr(os, "getuid", None)
    return getuid is None or (stat.st_uid == getuid() and not stat.st_mode & 0o022)


def _write(codes: dict[str, CodeType]) -> None:
    path = _path()
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(marshal.dumps(codes))
        tmp.replace(path)  # atomic: a concurrent start never reads half a file
    except (OSError, ValueError):
        pass  # a read-only home: compiled again next time
