"""The floor: a bare starlette app that answers the benchmark's request with fixed bytes.

It does what any starlette endpoint must: route, read the request body, send a
Response (non-stream) or a StreamingResponse over an async generator (stream). It
does not parse the JSON: producing the reply is exactly the work mockllm adds.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from .floor_common import Options, Reply, parse_options, serve
from .workload import STREAM, mockllm_path


def build(options: Options) -> Starlette:
    async def chat(request: Request) -> Response:
        await request.body()
        if request.path_params["scenario"] == STREAM:
            return _streaming(options.stream)
        reply = options.tool_call
        return Response(b"".join(reply.chunks), headers=dict(reply.headers))

    route = mockllm_path("{scenario}")
    return Starlette(routes=[Route(route, chat, methods=["POST"])])


def _streaming(reply: Reply) -> StreamingResponse:
    async def frames() -> AsyncIterator[bytes]:
        for chunk in reply.chunks:
            yield chunk

    return StreamingResponse(frames(), headers=dict(reply.headers))


def main() -> None:
    options = parse_options("bench floor: bare starlette, fixed replies")
    serve(build(options), options.port)


if __name__ == "__main__":
    main()
