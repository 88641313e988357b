"""What both floors share: the reference replies, the command line, uvicorn settings.

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


@dataclass(frozen=True)
class Options:
    port: int
    tool_call: Reply
    stream: Reply


def parse_options(description: str) -> Options:
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
    args = p.parse_args()
    per_event = args.stream_sends == "event"
    return Options(
        args.port,
        load_reply(args.bodies, "tool-call", per_event=False),
        load_reply(args.bodies, "stream", per_event),
    )


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
