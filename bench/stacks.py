"""py-spy's raw output read and summed: where a running server spends its CPU.

`py-spy record --native -f raw` writes one line per distinct stack, outermost frame
first, frames separated by `;`, then the number of samples that caught it:

    main (mockllm/cli.py:33);…;flush (mockllm/serving/coalesce.py:43);write (libc.so.6) 7

A Python frame names its file relative to the `sys.path` entry it came from (or
`<string>` for generated code such as a dataclass's `__init__`); a native frame names
a C source file (`loop.c:35410`, `object.h:537`) or a shared library (`libc.so.6`).
py-spy leaves out samples where the process was idle, so every sample is the server
busy (running, or ready to run and waiting for its core on a loaded machine).
"""

from __future__ import annotations

import linecache
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

NO_PYTHON = "(no Python frame)"


@dataclass(frozen=True)
class Frame:
    function: str
    file: str  # "mockllm/core/engine.py", "<string>", "loop.c", "libc.so.6", or ""
    line: int | None  # None for a shared library's frame

    @classmethod
    def parse(cls, text: str) -> Frame:
        function, paren, where = text.rpartition(" (")
        if not paren or not where.endswith(")"):
            return cls(text, "", None)
        file, colon, line = where[:-1].rpartition(":")
        if colon and line.isdigit():
            return cls(function, file, int(line))
        return cls(function, where[:-1], None)

    @property
    def python(self) -> bool:
        """A Python frame: a .py file, generated code (`<string>`), or a script with no
        suffix (the `mockllm` console script); anything else is C code (`[vdso]` too)."""
        name = self.file.rsplit("/", 1)[-1]
        script = bool(name) and "." not in name and not name.startswith("[")
        return name.endswith(".py") or name.startswith("<") or script

    @property
    def sourced(self) -> bool:
        """A Python frame with a source file a reader can open."""
        return self.python and not self.file.startswith("<")

    @property
    def label(self) -> str:
        """Function and file, without the line: what a self-time table groups by."""
        function = "?" if self.function.startswith("0x") else self.function  # no symbol
        return f"{function} ({self.file})" if self.file else function

    @property
    def module(self) -> str:
        """mockllm's modules one by one (`mockllm.log.journal`), anything else by its
        top-level package (`uvicorn`, `asyncio`, `json`)."""
        if self.file.startswith("/"):  # outside sys.path: py-spy keeps the absolute path
            return self.file.rsplit("/", 1)[-1].removesuffix(".py")
        parts = self.file.removesuffix(".py").split("/")
        return ".".join(parts) if parts[0] == "mockllm" and len(parts) > 1 else parts[0]


@dataclass(frozen=True)
class Stack:
    frames: tuple[Frame, ...]  # outermost first
    samples: int

    @property
    def leaf(self) -> Frame:
        return self.frames[-1]

    @property
    def caller(self) -> Frame | None:
        """The innermost Python frame with a source file: the line that was running, or
        that called the C code (or the generated `__init__`) that was."""
        return next((f for f in reversed(self.frames) if f.sourced), None)


def read(text: str) -> list[Stack]:
    stacks = []
    for line in text.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if stack and count.isdigit():
            frames = tuple(Frame.parse(f) for f in stack.split(";"))
            stacks.append(Stack(frames, int(count)))
    return stacks


@dataclass(frozen=True)
class Share:
    """Samples charged to one key (a frame, a line, a module)."""

    key: str
    samples: int
    native: int = 0  # of them, in C code (the leaf was native)
    under: str = ""  # for a native leaf: the Python frame it ran under most often
    under_samples: int = 0
    frame: Frame | None = None  # for a line: the frame, whose source a reader can show


def by_leaf(stacks: list[Stack]) -> list[Share]:
    """Self time: the frame on the CPU, C functions included (libc's `write` under
    uvicorn's send is the cost of the system call)."""
    counts: Counter[str] = Counter()
    callers: dict[str, Counter[str]] = {}
    for s in stacks:
        counts[s.leaf.label] += s.samples
        if not s.leaf.python:
            caller = s.caller.label if s.caller else NO_PYTHON
            callers.setdefault(s.leaf.label, Counter())[caller] += s.samples
    shares = []
    for key, n in counts.most_common():
        under = callers.get(key)
        if under:
            (label, m), *_ = under.most_common(1)
            shares.append(Share(key, n, n, label, m))
        else:
            shares.append(Share(key, n))
    return shares


def by_line(stacks: list[Stack]) -> list[Share]:
    """The innermost Python source line, with the C code it called charged to it."""
    return _charged(stacks, lambda f: f"{f.file}:{f.line}  {f.function}")


def by_module(stacks: list[Stack]) -> list[Share]:
    return _charged(stacks, lambda f: f.module)


def by_package(stacks: list[Stack]) -> list[Share]:
    """mockllm as a whole against the libraries it runs on."""
    return _charged(stacks, lambda f: f.module.split(".")[0])


def _charged(stacks: list[Stack], key: Callable[[Frame], str]) -> list[Share]:
    counts: Counter[str] = Counter()
    native: Counter[str] = Counter()
    frames: dict[str, Frame] = {}
    for s in stacks:
        caller = s.caller
        k = key(caller) if caller else NO_PYTHON
        counts[k] += s.samples
        if caller:
            frames.setdefault(k, caller)
        if not s.leaf.python:
            native[k] += s.samples
    return [Share(k, n, native[k], frame=frames.get(k)) for k, n in counts.most_common()]


def source(frame: Frame, roots: list[Path]) -> str:
    """The text of a Python frame's line, looked up where py-spy found its file (an entry
    of `sys.path`, or one of `roots`), or '' when it is not there."""
    for root in [*roots, *(Path(p or ".") for p in sys.path)]:
        path = root / frame.file
        if frame.line and path.is_file():
            return linecache.getline(str(path), frame.line).strip()
    return ""
