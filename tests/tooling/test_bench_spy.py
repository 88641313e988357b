"""`python -m bench.spy` (what `make bench-spy` runs): py-spy on the running server.

The smoke test profiles a real `mockllm serve` under real load for one second and checks
that the report names mockllm's own frames and a CPU figure — never a timing. It needs
ptrace: where py-spy may not attach (a container without CAP_SYS_PTRACE), it skips and
says why. The aggregation is checked on py-spy's raw format directly.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from bench import stacks
from bench.spy import NOT_PERMITTED
from tests.support import ROOT


def test_spy_profiles_the_running_server() -> None:
    command = [sys.executable, "-m", "bench.spy", "--only", "cold_ns", "--seconds", "1"]
    command += ["--fill", "0", "--warmup", "1", "--top", "40"]  # short: this is a smoke test
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    if done.returncode == NOT_PERMITTED:
        pytest.skip(f"SKIPPED: py-spy may not attach here (ptrace refused): {done.stderr[-500:]}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    for run in ("unprofiled (the warm-up)", "while sampled"):
        assert re.search(rf"^server CPU per request, {re.escape(run)}: [\d,]+\.\d µs ", out, re.M)
    # mockllm's own frames, lines (with their text) and modules are named, and it has a
    # share of the samples (one second of them: which of its frames lead varies).
    assert re.search(r"^ +[\d.]+%  \S+ \(mockllm/\S+\.py\)$", out, re.M), out
    assert re.search(r"^ +[\d.]+% +[\d.]+%  mockllm/\S+\.py:\d+  \S+  \S", out, re.M), out
    assert re.search(r"^ +[\d.]+% +[\d.]+%  mockllm\.[a-z_.]+$", out, re.M), out
    share = re.search(r"^by package: .*\bmockllm ([\d.]+)%", out, re.M)
    assert share is not None and float(share[1]) > 0, out
    # C code (the event loop's system calls at least), under the Python frame it ran in.
    assert re.search(r"^ +[\d.]+%  \S+ \(libc\.so\.6\)  <- \S+", out, re.M), out


RAW = """\
<module> (mockllm:6);run (asyncio/runners.py:118);send (uvicorn/protocols/http/h.py:524);write (libc.so.6) 6
<module> (mockllm:6);run (asyncio/runners.py:118);epoll_pwait (libc.so.6) 2
<module> (mockllm:6);run (asyncio/runners.py:118);handle (mockllm/serving/exchange.py:99);_answer (mockllm/serving/exchange.py:131) 5
<module> (mockllm:6);run (asyncio/runners.py:118);handle (mockllm/serving/exchange.py:99);open (mockllm/log/journal.py:40);__create_fn__.<locals>.__init__ (<string>:3) 3
<module> (mockllm:6);run (asyncio/runners.py:118);handle (mockllm/serving/exchange.py:99);0x7f9860f8b8bb (libc.so.6) 4
"""


def test_stacks_charge_samples_to_leaves_lines_and_modules() -> None:
    found = stacks.read(RAW)
    assert sum(s.samples for s in found) == 20
    leaves = {s.key: s for s in stacks.by_leaf(found)}
    assert leaves["write (libc.so.6)"].samples == 6
    assert leaves["write (libc.so.6)"].under == "send (uvicorn/protocols/http/h.py)"
    assert leaves["? (libc.so.6)"].under == "handle (mockllm/serving/exchange.py)"  # no symbol
    assert leaves["_answer (mockllm/serving/exchange.py)"].native == 0
    assert leaves["__create_fn__.<locals>.__init__ (<string>)"].samples == 3

    lines = {s.key: s for s in stacks.by_line(found)}
    # Generated code and C code are charged to the Python line that called them.
    assert lines["mockllm/log/journal.py:40  open"].samples == 3
    handle = lines["mockllm/serving/exchange.py:99  handle"]
    assert (handle.samples, handle.native) == (4, 4)
    assert lines["asyncio/runners.py:118  run"].native == 2

    modules = {s.key: s.samples for s in stacks.by_module(found)}
    assert modules == {
        "mockllm.serving.exchange": 9,
        "uvicorn": 6,
        "mockllm.log.journal": 3,
        "asyncio": 2,
    }
    packages = {s.key: s.samples for s in stacks.by_package(found)}
    assert packages == {"mockllm": 12, "uvicorn": 6, "asyncio": 2}


def test_frames_tell_python_from_c() -> None:
    python = ["f (mockllm/core/engine.py:3)", "g (<string>:2)", "<module> (mockllm:6)"]
    native = ["write (libc.so.6)", "run (loop.c:35410)", "Py_DECREF (object.h:537)", "x ([vdso])"]
    assert all(stacks.Frame.parse(f).python for f in python)
    assert not any(stacks.Frame.parse(f).python for f in native)
    frame = stacks.Frame.parse("Runner.run (asyncio/runners.py:118)")
    assert (frame.function, frame.file, frame.line) == ("Runner.run", "asyncio/runners.py", 118)
