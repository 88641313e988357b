"""Count the adapter seam: `Adapter`'s members, and the ones one request touches.

    .venv/bin/python -m bench.adapter_seam

Prints the members `providers/base.py`'s `Adapter` declares (attributes and methods
apart), the ones its subclasses must write (abstract, or declared without a value), and
then drives requests on every wire through the in-process ASGI app (bench/profile.py's
`post`, no sockets), each adapter wrapped in a subclass that counts which of those
members are read. "From outside" are the reads made by code outside mockllm/providers/
(the server's side of the seam); "in all" adds the adapter's own calls to itself.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.profile import SCENARIOS, post
from bench.workload import DISTINCT, cold_workloads
from mockllm.loading.loader import load_paths
from mockllm.providers import base
from mockllm.serving.app import MockLLM
from mockllm.serving.server import build_app

PROVIDERS = str(Path(base.__file__).parent)


def members(cls: type) -> tuple[list[str], list[str]]:
    """(attributes, methods) `cls` declares, its annotations included, dunders left out."""
    names = set(cls.__dict__) | set(inspect.get_annotations(cls))
    names = {n for n in names if not n.startswith("__") and n != "_abc_impl"}
    methods = sorted(n for n in names if inspect.isfunction(cls.__dict__.get(n)))
    return sorted(names - set(methods)), methods


def required(cls: type) -> list[str]:
    """What a subclass must write: abstract methods, and attributes declared without a value."""
    attributes, _ = members(cls)
    unset = [n for n in attributes if n not in cls.__dict__]
    return sorted({*getattr(cls, "__abstractmethods__", ()), *unset})


class Reads:
    def __init__(self, watched: set[str]) -> None:
        self.watched = watched
        self.outside: set[str] = set()
        self.inside: set[str] = set()

    def clear(self) -> None:
        self.outside.clear()
        self.inside.clear()


def counting(app: MockLLM, reads: Reads) -> None:
    """Every adapter of `app` reports the watched members read on it to `reads`."""

    def __getattribute__(self: Any, name: str) -> Any:
        if name in reads.watched:
            caller = sys._getframe(1).f_code.co_filename
            (reads.inside if caller.startswith(PROVIDERS) else reads.outside).add(name)
        return object.__getattribute__(self, name)

    for adapter in app.adapters:
        cls = type(adapter)
        adapter.__class__ = type(cls.__name__, (cls,), {"__getattribute__": __getattribute__})


def requests() -> Iterator[tuple[str, str, bytes]]:
    """(label, path, body): each wire's bench request, streamed and not, each sent twice
    (the second is answered from the prepared-request and render caches)."""
    for n, cold in enumerate(w for w in cold_workloads() if w.key != "cold_st"):
        plain = json.loads(cold.body.replace(DISTINCT.encode(), str(n).encode()))
        streamed, path = {**plain, "stream": True}, cold.path
        stream_path = path
        if "generateContent" in path:  # Gemini says it in the path, not the body
            streamed, stream_path = plain, path.replace(":generate", ":streamGenerate")
        for label, where, body in (("json", path, plain), ("stream", stream_path, streamed)):
            data = json.dumps(body).encode()
            yield f"{cold.key} {label}", where, data
            yield f"{cold.key} {label} again", where, data


async def run() -> None:
    attributes, methods = members(base.Adapter)
    print(f"Adapter: {len(attributes) + len(methods)} members, {len(attributes)} attributes")
    print(f"  attributes: {' '.join(attributes)}")
    print(f"  {len(methods)} methods: {' '.join(methods)}")
    must = required(base.Adapter)
    print(f"  a wire must write {len(must)}: {' '.join(must)}")
    for name in ("SharedResponses", "RecordedResponses"):  # the optional protocols
        protocol = getattr(base, name, None)
        if protocol is not None:
            extra = [n for group in members(protocol) for n in group if not n.startswith("_")]
            print(f"  optional {name}: {len(extra)}: {' '.join(extra)}")
    app = build_app(load_paths([SCENARIOS]))
    reads = Reads(set(attributes) | set(methods))
    counting(app, reads)
    union: set[str] = set()
    widest = 0
    for label, path, body in requests():
        reads.clear()
        status, answer = await post(app, path, body)
        assert status == 200, answer[:300]
        union |= reads.outside
        widest = max(widest, len(reads.outside))
        every = reads.outside | reads.inside
        print(f"{label:28} {len(reads.outside):2} from outside, {len(every):2} in all")
    print(f"most touched by one request from outside: {widest}")
    print(f"touched by any of them from outside: {len(union)}: {' '.join(sorted(union))}")


def main() -> None:
    asyncio.run(run())


if __name__ == "__main__":
    main()
