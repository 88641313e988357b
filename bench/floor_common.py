"""What the floors share: the reference replies, the command line, uvicorn settings.

A floor answers the benchmark's request with the bytes mockllm gave for it, fetched
once at start-up (bench/__main__.py writes them to --bodies), so every server puts
the same body on the wire and the difference is the work done to produce it.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn

from .workload import STREAM

# Framing is uvicorn's business: it adds content-length or chunked itself.
_FRAMING = frozenset({"content-length", "transfer-encoding"})


@dataclass(frozen=True)
class Reply:
    headers: list[tuple[str, str]]  # as mockllm sent them, minus framing
    chunks: list[bytes]  # one send each: the whole body, or one SSE frame per chunk


def save_reply(folder: Path, kind: str, headers: dict[str, str], body: bytes) -> None:
    """Store one reference reply (called by the harness)."""
    kept = [(k, v) for k, v in headers.items() if k not in _FRAMING]
    (folder / f"{kind}.headers.json").write_text(json.dumps(kept))
    (folder / f"{kind}.body").write_bytes(body)


def load_reply(folder: Path, kind: str, per_event: bool) -> Reply:
    headers = [(k, v) for k, v in json.loads((folder / f"{kind}.headers.json").read_text())]
    body = (folder / f"{kind}.body").read_bytes()
    return Reply(headers, sse_frames(body) if per_event else [body])


def sse_frames(body: bytes) -> list[bytes]:
    """`data: …\\n\\n` frames, each with its blank-line terminator."""
    return [frame + b"\n\n" for frame in body.split(b"\n\n") if frame]


def save_frames(folder: Path, frames: list[str]) -> None:
    """The WebSocket frames of one answer, for the floor's WebSocket route (bench/loops.py)."""
    (folder / "loop_ws.frames.json").write_text(json.dumps(frames))


def load_frames(folder: Path) -> list[str]:
    path = folder / "loop_ws.frames.json"
    return list(json.loads(path.read_text())) if path.exists() else []


@dataclass(frozen=True)
class Options:
    port: int
    bodies: Path
    replies: dict[str, Reply]  # kind → reply: "tool-call", "stream", and each cold row's

    def reply(self, kind: str | None, scenario: str) -> Reply | None:
        """The reply a request asks for: by its `x-bench-kind` header (cold rows), else by
        the scenario in its path (the warm rows)."""
        if kind is not None:
            return self.replies.get(kind)
        return self.replies["stream" if scenario == STREAM else "tool-call"]


def parse_options(description: str) -> Options:
    return options_from(arguments(description).parse_args())


def arguments(description: str) -> argparse.ArgumentParser:
    """The command line every floor takes (a floor may add its own flags)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--bodies", type=Path, required=True, help="folder written by the harness")
    p.add_argument(
        "--stream-sends",
        choices=("event", "one"),
        default="event",
        help="send the stream one SSE frame per ASGI send (default, like a real SSE server) "
        "or as one send (like mockllm)",
    )
    return p


def options_from(args: argparse.Namespace) -> Options:
    per_event = args.stream_sends == "event"
    kinds = sorted(p.name.removesuffix(".body") for p in args.bodies.glob("*.body"))
    replies = {kind: load_reply(args.bodies, kind, per_event and _streamed(kind)) for kind in kinds}
    return Options(args.port, args.bodies, replies)


def _streamed(kind: str) -> bool:
    return kind in ("stream", "cold_st", "loop_http")


def serve(app: Any, port: int) -> None:
    """uvicorn exactly as mockllm runs it: httptools, uvloop, no access log, no extra headers."""
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        http="httptools",
        loop="uvloop",
        lifespan="off",
        access_log=False,
        log_level="warning",
        server_header=False,
        date_header=False,
    )
