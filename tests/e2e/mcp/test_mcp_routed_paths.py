"""An MCP server's path is worked out once (serving/app.py `_mcps`), in process through the
ASGI app: every later request to it, of any method, is served by the same scenario, session
and server; what the path does not name (the `X-Mockllm-Session` and `X-Mockllm-Scenario`
headers) is still read per request; a path of another kind is never remembered, and the
memory is bounded."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mockllm.loading.loader import load_text
from mockllm.serving import app as app_module
from mockllm.serving.server import build_app
from tests.e2e.mcp.test_mcp_direct_app import SCENARIO, Http, call

ASK = json.dumps(call(1, "lookup_order", {"order_id": "A1"})).encode()


def entries(app: Any) -> list[tuple[str | None, str | None, str | None, int | None]]:
    """What the log says of each MCP request: scenario, session, method, status."""
    return [
        (e.scenario, e.session, e.mcp.get("method"), e.status)
        for e in app.journal.entries()
        if getattr(e, "mcp", None) is not None
    ]


def test_a_remembered_path_serves_every_method_as_its_first_request() -> None:
    async def go() -> Any:
        app = build_app([load_text(SCENARIO)])
        http = Http(app)
        path = "/s/direct/one/mcp/orders"
        session = await http.open(path)
        assert app._mcps[path] == ("direct", "one", "orders")
        first = await http.post(path, ASK, session)
        again = await http.post(path, ASK, session)
        gone = await http.post(path, b"", session, "DELETE")  # routed by the memory too
        after = await http.post(path, ASK, session)
        return app, first, again, gone, after

    app, first, again, gone, after = asyncio.run(go())
    assert first[0] == again[0] == 200
    assert json.loads(again[2])["result"]["content"][0]["text"] == "Order A1: shipped"
    assert gone[0] == 200 and after[0] == 404  # the SDK ended the session, then knew it not
    logged = entries(app)
    assert {(scenario, session) for scenario, session, _, _ in logged} == {("direct", "one")}
    assert [status for *_, status in logged] == [200, 202, 200, 200, 200, 404]


def test_what_the_path_does_not_name_is_read_from_each_request() -> None:
    async def go() -> Any:
        app = build_app([load_text(SCENARIO)])
        http = Http(app)
        path = "/mcp/orders"  # neither scenario nor session in the path: both from headers
        for name in ("a", "b"):
            named = [(b"x-mockllm-scenario", b"direct"), (b"x-mockllm-session", name.encode())]
            session = await http.open(path, extra=named)
            assert (await http.post(path, ASK, session))[0] == 200
        unnamed = await http.post(path, ASK, [(b"content-type", b"application/json")])
        return app, unnamed

    app, unnamed = asyncio.run(go())
    assert app._mcps["/mcp/orders"] == (None, None, "orders")
    sessions = [(scenario, session) for scenario, session, method, _ in entries(app) if method]
    assert sessions[:3] == [("direct", "a")] * 3  # a memory that kept the first request's
    assert sessions[3:6] == [("direct", "b")] * 3  # headers would have said "a" here
    assert unnamed[0] < 500
    assert list(app.journal.entries())[-1].session == "default"  # none named, none remembered


def test_only_mcp_paths_are_remembered_and_boundedly(monkeypatch: pytest.MonkeyPatch) -> None:
    async def go() -> Any:
        app = build_app([load_text(SCENARIO)])
        http = Http(app)
        json_only = [(b"content-type", b"application/json"), (b"accept", b"application/json")]
        await http.post("/_mockllm/health", b"", [], "GET")
        await http.post("/s/direct/v1/chat/completions", b"{}", json_only)
        assert app._mcps == {}
        monkeypatch.setattr(app_module, "_POSTS_KEPT", 2)
        statuses = [(await http.post(f"/s/direct/s{i}/mcp/orders", ASK, json_only))[0]
                    for i in range(4)]  # fmt: skip
        long = "/s/direct/" + "x" * app_module._LONGEST_POST_KEPT + "/mcp/orders"
        statuses.append((await http.post(long, ASK, json_only))[0])
        return app, statuses, long

    app, statuses, long = asyncio.run(go())
    assert statuses == [400] * 5  # no session id: the SDK's refusal, each one routed
    assert len(app._mcps) == 2 and long not in app._mcps
