"""The stdio transport of `mockllm mcp`: one JSON-RPC message per line, and every line
answered (docs/mcp.md).

The SDK's own stdio transport passes a line it cannot parse to the server as an
exception, which answers nothing: the client waits for its id until it times out. Here
each line is parsed as the SDK's HTTP transport parses a body (`pydantic_core.from_json`,
then the JSON-RPC models), so a line that is not JSON gets the same `-32700` answer, a
number past the parser's limit the same `number out of range`, a message that is no
JSON-RPC the same `-32602`. A request whose id is already in flight is refused with
`-32600` rather than overwriting the first in the SDK's table (whose answer would never
come). Each refused line is logged as any message is (`log.refused`).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import IO, Any

import anyio
import mcp_types as types
import pydantic_core
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

Refused = Callable[[bytes, types.JSONRPCError], Awaitable[None]]


class Lines:
    """Which lines reach the server, and the answer to each line that does not."""

    def __init__(self) -> None:
        self.in_flight: set[Any] = set()  # ids of requests not yet answered, as the SDK keys them

    def admit(self, line: bytes) -> SessionMessage | types.JSONRPCError:
        try:
            raw = pydantic_core.from_json(line)
        except ValueError as e:
            return refusal(None, types.PARSE_ERROR, f"Parse error: {e}")
        try:
            message = types.jsonrpc_message_adapter.validate_python(raw, by_name=False)
        except ValidationError as e:
            return refusal(None, types.INVALID_PARAMS, f"Validation error: {e}")
        if isinstance(message, types.JSONRPCRequest):
            key = coerce_request_id(message.id)
            if key in self.in_flight:
                return refusal(
                    message.id,
                    types.INVALID_REQUEST,
                    f"Invalid Request: id {message.id!r} is already in flight (a request id "
                    "must not be reused before its answer came); this request was not served",
                )
            self.in_flight.add(key)
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"  # the SDK will not answer it
            and isinstance(cancelled := (message.params or {}).get("requestId"), int | str)
        ):
            self.in_flight.discard(coerce_request_id(cancelled))
        return SessionMessage(message)

    def sent(self, message: SessionMessage) -> None:
        answer = message.message
        if isinstance(answer, types.JSONRPCResponse | types.JSONRPCError) and answer.id is not None:
            self.in_flight.discard(coerce_request_id(answer.id))


def refusal(request_id: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


def too_long(limit: int) -> types.JSONRPCError:
    return refusal(
        None,
        types.INVALID_REQUEST,
        f"Invalid Request: a line of more than {limit} bytes (--max-body) was not read",
    )


async def serve_lines(
    run: Callable[[Any, Any], Awaitable[None]],
    refused: Refused,
    max_line: int,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> None:
    """Serve `run(read_stream, write_stream)` (the SDK `Server.run`) over stdin/stdout."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout.buffer
    lines = Lines()
    to_server, from_lines = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_client, outgoing = anyio.create_memory_object_stream[SessionMessage](16)

    async def read() -> None:
        async with to_server, to_client.clone() as answers:
            while (line := await _next_line(source, max_line)) is not None:
                if line is _TOO_LONG:
                    admitted: SessionMessage | types.JSONRPCError = too_long(max_line)
                elif not line.strip():
                    continue  # a blank line holds no message
                else:
                    admitted = lines.admit(line)
                if isinstance(admitted, SessionMessage):
                    await to_server.send(admitted)
                else:
                    await refused(b"" if line is _TOO_LONG else line.rstrip(b"\r\n"), admitted)
                    await answers.send(SessionMessage(admitted))

    async def write() -> None:
        async with outgoing:
            async for message in outgoing:
                lines.sent(message)
                text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await anyio.to_thread.run_sync(_write, sink, text.encode() + b"\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        tg.start_soon(write)
        await run(from_lines, to_client)


_TOO_LONG = b"\x00too long"


async def _next_line(source: IO[bytes], limit: int) -> bytes | None:
    """The next line (None at the end of input), or `_TOO_LONG`, the rest of it skipped."""
    line = await anyio.to_thread.run_sync(source.readline, limit + 1, abandon_on_cancel=True)
    if not line:
        return None
    if len(line) <= limit or line.endswith(b"\n"):
        return bytes(line)
    while line and not line.endswith(b"\n"):
        line = await anyio.to_thread.run_sync(source.readline, limit, abandon_on_cancel=True)
    return _TOO_LONG


def _write(sink: IO[bytes], data: bytes) -> None:
    sink.write(data)
    sink.flush()
