"""A model route's path is worked out once (serving/app.py `_posts`): the second POST to a
path answers as the first, by the same scenario, session and adapter; a GET to a
remembered path is routed as before (not by the POST's answer); a path of another kind
(admin, unknown) is never remembered, a bad one is refused each time; and the memory is bounded."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from mockllm.loading.loader import load_text
from mockllm.serving import app as app_module
from mockllm.serving.server import build_app

SCENARIO = "name: hello\nturns:\n  - reply: {text: hi}\n    repeat: true\n"
BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode()


def run(app: Any, path: str, method: str = "POST") -> tuple[int, bytes]:
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(),
             "query_string": b"", "headers": [(b"content-type", b"application/json")],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8000)}  # fmt: skip
    sent: list[bytes] = []
    start: dict[str, Any] = {}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": BODY, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        else:
            sent.append(message.get("body", b""))

    with contextlib.suppress(StopIteration):  # it never suspends: done in one step
        app(scope, receive, send).send(None)
    return start["status"], b"".join(sent)


def test_a_second_post_answers_as_the_first_and_a_get_is_routed_anew() -> None:
    app = build_app([load_text(SCENARIO)])
    path = "/s/hello/one/v1/chat/completions"
    first, second = run(app, path), run(app, path)
    assert first[0] == second[0] == 200
    assert json.loads(second[1])["choices"][0]["message"]["content"] == "hi"
    assert path in app._posts
    sessions = {e.session for e in app.journal.entries()}
    assert sessions == {"one"}  # the remembered route kept the path's session
    status, _ = run(app, path, "GET")
    assert status in (404, 405)  # not answered as a POST
    assert run(app, "/s/nope/one/v1/chat/completions")[0] == 404  # unknown scenario: refused


def test_only_model_routes_are_remembered_and_boundedly(monkeypatch: Any) -> None:
    app = build_app([load_text(SCENARIO)])
    run(app, "/v1/nothing/here")
    run(app, "/_mockllm/health", "GET")
    assert app._posts == {}
    bad = "/s/hello/a\x01b/v1/chat/completions"
    assert run(app, bad)[0] == 400 and run(app, bad)[0] == 400  # refused, remembered or not
    app._posts.clear()
    monkeypatch.setattr(app_module, "_POSTS_KEPT", 2)
    for i in range(4):
        assert run(app, f"/s/hello/s{i}/v1/chat/completions")[0] == 200
    assert len(app._posts) == 2
    long = "/s/hello/" + "x" * app_module._LONGEST_POST_KEPT + "/v1/chat/completions"
    assert run(app, long)[0] == 200
    assert long not in app._posts
