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


def build(options: Options) -> Starlette:
    async def answer(request: Request) -> Response:
        await request.body()
        scenario = request.path_params["path"].split("/")[1]
        reply = options.reply(request.headers.get("x-bench-kind"), scenario)
        if reply is None:
            return Response(status_code=404)
        if len(reply.chunks) > 1:
            return _streaming(reply)
        return Response(reply.chunks[0], headers=dict(reply.headers))

    return Starlette(routes=[Route("/{path:path}", answer, methods=["POST"])])


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
