"""The admin routes answer the developer's tools, not a web page: Host, Origin and
Content-Type are checked (docs/security.md); the project's own client passes."""

from __future__ import annotations

import httpx

import mockllm
from tests.support import ServerProcess, running_server

JSON = {"content-type": "application/json"}


def test_state_changes_need_a_json_or_yaml_content_type(server: ServerProcess) -> None:
    simple = {"content-type": "text/plain"}  # what a page may send without a pre-flight
    for method, path in [("POST", "/_mockllm/reset"), ("DELETE", "/_mockllm/requests")]:
        for headers in (simple, {}):
            r = httpx.request(method, f"{server.url}{path}", headers=headers)
            assert r.status_code == 415, (method, headers)
            assert "send application/json" in r.json()["error"]["message"]
    r = httpx.post(
        f"{server.url}/_mockllm/scenarios",
        content="name: sneaky\nturns: [{reply: {text: hi}}]\n",
        headers=simple,
    )
    assert r.status_code == 415
    names = [s["name"] for s in server.http.get("/_mockllm/scenarios").json()]
    assert "sneaky" not in names
    ok = httpx.post(f"{server.url}/_mockllm/reset", params={"session": "none"}, headers=JSON)
    assert ok.status_code == 200


def test_a_foreign_host_or_origin_is_refused(server: ServerProcess) -> None:
    port = server.url.rsplit(":", 1)[1]
    log = f"{server.url}/_mockllm/requests"
    assert httpx.get(log, headers={"host": f"evil.example:{port}"}).status_code == 403
    r = httpx.get(log, headers={"origin": "https://evil.example"})
    assert r.status_code == 403 and "cross-origin" in r.json()["error"]["message"]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost"):
        assert httpx.get(log, headers={"host": host}).status_code == 200
    assert httpx.get(log, headers={"origin": f"http://localhost:{port}"}).status_code == 200


def test_allow_host_admits_a_service_name() -> None:
    with running_server("--allow-host", "mockllm.internal", scenarios=()) as server:
        r = httpx.get(f"{server.url}/_mockllm/health", headers={"host": "mockllm.internal:80"})
        assert r.status_code == 200
        r = httpx.get(f"{server.url}/_mockllm/health", headers={"host": "other.internal"})
        assert (
            r.status_code == 403 and "--allow-host other.internal" in r.json()["error"]["message"]
        )


def test_the_client_passes_the_guard(server: ServerProcess) -> None:
    client = mockllm.Client(server.url)
    assert client.add_scenario("name: guarded\nturns: [{reply: {text: hi}}]\n") == "guarded"
    assert client.reset("nobody") == 0 and client.clear("nobody") == 0
