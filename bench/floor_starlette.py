"""The floor: a bare starlette app that answers the benchmark's request with fixed bytes.

It does what any starlette endpoint must: route, read the request body, send a
Response (non-stream) or a StreamingResponse over an async generator (stream). It
does not parse the JSON: producing the reply is exactly the work mockllm adds.

With `--parse` it is the *parse floor*: the same app, plus `json.loads` of the body
(the standard library's, nothing more) — what any server that reads the request must
do, so mockllm's distance from it is the work beyond the unavoidable parse.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from .floor_common import Options, Reply, arguments, load_frames, options_from, serve


def build(options: Options, parse: bool = False) -> Starlette:
    async def answer(request: Request) -> Response:
        body = await request.body()
        if parse:
            json.loads(body)
        scenario = request.path_params["path"].split("/")[1]
        reply = options.reply(request.headers.get("x-bench-kind"), scenario)
        if reply is None:
            return Response(status_code=404)
        if len(reply.chunks) > 1:
            return _streaming(reply)
        return Response(reply.chunks[0], headers=dict(reply.headers))

    # The conversation rows (bench/loops.py): each `response.create` text frame answered
    # with the frames mockllm sent for the loop's first turn, one text frame each.
    frames = load_frames(options.bodies)

    async def websocket(ws: WebSocket) -> None:
        await ws.accept()
        try:
            while True:
                await ws.receive_text()
                for frame in frames:
                    await ws.send_text(frame)
        except WebSocketDisconnect:
            return

    return Starlette(
        routes=[
            Route("/{path:path}", answer, methods=["POST"]),
            WebSocketRoute("/{path:path}", websocket),
        ]
    )


def _streaming(reply: Reply) -> StreamingResponse:
    async def frames() -> AsyncIterator[bytes]:
        for chunk in reply.chunks:
            yield chunk

    return StreamingResponse(frames(), headers=dict(reply.headers))


def main() -> None:
    parser = arguments("bench floor: bare starlette, fixed replies")
    parser.add_argument(
        "--parse", action="store_true", help="json.loads the request body first (the parse floor)"
    )
    args = parser.parse_args()
    serve(build(options_from(args), parse=args.parse), args.port)


if __name__ == "__main__":
    main()
