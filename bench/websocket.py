"""A 10-turn tool loop on the Responses API over WebSocket vs over HTTP (streamed, with
previous_response_id and only the new items each turn, as Codex sends them), against one
`mockllm serve`. Prints the median wall time per loop and per turn of each transport.

    python -m bench.websocket [--loops 30]

Separate from `make bench`'s table (bench/README.md): the table's rows are wrk loads of
one request each; this is a conversation, so it is timed as one, from one client.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import httpx
from websockets.sync.client import connect

from tests.support import running_server

TURNS = 10
TOOLS = [{"type": "function", "name": "search", "parameters": {"type": "object"}}]
FIRST = [{"role": "user", "content": "find cheap flights"}]


def _result(call_id: str) -> list[dict[str, str]]:
    return [{"type": "function_call_output", "call_id": call_id, "output": "no flights"}]


def over_websocket(url: str, session: str) -> float:
    started = time.perf_counter()
    with connect(f"{url.replace('http', 'ws', 1)}/s/tool-loop/{session}/v1/responses") as ws:
        body: dict[str, object] = {"model": "gpt-5.5", "input": FIRST, "tools": TOOLS}
        for _ in range(TURNS):
            ws.send(json.dumps({"type": "response.create", **body}))
            while True:
                event = json.loads(ws.recv())
                if event["type"] == "response.completed":
                    break
            done = event["response"]
            call_id = done["output"][0]["call_id"]
            body = {**body, "input": _result(call_id), "previous_response_id": done["id"]}
    return time.perf_counter() - started


def over_http(client: httpx.Client, url: str, session: str) -> float:
    started = time.perf_counter()
    body: dict[str, object] = {"model": "gpt-5.5", "input": FIRST, "tools": TOOLS, "stream": True}
    for _ in range(TURNS):
        r = client.post(f"{url}/s/tool-loop/{session}/v1/responses", json=body)
        last = [line for line in r.text.splitlines() if line.startswith("data: ")][-1]
        done = json.loads(last[6:])["response"]
        call_id = done["output"][0]["call_id"]
        body = {**body, "input": _result(call_id), "previous_response_id": done["id"]}
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=30)
    args = parser.parse_args()
    with running_server("--quiet") as server, httpx.Client() as client:
        over_websocket(server.url, "warm-ws")  # the first loop of each pays for imports
        over_http(client, server.url, "warm-http")
        ws = [over_websocket(server.url, f"ws-{i}") for i in range(args.loops)]
        http = [over_http(client, server.url, f"http-{i}") for i in range(args.loops)]
    for name, times in (("websocket", ws), ("http", http)):
        loop = statistics.median(times) * 1000
        print(f"{name:9}  {loop:7.2f} ms per {TURNS}-turn loop  {loop / TURNS:6.2f} ms per turn")


if __name__ == "__main__":
    main()
