"""Which part of a session's log is one use of it, and which uses are reruns.

A name can come back: a stable run id given by a CI system, a rerun inside one process
(pytest-rerunfailures), a script with a fixed name. Each reset of a session starts a new
`epoch` (a short id the server draws, in every entry after it), so the log's readers
(`mockllm report`, `report --html`, the viewer) judge each use of the name apart, never
pooled, and call the later ones reruns (`uses`). The run a name carries is log/runs.py's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from mockllm.log.runs import run_of, test_of

Entry = Mapping[str, Any]
E = TypeVar("E", bound=Entry)


EPOCH = re.compile(r"[0-9a-f]{8}")


def uses(entries: Iterable[E]) -> dict[str, list[E]]:
    """Entries grouped by one use of a session, in order of first appearance: a name reset
    into a new use is two, never pooled. The last use of a name is keyed by the name, an
    earlier one by `NAME#EPOCH`, so a log holding only the last use (the server's memory:
    a reset deletes the use before) keys it as the whole file does, and a session used
    once has its plain name everywhere. Entries without an epoch (older logs, a fleet's
    shared log) are grouped by name alone."""
    found = list(entries)
    last: dict[str, str] = {}
    for e in found:
        epoch = e.get("epoch")
        if isinstance(epoch, str) and EPOCH.fullmatch(epoch):
            last[str(e.get("session"))] = epoch
    grouped: dict[str, list[E]] = {}
    for e in found:
        name, epoch = str(e.get("session")), e.get("epoch")
        earlier = isinstance(epoch, str) and EPOCH.fullmatch(epoch) and last[name] != epoch
        grouped.setdefault(f"{name}#{epoch}" if earlier else name, []).append(e)
    return grouped


def name_of(key: str) -> str:
    """The session name of a key of `uses` (`NAME#EPOCH` -> NAME)."""
    name, mark, epoch = key.rpartition("#")
    return name if mark and EPOCH.fullmatch(epoch) else key


def reruns(keys: Iterable[str]) -> dict[str, tuple[int, int]]:
    """For each use of a test that ran more than once in the log (another run id, or a
    later epoch of the same name): its place and how many there were, (2, 3): the second
    of three. Uses of a test that ran once are left out."""
    by_test: dict[str, list[str]] = {}
    for key in keys:
        by_test.setdefault(test_of(name_of(key)), []).append(key)
    return {
        key: (place, len(found))
        for found in by_test.values()
        if len(found) > 1
        for place, key in enumerate(found, 1)
    }


def clash(entries: Iterable[Entry]) -> str | None:
    """What the transcript says when two clients used the session at once: one reset it
    while the other held it (the entries' `clients`), or two uses in one list."""
    found = list(entries)
    clients = next((e["clients"] for e in found if e.get("clients")), None)
    epochs = {e.get("epoch") for e in found if e.get("epoch")}
    if clients is None and len(epochs) < 2:
        return None
    who = f" ({' and '.join(map(str, clients))})" if clients else ""
    run = next((run_of(str(e.get("session"))) for e in found), None)
    fix = (
        f"both runs are named {run!r}: give each run its own run id"
        if run
        else "give each its own session name (the pytest plugin and the Node client add a run id)"
    )
    return (
        f"two clients{who} used this session at once: one reset it while the other held "
        f"it, so the requests here may be either's; {fix} (docs/ci.md)"
    )
