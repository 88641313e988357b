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

Server CPU is `utime + stime` over the run / loops (or calls), in 10 ms ticks: the counts
are sized so a run spends at least a few hundred ms of server CPU. wrk cannot speak
either, so this is the harness's own client, pinned to the load core like wrk.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence

import httpx
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


def _cpu(running: Running, work: Callable[[], object]) -> float:
    before = proc.cpu_seconds(running.pid)
    work()
    return proc.cpu_seconds(running.pid) - before


def _round(running: Running, settings: Settings, r: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    for part in (_websocket, _http, _mcp):
        try:
            figures |= part(running, settings, r)
        except Exception as error:  # a baseline tree may lack the route: '-' in its column
            if running.server.role != "baseline":
                raise
            progress(f"{running.server.name}: {part.__name__.strip('_')} skipped: {error!r:.200}")
    return figures


def _websocket(running: Running, settings: Settings, r: int) -> dict[str, float]:
    n = settings.loops
    ws_loop(running, f"warm-ws-{r}")  # the first loop of each pays for imports and caches
    started_at = time.perf_counter()
    cpu = _cpu(running, lambda: [ws_loop(running, f"ws-{r}-{i}") for i in range(n)])
    return {
        "ws_loop_ms": (time.perf_counter() - started_at) * 1e3 / n,
        "ws_loop_cpu_us": cpu * 1e6 / n,
    }


def _http(running: Running, settings: Settings, r: int) -> dict[str, float]:
    n, calls = settings.loops, settings.mcp_calls
    figures: dict[str, float] = {}
    with httpx.Client() as client:
        http_loop(client, running, f"warm-http-{r}")
        started_at = time.perf_counter()
        cpu = _cpu(running, lambda: [http_loop(client, running, f"http-{r}-{i}") for i in range(n)])
        figures["http_loop_ms"] = (time.perf_counter() - started_at) * 1e3 / n
        figures["http_loop_cpu_us"] = cpu * 1e6 / n
        url = _url(running, f"/s/{MCP}/bench-{r}/v1/chat/completions")
        for _ in range(20):
            client.post(url, json=ASK).raise_for_status()
        cpu = _cpu(running, lambda: [client.post(url, json=ASK) for _ in range(calls)])
        figures["model_call_cpu_us"] = cpu * 1e6 / calls
    return figures


def _mcp(running: Running, settings: Settings, r: int) -> dict[str, float]:
    if running.server.role == "floor":
        return {}  # the floor has no MCP
    url = _url(running, f"/s/{MCP}/bench-{r}/mcp/orders")
    return {"mcp_call_cpu_us": asyncio.run(_mcp_calls(running, url, settings.mcp_calls)) * 1e6}


async def _mcp_calls(running: Running, url: str, n: int) -> float:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        for _ in range(20):  # warm: the SDK's session manager starts on the first request
            await s.call_tool("lookup_order", {"order_id": "A1"})
        before = proc.cpu_seconds(running.pid)
        for _ in range(n):
            result = await s.call_tool("lookup_order", {"order_id": "A1"})
            if result.is_error:
                raise RuntimeError(f"bench: the MCP call failed: {result}")
        return (proc.cpu_seconds(running.pid) - before) / n


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
