"""The bench's server CPU in nanoseconds (bench/proc.py `cpu_since`), not in the 10 ms ticks
of utime + stime that moved a 60-loop WebSocket figure by 7 % a tick; and the ticks where a
thread's time could be lost with it. No timing asserted: both clocks read one process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from bench import proc

# Spins about 0.1 s of CPU in bursts of a few ms (never a whole number of ticks) once told
# to go; with "busy thread" or "idle thread", a second thread, started before the parent's
# first reading, spins 60 ms or not at all and ends before its second.
CHILD = """
import sys, threading, time
def spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
go = threading.Event()
work = 0.06 if sys.argv[1] == "busy thread" else 0.0
helper = threading.Thread(target=lambda: (go.wait(), spin(work)))
if sys.argv[1] != "plain":
    helper.start()
print("ready", flush=True)
sys.stdin.readline()
go.set()
for _ in range(25):
    spin(0.0037)
    time.sleep(0.001)
if sys.argv[1] != "plain":
    helper.join()
print("done", flush=True)
sys.stdin.readline()
"""


@contextmanager
def _child(kind: str) -> Iterator[tuple[int, Callable[[], str]]]:
    """The child, started and ready; `step()` lets it go on and returns its next line."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    stdin, stdout = child.stdin, child.stdout

    def step() -> str:
        stdin.write("go\n")
        stdin.flush()
        return stdout.readline()

    try:
        assert stdout.readline() == "ready\n"
        yield child.pid, step
    finally:
        child.kill()
        child.wait()
        stdin.close()
        stdout.close()


def test_cpu_is_read_in_nanoseconds_and_agrees_with_the_ticks() -> None:
    with _child("plain") as (pid, step):
        before, ticks = proc.cpu_reading(pid), proc.cpu_seconds(pid)
        assert step() == "done\n"
        fine = proc.cpu_since(pid, before)
        coarse = proc.cpu_seconds(pid) - ticks
    if not before.thread_ns:  # a kernel without schedstat: the ticks are the figure
        assert fine == coarse
        return
    assert abs(fine - coarse) <= 0.03, (fine, coarse)  # a tick or two apart, each way
    assert abs(fine * 100 - round(fine * 100)) > 1e-6, fine  # not a whole number of ticks


def _across_an_ended_thread(kind: str) -> tuple[proc.CpuReading, proc.CpuReading]:
    """Readings before and after the child's run, its second thread ended in between."""
    with _child(kind) as (pid, step):
        before = proc.cpu_reading(pid)
        assert len(before.thread_ns) == 2
        assert step() == "done\n"
        after = proc.cpu_reading(pid)
    assert not before.thread_ns.keys() <= after.thread_ns.keys()  # the thread ended
    return before, after


def test_a_working_thread_gone_meanwhile_is_counted_by_the_ticks() -> None:
    before, after = _across_an_ended_thread("busy thread")
    spent = proc.cpu_between(before, after)
    assert spent == after.seconds - before.seconds  # its 60 ms went with it, not the ticks'
    assert spent >= 0.125, spent  # ~0.09 of the main thread and 0.06 of the ended one


def test_an_idle_thread_gone_meanwhile_leaves_the_nanoseconds() -> None:
    spent = proc.cpu_between(*_across_an_ended_thread("idle thread"))
    assert abs(spent * 100 - round(spent * 100)) > 1e-6, spent  # not the ticks
    assert 0.08 <= spent <= 0.2, spent


TAIL = """
import sys, time
print("ready", flush=True)
sys.stdin.readline()
print("answered", flush=True)  # what a client waits for; the work goes on after it
end = time.thread_time() + 0.03
while time.thread_time() < end:
    pass
sys.stdin.readline()
"""


def test_a_settled_reading_charges_the_work_done_after_the_answer() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", TAIL], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        assert child.stdout.readline() == "ready\n"
        before = proc.settled_reading(child.pid)
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "answered\n"
        spent = proc.cpu_between(before, proc.settled_reading(child.pid))
    finally:
        child.kill()
        child.wait()
        child.stdin.close()
        child.stdout.close()
    assert spent >= 0.025, spent  # the 30 ms spun after the answer, not left to the next
