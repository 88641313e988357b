"""Run the recorder on uvicorn in the foreground (`mockllm record`), then name every file."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import uvicorn
from uvicorn.config import LOGGING_CONFIG

from mockllm.options import DEFAULTS
from mockllm.recording.proxy import Recorder
from mockllm.recording.redact import Redactor
from mockllm.recording.sessions import Sessions
from mockllm.serving.responder import quiet_scripted_aborts
from mockllm.serving.server import Server, announce, bind, url_of

GRACE = 30  # seconds Ctrl-C waits for exchanges in flight before it cuts them


def public_url(url: str) -> str:
    """The upstream as it may be written in a file: no user, password or query (keys)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def recorder_config(app: Recorder, keep_alive: int, grace: int | None = None) -> uvicorn.Config:
    """uvicorn for the recorder, from `mockllm record` or inside a test run (in_test.py)."""
    return uvicorn.Config(
        app,
        lifespan="on",  # closes the upstream connections
        access_log=False,
        log_level="warning",
        log_config=LOGGING_CONFIG,
        server_header=False,
        date_header=False,  # the upstream's own headers pass through
        timeout_graceful_shutdown=grace,
        timeout_keep_alive=keep_alive,
    )


def print_line(line: str) -> None:
    print(line, flush=True)


def record(
    upstream: str,
    out: Path,
    host: str,
    port: int,
    redact: Sequence[str],
    max_body: int,
    ready_file: str | None,
    keep_alive: int = DEFAULTS.keep_alive,
) -> None:
    quiet_scripted_aborts()  # a reset passed on from the upstream is not an error here
    redactor = Redactor(redact)
    sessions = Sessions(out, public_url(upstream), redactor)
    app = Recorder(upstream, sessions, redactor, max_body, print_line)
    sock = bind(host, port)
    url = url_of(sock)
    banner = (
        f"mockllm record: {url} → {public_url(upstream)}, one scenario per session into {out}/\n"
        f'  OpenAI SDK:    OpenAI(base_url="{url}/s/NAME/SESSION/v1", api_key=...)\n'
        f'  Anthropic SDK: Anthropic(base_url="{url}/s/NAME/SESSION", api_key=...)\n'
        "  Gemini SDK:    genai.Client(api_key=..., "
        f'http_options={{"base_url": "{url}/s/NAME/SESSION"}})\n'
        "  Ctrl-C ends the recording (exchanges in flight are finished first); replay it with\n"
        f"  mockllm serve --scenarios {out}"
    )
    config = recorder_config(app, keep_alive, GRACE)
    try:
        Server(config, lambda: announce(url, banner, ready_file)).run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn re-raises the Ctrl-C it has handled: the stop was a clean one
    finally:
        sock.close()
    for session in sorted(sessions.flush(), key=lambda s: s.name):
        print_line(f"wrote {sessions.path(session.name)} ({sessions.turns(session.name)} turns)")
    sys.stdout.flush()
