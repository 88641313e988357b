"""AWS's binary event-stream framing (`application/vnd.amazon.eventstream`), as Bedrock's
streamed answers carry it: each message is

    total length (u32) | headers length (u32) | prelude CRC32 (u32)
    | headers | payload | message CRC32 (u32, over everything before it)

with big-endian integers, and each header `name length (u8) | name | type (u8) | value`.
Only string headers (type 7: u16 length, UTF-8) are written: every header Bedrock sends
(`:event-type`, `:content-type`, `:message-type`, `:exception-type`) is one. botocore has
the parser (botocore/eventstream.py) but no encoder; the CRC is the standard library's.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib

CONTENT_TYPE = b"application/vnd.amazon.eventstream"
_STRING = 7
_PRELUDE = struct.Struct(">II")
_CRC = struct.Struct(">I")
# botocore refuses larger messages (_MAX_PAYLOAD_LENGTH): so does the encoder.
MAX_PAYLOAD = 24 * 1024 * 1024


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return (
        bytes((len(raw_name),))
        + raw_name
        + bytes((_STRING,))
        + struct.pack(">H", len(raw_value))
        + raw_value
    )


def message(headers: tuple[tuple[str, str], ...], payload: bytes) -> bytes:
    """One event-stream message with these string headers, in this order."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"event-stream payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    head = b"".join(_header(name, value) for name, value in headers)
    prelude = _PRELUDE.pack(16 + len(head) + len(payload), len(head))
    start = prelude + _CRC.pack(zlib.crc32(prelude)) + head + payload
    return start + _CRC.pack(zlib.crc32(start))


def event(kind: str, payload: bytes) -> bytes:
    """A `:message-type: event` message, its payload JSON (`kind`: messageStart, chunk, ...)."""
    return message(
        (
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ),
        payload,
    )


def exception(kind: str, payload: bytes) -> bytes:
    """A `:message-type: exception` message: the stream's in-band error (`kind`:
    throttlingException, modelStreamErrorException, ...), its payload `{"message": ...}`."""
    return message(
        (
            (":exception-type", kind),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ),
        payload,
    )


def readable(data: bytes) -> str:
    """The messages in `data` as text for the log and the viewer, one line each:
    `:event-type` (or `:exception-type`), then the payload; a partial last message (a cut)
    is said as such. Lenient: this reads what mockllm itself wrote, perhaps cut short."""
    lines, at = [], 0
    while at + 12 <= len(data):
        total, head = _PRELUDE.unpack_from(data, at)
        if total < 16 or at + total > len(data):
            break
        headers = _headers(data[at + 12 : at + 12 + head])
        payload = data[at + 12 + head : at + total - 4].decode("utf-8", "replace")
        kind = headers.get(":event-type") or headers.get(":exception-type") or "?"
        if kind == "chunk":  # InvokeModel's: the provider's own event, base64 in `bytes`
            payload = _unwrapped(payload)
        lines.append(f"{kind}: {payload}")
        at += total
    if at < len(data):
        lines.append(f"[{len(data) - at} bytes of a partial message: the stream was cut]")
    return "\n".join(lines)


def _headers(raw: bytes) -> dict[str, str]:
    out, at = {}, 0
    while at < len(raw):
        size = raw[at]
        name = raw[at + 1 : at + 1 + size].decode("utf-8", "replace")
        at += 1 + size
        if raw[at : at + 1] != bytes((_STRING,)):
            break  # only string headers are written here
        (length,) = struct.unpack_from(">H", raw, at + 1)
        out[name] = raw[at + 3 : at + 3 + length].decode("utf-8", "replace")
        at += 3 + length
    return out


def _unwrapped(payload: str) -> str:
    try:
        return base64.b64decode(json.loads(payload)["bytes"]).decode("utf-8", "replace")
    except (ValueError, KeyError, TypeError):
        return payload


class Frames:
    """Event-stream messages split from bytes as they arrive, in any chunking (what
    `recording/sse.py`'s `SseFrames` is for SSE): each complete message as its
    `:event-type` (or `:exception-type`) and its payload's text. A message that does not
    add up (a length out of range) ends the reading: what follows is the partial rest."""

    def __init__(self) -> None:
        self._buffer = b""
        self._broken = False

    def feed(self, chunk: bytes) -> list[tuple[str | None, str]]:
        self._buffer += chunk
        out: list[tuple[str | None, str]] = []
        while not self._broken and len(self._buffer) >= 12:
            total, head = _PRELUDE.unpack_from(self._buffer)
            if total < 16 or head > total - 16 or total > MAX_PAYLOAD + 1024 * 1024:
                self._broken = True
                break
            if len(self._buffer) < total:
                break
            headers = _headers(self._buffer[12 : 12 + head])
            payload = self._buffer[12 + head : total - 4].decode("utf-8", "replace")
            self._buffer = self._buffer[total:]
            out.append((headers.get(":event-type") or headers.get(":exception-type"), payload))
        return out

    @property
    def partial(self) -> bool:
        """Whether the bytes so far end inside a message (a stream cut mid-message)."""
        return bool(self._buffer)
