"""The viewer's page outside a browser: the live route is a read-only GET with a strict
content policy, and the static report embeds any logged string safely and
deterministically (the browser tests, test_viewer_browser.py, check what a person sees)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mockllm.viewer import page as viewer_page
from mockllm.viewer.page import SCRIPTS, csp, embed, live_page, report_page
from tests.support import ServerProcess
from tests.support.clients import ChatFactory
from tests.support.hypothesis_profiles import examples
from tests.support.viewer_data import embedded

# Strings that end or confuse a <script> element or a JavaScript string if left raw.
HOSTILE = [
    "</script><script>window.pwned = 1</script>",
    "</textarea><img src=x onerror=alert(1)>",
    "<!-- <script>",
    "line\u2028separator\u2029paragraph",
    "& &amp; \\u003c \"quoted\" 'single' `tick`",
    "\x00\x1f control, 北京, 🙂",
]


def test_ui_is_a_read_only_html_page_with_a_strict_content_policy(server: ServerProcess) -> None:
    r = httpx.get(f"{server.url}/_mockllm/ui")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    policy = r.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy
    assert "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy
    assert r.headers["x-content-type-options"] == "nosniff"
    assert embedded(r.text)["live"] is True
    for method in ("POST", "PUT", "DELETE"):
        # typed as JSON to pass the admin guard: the route itself must then refuse
        typed = {"content-type": "application/json"}
        refused = httpx.request(method, f"{server.url}/_mockllm/ui", headers=typed)
        assert refused.status_code == 404 and "no admin route" in refused.json()["error"]["message"]


def test_the_page_runs_every_viewer_file_once_in_order_under_the_pinned_hash() -> None:
    folder = resources.files("mockllm.viewer")
    shipped = sorted(p.name for p in folder.iterdir() if p.name.endswith(".js"))
    assert sorted(SCRIPTS) == shipped, "a viewer file page.py does not join never runs"
    script = live_page().split("<script>", 1)[1].split("</script>", 1)[0]
    at = [script.index(folder.joinpath(name).read_text(encoding="utf-8")) for name in SCRIPTS]
    assert at == sorted(at) and len(set(at)) == len(SCRIPTS)
    assert script.startswith('(function () {\n"use strict";\n') and script.endswith("})();\n")
    pinned = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{pinned}'" in csp()


def test_no_two_viewer_files_declare_the_same_top_level_name() -> None:
    # The files share one scope, where a second `function el` would silently replace the
    # first for every file; tsc allows that in JavaScript, so it is checked here.
    folder = resources.files("mockllm.viewer")
    declared: dict[str, str] = {}
    for name in SCRIPTS:
        text = folder.joinpath(name).read_text(encoding="utf-8")
        for found in re.findall(r"^(?:function|var|let|const) (\w+)", text, re.MULTILINE):
            assert found not in declared, f"{found} in both {declared[found]} and {name}"
            declared[found] = name
    assert {"el", "state", "sessions", "renderEntry", "renderMcp", "start"} <= set(declared)


def test_a_viewer_file_missing_from_the_package_fails_the_page_loudly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(viewer_page, "SCRIPTS", (*SCRIPTS, "gone.js"))
    viewer_page.script.cache_clear()
    try:
        with pytest.raises(FileNotFoundError, match=r"gone\.js"):
            viewer_page.script()
    finally:
        viewer_page.script.cache_clear()  # nothing cached: the next call joins the real list


@given(st.text(st.characters(exclude_categories=())))  # lone surrogates too
@example("</script><!--")
@example("\ud800 \u2028")
@settings(max_examples=examples(300))
def test_embedded_data_cannot_end_its_script_element_and_reads_back_the_same(text: str) -> None:
    data = {"entries": [{"seq": 1, "session": text, "request": {text: [text]}}]}
    out = embed(data)
    assert "<" not in out and ">" not in out and "\u2028" not in out and "\u2029" not in out
    assert json.loads(out) == data


@given(st.lists(st.text(st.characters(exclude_categories=())), min_size=1, max_size=4))
@settings(max_examples=examples(50))
def test_a_report_of_any_strings_has_only_its_own_two_script_elements(texts: list[str]) -> None:
    entries = [
        {"seq": i, "session": t, "scenario": t, "conversation": [{"role": "user", "text": t}]}
        for i, t in enumerate(texts, 1)
    ]
    page = report_page(
        entries,
        [
            {"session": texts[0], "test": texts[-1], "outcome": "failed", "message": t}
            for t in texts
        ],
        title=texts[0],
    )
    assert page.lower().count("</script") == 2 and page.lower().count("<script") == 2
    page.encode("utf-8")  # it can be written to a file, whatever the strings held
    assert embedded(page)["entries"] == entries


def hostile_log(server: ServerProcess, chat: ChatFactory, session: str) -> list[dict[str, Any]]:
    """A real log whose user messages, tool results and session name carry HOSTILE."""
    client = chat("hello")
    for text in HOSTILE:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    bad = chat.raw(
        "weather-single",
        {
            "model": "m",
            "messages": [{"role": "tool", "content": HOSTILE[0], "tool_call_id": HOSTILE[1]}],
        },
    )
    assert bad.status_code == 400
    return server.requests(session=session)


def test_report_html_embeds_the_log_safely_and_is_byte_identical_for_the_same_log(
    server: ServerProcess, chat: ChatFactory, session: str, tmp_path: Path
) -> None:
    entries = hostile_log(server, chat, session)
    log = tmp_path / "requests.jsonl"
    log.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), "utf-8")
    pages = []
    for name in ("a.html", "b.html"):
        done = subprocess.run(
            [sys.executable, "-m", "mockllm", "report", str(log), "--html", str(tmp_path / name)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 1, done.stderr  # the stray tool result fails the verdict
        assert f"wrote {tmp_path / name} (1 session, {len(entries)} requests)" in done.stdout
        pages.append((tmp_path / name).read_text("utf-8"))
    assert pages[0] == pages[1]
    page = pages[0]
    assert page.count("</script>") == 2  # the data's and the viewer's own: nothing else closes one
    data = embedded(page)
    assert data["entries"] == entries
    assert data["verdicts"][session]["ok"] is False
    texts = [e["conversation"][-1].get("text") for e in data["entries"]]
    assert texts[: len(HOSTILE)] == [t for t in HOSTILE]


def test_report_page_takes_the_same_verdict_as_the_server(
    server: ServerProcess, chat: ChatFactory, session: str
) -> None:
    hostile_log(server, chat, session)
    page = report_page(server.requests(session=session))
    served = server.http.get("/_mockllm/verdict", params={"session": session}).json()
    assert embedded(page)["verdicts"] == {session: served}


def test_verdicts_route_judges_every_session_touched_since_a_seq_in_one_request(
    server: ServerProcess, chat: ChatFactory, session: str
) -> None:
    hostile_log(server, chat, session)
    before = server.requests(session=session)[-1]["seq"]
    other = f"{session}-other"
    chat.raw("hello", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    httpx.post(
        f"{server.url}/s/hello/{other}/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    )
    since = server.http.get("/_mockllm/verdicts", params={"since": before}).json()
    assert set(since) >= {session, other}  # the first session's new request touches it again
    for name in (session, other):
        single = server.http.get("/_mockllm/verdict", params={"session": name}).json()
        assert since[name] == single
    assert server.http.get("/_mockllm/verdicts", params={"since": "x"}).status_code == 400
