"""The recording proxy: raw ASGI. Each request goes to the upstream unchanged; each chunk of
the answer goes on to the client the moment it arrives, and is read on the side into the
session's recording (a tee, never a buffer).

Routing is serve's: `/s/NAME[/SESSION]/ROUTE` or the X-Mockllm-* headers name the session;
POSTs to a model route are recorded, anything else is only forwarded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from mockllm.core.heard import HeardError
from mockllm.errors import RequestError
from mockllm.providers import ADAPTERS, Adapter, RecordedResponses, answers_of
from mockllm.recording.attempt import Attempt, Ending
from mockllm.recording.redact import Redactor
from mockllm.recording.sessions import Sessions, scenario_name
from mockllm.recording.sse import frames_for
from mockllm.serving.asgi import Receive, Scope, Send, read_body
from mockllm.serving.routing import Routes

# Hop-by-hop or recomputed: never passed on as they came.
_REQUEST_DROP = {
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "upgrade",
    "proxy-connection",
}
_RESPONSE_DROP = {
    "content-length",
    "content-encoding",
    "transfer-encoding",
    "connection",
    "keep-alive",
}
# What a wire's answers reader raises on JSON not of the wire's shape (a list where an
# object goes, an object where a list goes): the answer is then kept as cut or noted.
UNREADABLE = (ValueError, AttributeError, TypeError, LookupError)
ERROR_BODY_CAP = 1 << 20  # an error body is read for its words; more is not recorded
MESSAGE_CAP = 500  # characters of a non-JSON error body kept as the fault's message


class Recorder:
    def __init__(
        self,
        upstream: str,
        sessions: Sessions,
        redactor: Redactor,
        max_body: int,
        print_line: Callable[[str], None] = print,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.sessions, self.redactor, self.max_body, self.print_line = (
            sessions,
            redactor,
            max_body,
            print_line,
        )
        self.routes = Routes(cls() for cls in ADAPTERS.values())
        self._client: httpx.AsyncClient | None = None
        self._seq = 0

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            host = urlsplit(self.upstream).hostname or ""
            loopback = host in ("localhost", "::1") or host.startswith("127.")
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(None, connect=10.0),
                trust_env=not loopback,  # a CI proxy must not capture a local upstream
                follow_redirects=False,
            )
        return self._client

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            if scope["path"].startswith("/_mockllm/record/"):
                await self._admin(scope, send)
            else:
                await self._exchange(scope, receive, send)

    # --- one exchange ---------------------------------------------------------------------

    async def _exchange(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._seq += 1
        seq, method, path = self._seq, scope["method"], scope["path"]
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        self.redactor.learn(headers)
        named = dict((k.lower(), v) for k, v in headers)
        scenario, session, route = self.routes.split(path)
        scenario = scenario or named.get("x-mockllm-scenario")
        session = session or named.get("x-mockllm-session")
        try:
            body = await read_body(receive, self.max_body)
        except RequestError as e:
            await _reply(send, e.status, json.dumps({"error": {"message": e.message}}).encode())
            return
        adapter = self.routes.post(route) if method == "POST" else None
        name = scenario_name(scenario, session)
        attempt, why = (
            self._begin(adapter, body, name, route) if adapter else (None, "not a model route")
        )
        url = self._url(scenario, session, route, scope.get("query_string", b""))
        forwarded = [(k, v) for k, v in headers if k.lower() not in _REQUEST_DROP]
        start, status = time.monotonic(), 0
        try:
            status = await self._forward(method, url, forwarded, body, receive, send, attempt)
        finally:  # also when Ctrl-C's grace runs out: what arrived is kept
            line = f"{seq:>4} {method} {path}"
            self._settle(line, name, attempt, why, status, time.monotonic() - start)

    async def _forward(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes,
        receive: Receive,
        send: Send,
        attempt: Attempt | None,
    ) -> int:
        """Relay the exchange while watching for the client to hang up; the status sent, or 0
        when the client left first."""
        relay = asyncio.ensure_future(self._relay(method, url, headers, body, send, attempt))
        watch = asyncio.ensure_future(_hang_up(receive))
        try:
            await asyncio.wait({relay, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watch.cancel()
            if not relay.done():  # the client left: stop reading for it, keep what came
                relay.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await relay
        return 0 if relay.cancelled() else relay.result()

    def _settle(
        self, line: str, name: str, attempt: Attempt | None, why: str, status: int, seconds: float
    ) -> None:
        """Keep the attempt (the file is rewritten) and print the exchange's console line."""
        if attempt is not None and attempt.status == 0:
            if status == 0:  # the client gave up before the upstream answered at all
                attempt.ending = "hung_up"
            else:
                self.sessions.discard(name, attempt)
                attempt, why = None, "the upstream did not answer"
        elif attempt is not None and not (200 <= attempt.status < 300 or attempt.status >= 400):
            self.sessions.discard(name, attempt)  # a redirect, say: not the model's answer
            attempt, why = None, f"HTTP {status} is neither an answer nor an error"
        if attempt is None:
            self.print_line(f"{line}  {status}  not recorded: {why}")
            return
        attempt.seconds = seconds
        written = self.sessions.finish(name, attempt)
        stream = " stream" if attempt.stream else ""
        self.print_line(
            f"{line}  {name} turn {attempt.turn}/{attempt.number}  {attempt.status}{stream}  "
            f"{attempt.describe()}  ({attempt.seconds:.2f} s) → {written.name}"
        )

    def _begin(
        self, adapter: Adapter, body: bytes, name: str, route: str
    ) -> tuple[Attempt | None, str]:
        if answers_of(adapter) is None:
            return None, f"no answer reader for {adapter.api}"
        try:  # the route too: Gemini's names the model and whether it streams
            parsed = adapter.parse_at(json.loads(body), route)
        except (ValueError, RequestError) as e:
            return None, f"the request does not parse: {str(e)[:200]}"
        return self.sessions.begin(name, adapter, parsed), ""

    async def _relay(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes,
        send: Send,
        attempt: Attempt | None,
    ) -> int:
        """Forward, stream the answer back as it comes, read it on the side. The status sent."""
        try:
            request = self.client.build_request(method, url, headers=headers, content=body)
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError as e:
            message = f"mockllm record: the upstream {self.upstream} did not answer: {e!r}"
            await _reply(send, 502, _error_body(attempt, message))
            return 502
        tee = _Tee(attempt, response)
        ending: Ending = "complete"
        try:
            out = [
                (k.encode("latin-1"), v.encode("latin-1"))
                for k, v in response.headers.multi_items()
                if k.lower() not in _RESPONSE_DROP
            ]
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": out}
            )
            async for chunk in response.aiter_bytes():
                tee.feed(chunk)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except httpx.HTTPError:
            ending = "reset"
        except asyncio.CancelledError:
            ending = "hung_up"
            raise
        finally:
            tee.finish(ending)
            await response.aclose()
        if ending == "complete":
            # Remembered before the last byte goes: the client may send the request that
            # names this response (previous_response_id) the moment it has it all.
            if attempt is not None and 200 <= attempt.status < 300:
                _remember(attempt)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        # A reset upstream is passed on as one: the body is left unfinished, uvicorn drops
        # the connection, and the client sees the same abort.
        return response.status_code

    def _url(self, scenario: str | None, session: str | None, route: str, query: bytes) -> str:
        base = self.upstream.replace("{scenario}", scenario or "").replace(
            "{session}", session or "default"
        )
        return f"{base}/{route}" + (f"?{query.decode('latin-1')}" if query else "")

    # --- admin and lifespan ---------------------------------------------------------------

    async def _admin(self, scope: Scope, send: Send) -> None:
        """POST /_mockllm/record/end?name=NAME: wait for the session's exchanges in flight,
        then answer with its file (the sync point for a harness that records in CI)."""
        query = dict(
            part.split("=", 1)
            for part in scope.get("query_string", b"").decode().split("&")
            if "=" in part
        )
        if scope["path"] != "/_mockllm/record/end" or scope["method"] != "POST":
            await _reply(send, 404, b'{"error": "POST /_mockllm/record/end?name=NAME"}')
            return
        name = query.get("name", "")
        session = await self.sessions.end(name)
        if session is None:
            known = sorted(self.sessions.sessions)
            body = json.dumps({"error": f"no session {name!r}", "sessions": known}).encode()
            await _reply(send, 404, body)
            return
        path = self.sessions.path(name)
        turns = self.sessions.turns(name)
        self.print_line(f"wrote {path} ({turns} turns)")
        await _reply(
            send, 200, json.dumps({"name": name, "path": str(path), "turns": turns}).encode()
        )

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._client is not None:
                    await self._client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


class _Tee:
    """Reads the answer as it passes: a stream's frames into the wire's reader, a JSON body
    kept."""

    def __init__(self, attempt: Attempt | None, response: httpx.Response) -> None:
        self.attempt = attempt
        self.status = response.status_code
        # SSE, or Bedrock's binary event stream; None: a JSON body
        self.frames = frames_for(response.headers.get("content-type", ""))
        self.headers = tuple((k.lower(), v) for k, v in response.headers.multi_items())
        self.answers = attempt.reader() if attempt is not None else None
        self.body = bytearray()

    def feed(self, chunk: bytes) -> None:
        if self.attempt is None or self.answers is None:
            return
        self.attempt.received += len(chunk)
        if self.frames is not None and self.status < 400:
            for name, data in self.frames.feed(chunk):
                try:
                    self.answers.event(name, data)
                except UNREADABLE:
                    self.answers.heard.drop("an event that is not the wire's JSON")
        elif len(self.body) < ERROR_BODY_CAP or self.status < 400:
            self.body += chunk

    def finish(self, ending: Ending) -> None:
        attempt, answers = self.attempt, self.answers
        if attempt is None or answers is None:
            return
        attempt.status = self.status
        attempt.headers = self.headers
        if self.status >= 400:
            data = _json(self.body)
            error = answers.error(data)
            if error.message is None:  # not the provider's JSON: keep the text
                text = self.body.decode("utf-8", "replace").strip()[:MESSAGE_CAP]
                error = HeardError(error.type, text or None, error.code)
            attempt.error = error
        elif self.frames is None:
            data = _json(self.body)
            if isinstance(data, dict):
                try:
                    answers.body(data)
                except UNREADABLE:
                    answers.heard = type(answers.heard)()  # unreadable: treated as cut
        attempt.heard = answers.heard
        attempt.partial = self.frames is not None and self.frames.partial
        complete = attempt.heard.complete or self.status >= 400
        attempt.ending = ending if ending != "complete" or complete else "close"


def _json(body: bytes | bytearray) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _error_body(attempt: Attempt | None, message: str) -> bytes:
    error = RequestError(502, message, kind="upstream_unreachable")
    if attempt is not None:
        return attempt.adapter.error_body(error, "")
    return json.dumps({"error": {"message": message, "type": "upstream_unreachable"}}).encode()


async def _reply(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _hang_up(receive: Receive) -> None:
    """Returns when the client disconnects."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _remember(attempt: Attempt) -> None:
    """A served answer the adapter keeps, for later requests that name it (Responses)."""
    if attempt.outcome == "served" and isinstance(attempt.adapter, RecordedResponses):
        attempt.adapter.recorded(attempt.parsed, attempt.heard)
