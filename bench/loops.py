"""The conversation rows (issues 27 and 28): what a whole tool loop and an MCP tool call
cost the server, measured with one client sending one message at a time, as a harness does.

- *10-turn tool loop* on the Responses API (`bench-tool-loop`), streamed: over WebSocket
  (one connection; `response.create` frames with `previous_response_id` and only the new
  `function_call_output`, as Codex sends them) and over HTTP (one POST per turn, SSE).
  The starlette floor answers both with mockllm's bytes for the loop's first turn: on its
  WebSocket route the same text frames per `response.create`, on its POST route the SSE
  body one frame per send (the stream rows' framing).
- *MCP tools/call* (`bench-mcp`, the `mcp` SDK's streamable HTTP client, one session) against
  a *model request* on the same scenario's Chat Completions route (httpx, keep-alive). The
  floor has no MCP: its column is the model request, so `x starlette` of the MCP row is the
  MCP call against the floor's model request.

Server CPU is the server's threads' run time over the run / loops (or calls), in
nanoseconds (bench/proc.py `cpu_since`): in the 10 ms ticks of `utime + stime` a 60-loop
run of ~140 ms moved a figure by 7 % a tick. wrk cannot speak
either, so this is the harness's own client, pinned to the load core like wrk.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, asynccontextmanager, contextmanager
from functools import partial

import anyio.from_thread
import httpx
from anyio.from_thread import BlockingPortal
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from websockets.sync.client import connect

from . import proc
from .floor_common import save_frames, save_reply
from .run import Samples, Settings, progress, started
from .servers import MOCKLLM, STARLETTE_FLOOR, Running, ServerDef, wait_answered

TURNS = 10
LOOP = "bench-tool-loop"
MCP = "bench-mcp"
TOOLS = [{"type": "function", "name": "search", "parameters": {"type": "object"}}]
FIRST = [{"role": "user", "content": "find cheap flights"}]
KIND = {"x-bench-kind": "loop_http"}  # the floor's reply for the HTTP loop's turns
ASK = {
    "model": "gpt-4o",
    "messages": [{"role": "user", "content": "Where is order A1?"}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "lookup_order",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            },
        }
    ],
}
SERVERS = (MOCKLLM, STARLETTE_FLOOR)


def _url(running: Running, path: str, scheme: str = "http") -> str:
    return f"{scheme}://127.0.0.1:{running.port}{path}"


def _result(call_id: str) -> list[dict[str, str]]:
    return [{"type": "function_call_output", "call_id": call_id, "output": "no flights"}]


def ws_loop(running: Running, session: str, frames: list[str] | None = None) -> None:
    """One 10-turn loop over one WebSocket; `frames` collects the first turn's frames."""
    with connect(_url(running, f"/s/{LOOP}/{session}/v1/responses", "ws")) as ws:
        body: dict[str, object] = {"model": "gpt-5.5", "input": FIRST, "tools": TOOLS}
        for turn in range(TURNS):
            ws.send(json.dumps({"type": "response.create", **body}))
            while True:
                frame = str(ws.recv())
                if frames is not None and turn == 0:
                    frames.append(frame)
                event = json.loads(frame)
                if event["type"] == "response.completed":
                    break
                if event["type"] in ("error", "response.failed"):
                    raise RuntimeError(f"bench: {running.server.name} over WebSocket: {frame}")
            done = event["response"]
            body = {**body, "input": _result(done["output"][0]["call_id"]),
                    "previous_response_id": done["id"]}  # fmt: skip


def http_loop(client: httpx.Client, running: Running, session: str) -> httpx.Response:
    """One 10-turn loop, one streamed POST per turn; the first turn's response."""
    url = _url(running, f"/s/{LOOP}/{session}/v1/responses")
    body: dict[str, object] = {"model": "gpt-5.5", "input": FIRST, "tools": TOOLS, "stream": True}
    first = None
    for _ in range(TURNS):
        r = client.post(url, json=body, headers=KIND)
        if r.status_code != 200:
            raise RuntimeError(f"bench: {running.server.name} over HTTP: {r.status_code} {r.text}")
        first = first or r
        last = [line for line in r.text.splitlines() if line.startswith("data: ")][-1]
        done = json.loads(last[6:])["response"]
        body = {**body, "input": _result(done["output"][0]["call_id"]),
                "previous_response_id": done["id"]}  # fmt: skip
    assert first is not None
    return first


def record_replies(settings: Settings) -> None:
    """mockllm's first-turn answers, which the floor sends on every turn."""
    with started(MOCKLLM, settings, settings.workdir / "bodies") as running:
        wait_answered(running)
        frames: list[str] = []
        ws_loop(running, "reference-ws", frames)
        with httpx.Client() as client:
            first = http_loop(client, running, "reference-http")
    bodies = settings.workdir / "bodies"
    save_frames(bodies, frames)
    save_reply(bodies, "loop_http", dict(first.headers), first.content)


def _in_turn(
    running: Running, kinds: Mapping[str, Callable[[int], object]], n: int, block: int = 1
) -> dict[str, tuple[float, float]]:
    """Each kind of work `n` times, the kinds taken in turn `block` at a time, with the
    server's CPU and the wall time read around each block: (CPU s, wall s) per kind. Run one
    after the other, a drift of this machine's speed over the run weighed on one kind only:
    a round's WebSocket / HTTP ratio ranged 0.95 to 1.13 and MCP / model 1.2 to 1.8 over five
    rounds of one tree; taken in turn, it weighs on both alike. Each reading waits for the
    server to settle, so what it does after a block's last byte is that block's."""
    spent = {kind: [0.0, 0.0] for kind in kinds}
    before = proc.settled_reading(running.pid)
    for start in range(0, n, block):
        for kind, work in kinds.items():
            started_at = time.perf_counter()
            for i in range(start, min(start + block, n)):
                work(i)
            spent[kind][1] += time.perf_counter() - started_at
            after = proc.settled_reading(running.pid)
            spent[kind][0] += proc.cpu_between(before, after)
            before = after
    return {kind: (cpu, wall) for kind, (cpu, wall) in spent.items()}


def _warmed(
    running: Running, kinds: Mapping[str, Callable[[int], object]]
) -> dict[str, Callable[[int], object]]:
    """The kinds this server answers, each run once first (the first pays for imports and
    caches); a baseline tree may lack a route: '-' in its column."""
    answered = {}
    for kind, work in kinds.items():
        try:
            work(-1)
        except Exception as error:
            if running.server.role != "baseline":
                raise
            progress(f"{running.server.name}: {kind} skipped: {error!r:.200}")
            continue
        answered[kind] = work
    return answered


def _round(running: Running, settings: Settings, r: int) -> dict[str, float]:
    n, calls = settings.loops, settings.mcp_calls
    figures: dict[str, float] = {}
    with httpx.Client() as client:
        model = _url(running, f"/s/{MCP}/bench-{r}/v1/chat/completions")
        loops = {
            "ws": lambda i: ws_loop(running, f"ws-{r}-{i}"),
            "http": lambda i: http_loop(client, running, f"http-{r}-{i}"),
        }
        for kind, (cpu, wall) in _in_turn(running, _warmed(running, loops), n, 10).items():
            figures[f"{kind}_loop_cpu_us"] = cpu * 1e6 / n
            figures[f"{kind}_loop_ms"] = wall * 1e3 / n
        asked = {"model": lambda _: client.post(model, json=ASK).raise_for_status()}
        requests: dict[str, Callable[[int], object]] = _warmed(running, asked)
        for _ in range(19 if requests else 0):
            requests["model"](0)
        with _mcp_session(running, r) as call_tool:
            if call_tool is not None:
                requests["mcp"] = call_tool
            for kind, (cpu, _) in _in_turn(running, requests, calls, 50).items():
                figures[f"{kind}_call_cpu_us"] = cpu * 1e6 / calls
    return figures


@contextmanager
def _mcp_session(running: Running, r: int) -> Iterator[Callable[[int], object] | None]:
    """A `tools/call` through the `mcp` SDK's streamable HTTP client, one session, as a
    plain function (the session lives on a portal's event loop), or None where there is
    no MCP: the floor, or a baseline tree without the route ('-' in its column)."""
    if running.server.role == "floor":
        yield None
        return
    url = _url(running, f"/s/{MCP}/bench-{r}/mcp/orders")
    with anyio.from_thread.start_blocking_portal() as portal, ExitStack() as opened:
        call: Callable[[int], object] | None = None
        try:
            session = opened.enter_context(portal.wrap_async_context_manager(_opened(url)))
            call = partial(_call_tool, portal, session)
            for _ in range(20):  # warm: the SDK's session manager starts on the first request
                call(0)
        except Exception as error:
            if running.server.role != "baseline":
                raise
            progress(f"{running.server.name}: mcp skipped: {error!r:.200}")
            call = None
        yield call


def _call_tool(portal: BlockingPortal, session: ClientSession, _: int) -> object:
    result = portal.call(session.call_tool, "lookup_order", {"order_id": "A1"})
    if result.is_error:
        raise RuntimeError(f"bench: the MCP call failed: {result}")
    return result


@asynccontextmanager
async def _opened(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        yield s


def measure_loops(settings: Settings, baselines: Sequence[ServerDef] = ()) -> Samples:
    """mockllm, any `--against` baseline, and the floor, interleaved round by round."""
    record_replies(settings)
    servers = [SERVERS[0], *baselines, *SERVERS[1:]]
    samples: Samples = {s.name: {} for s in servers}
    for r in range(settings.rounds):
        for server in servers:
            progress(f"conversations round {r + 1}/{settings.rounds}: {server.name}")
            with started(server, settings, settings.workdir / "bodies") as running:
                wait_answered(running)
                figures = _round(running, settings, r)
            for key, value in figures.items():
                samples[server.name].setdefault(key, []).append(value)
    return samples
