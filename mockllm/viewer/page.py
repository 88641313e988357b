"""The viewer's one HTML document: live (`GET /_mockllm/ui`, the script polls the admin
routes next to it) or with a log inside (the static report, which works from file://).
Both run the same script, the viewer's files joined (SCRIPTS); only the embedded data
differs (docs/viewer.md)."""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from mockllm.judge.uses import name_of, uses
from mockllm.judge.verdict import DEFAULT_MAX_CALLS, verdict
from mockllm.log.records import Json

# What could end the data's <script> element early (`</script>`, `<!--`). ASCII-only JSON
# already escapes the rest: U+2028 and U+2029 (line ends in older JavaScript) and lone
# surrogates, which a client may send as `\ud800` and no UTF-8 file can hold.
_UNSAFE = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}

# The viewer's script, split by what each part draws, in the order the page runs them:
# base.js first (the state and DOM helpers the rest build with), live.js last (it starts
# the page). Every .js file in this package is one of these (tests/e2e/log/test_viewer.py).
SCRIPTS = ("base.js", "log.js", "sessions.js", "request.js", "mcp.js", "live.js")


def live_page() -> str:
    return _live()


@cache
def _live() -> str:
    return document({"title": "mockllm", "live": True, "entries": [], "verdicts": {}, "tests": []})


def report_page(
    entries: Sequence[Json],
    tests: Sequence[Mapping[str, Any]] = (),
    title: str = "mockllm report",
    max_calls: int = DEFAULT_MAX_CALLS,
    verdicts: Mapping[str, Any] | None = None,
) -> str:
    """The static report of `entries` (log entries as JSON) with each session's verdict
    (computed here unless given) and, from pytest, each test's `{session, test, outcome,
    message}` (and `allow`, the checks the test waived). Same input, same bytes."""
    if verdicts is None:
        grouped = uses(dict(e) for e in entries)  # one use of a session, as the viewer's
        allowed = {str(t["session"]): t.get("allow") for t in tests}
        verdicts = {
            key: verdict(name_of(key), found, max_calls, allow=allowed.get(name_of(key)))
            for key, found in grouped.items()
        }
    data = {
        "title": title,
        "live": False,
        "entries": list(entries),
        "verdicts": dict(verdicts),
        "tests": list(tests),
    }
    return document(data)


def document(data: Mapping[str, Any]) -> str:
    title = str(data.get("title") or "mockllm")  # a file name may hold undecodable bytes
    title = html.escape(title.encode("utf-8", "replace").decode("utf-8"))
    status = "Live: connecting to the server…" if data.get("live") else "Static report"
    return _TEMPLATE.format(
        csp=csp(),
        title=title,
        status=status,
        style=_asset("viewer.css"),
        script=script(),
        data=embed(data),
    )


def embed(data: Any) -> str:
    """JSON that can sit inside <script type="application/json"> whatever its strings hold."""
    return json.dumps(data).translate(_UNSAFE)


@cache
def csp() -> str:
    """Only the viewer's own script and style may run: were a logged string ever to reach
    the page as markup, it still could not execute."""
    return (
        f"default-src 'none'; script-src '{_sha256(script())}'; "
        f"style-src '{_sha256(_asset('viewer.css'))}'; connect-src 'self'; "
        "base-uri 'none'; form-action 'none'"
    )


@cache
def script() -> str:
    """The viewer's files as one script, in one function: they share its scope (and its
    strict mode) as they would in one file, and leave nothing on the page's globals."""
    parts = "\n".join(_asset(name) for name in SCRIPTS)
    return '(function () {\n"use strict";\n' + parts + "})();\n"


@cache
def _asset(name: str) -> str:
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    if "</" in text:  # it is inlined in the page: this would close its element
        raise ValueError(f"mockllm/viewer/{name} must not contain '</'")
    return text


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<title>{title}</title>
<style>{style}</style>
</head>
<body>
<a class="skip" href="#detail">Skip to the session</a>
<header class="top"><h1>{title}</h1>
<p id="live" role="status" aria-live="polite">{status}</p></header>
<div class="layout">
<nav aria-labelledby="sessions-heading">
<h2 id="sessions-heading">Sessions</h2>
<div class="filters" role="search">
<label for="f-text">Find</label>
<input id="f-text" type="search" placeholder="session or test name">
<label for="f-scenario">Scenario</label>
<select id="f-scenario"><option value="">all scenarios</option></select>
<label for="f-status">Status</label>
<select id="f-status"><option value="">any</option><option value="failing">failing</option>
<option value="passing">passing</option><option value="errors">with error responses</option>
<option value="faults">with faults</option></select>
</div>
<p id="count"></p>
<ul id="sessions" aria-label="Sessions, failing first (arrow keys move)"></ul>
</nav>
<main id="detail" tabindex="-1"></main>
</div>
<script type="application/json" id="mockllm-data">{data}</script>
<script>{script}</script>
</body>
</html>
"""
