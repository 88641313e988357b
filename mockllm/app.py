"""The ASGI application: glue from HTTP to adapter, engine and journal.

Model routes are served by raw ASGI (the hot path); admin routes under /_mockllm/
by starlette. Every model request becomes one journal entry, whatever happens.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass
from typing import Any

from .engine import Engine, Resolved
from .errors import RequestError
from .faults import body_delivery, stream_delivery
from .journal import Entry, Journal
from .providers import ADAPTERS, Adapter, Parsed
from .responder import Responder
from .scenario import Fault
from .validation import RuleContext, Violation

Scope = dict[str, Any]
Message = dict[str, Any]


@dataclass(frozen=True)
class Settings:
    max_body: int = 10 * 1024 * 1024
    max_stall: float = 30.0  # seconds a `stall` fault holds a connection at most


class MockLLM:
    def __init__(self, engine: Engine, journal: Journal, settings: Settings = Settings()) -> None:
        self.engine = engine
        self.journal = journal
        self.settings = settings
        self.adapters = [cls() for cls in ADAPTERS.values()]
        self.routes: dict[str, Adapter] = {r: a for a in self.adapters for r in a.routes}
        self.families: dict[str, Adapter] = {}
        for adapter in self.adapters:  # the first of each family answers its shared routes
            self.families.setdefault(adapter.family, adapter)
        from .admin import admin_router  # starlette is only needed off the hot path

        self.admin = admin_router(self)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        if path.startswith("/_mockllm/"):
            await self.admin(scope, receive, send)
            return
        scenario, session, route = self._split(path)
        adapter = self.routes.get(route)
        if adapter is not None and scope["method"] == "POST":
            await self._model_request(scope, receive, send, adapter, scenario, session)
        elif scope["method"] != "GET":
            await self._not_found(scope, send, route)
        elif route == "v1/models" or route.startswith("v1/models/"):
            await self._models(scope, send, route)
        elif (getter := self._getter(route)) is not None:
            status, body = getter.get(route.removeprefix(getter.get_prefix or ""))
            await _send(send, status, body, b"application/json")
        else:
            await self._not_found(scope, send, route)

    def _getter(self, route: str) -> Adapter | None:
        return next(
            (a for a in self.adapters if a.get_prefix and route.startswith(a.get_prefix)), None
        )

    def family_of(self, scope: Scope) -> Adapter:
        """Routes the providers share answer in Anthropic's shape when the SDK is Anthropic's."""
        anthropic = any(k == b"anthropic-version" for k, _ in scope["headers"])
        return self.families.get("anthropic" if anthropic else "openai") or self.adapters[0]

    def reset(self, session: str | None = None) -> None:
        self.engine.reset(session)
        if session is None:
            for adapter in self.adapters:
                adapter.reset()

    def _split(self, path: str) -> tuple[str | None, str | None, str]:
        """'/s/NAME[/SESSION]/ROUTE' → (NAME, SESSION, ROUTE); a plain path has neither."""
        if not path.startswith("/s/"):
            return None, None, path[1:]
        scenario, _, rest = path[3:].partition("/")
        if self._is_route(rest):
            return scenario, None, rest
        session, _, route = rest.partition("/")
        return scenario, session, route

    def _is_route(self, rest: str) -> bool:
        return (
            rest in self.routes
            or rest == "v1/models"
            or rest.startswith("v1/models/")
            or self._getter(rest) is not None
        )

    # --- model requests ------------------------------------------------------------------

    async def _model_request(
        self,
        scope: Scope,
        receive: Any,
        send: Any,
        adapter: Adapter,
        scenario: str | None,
        session: str | None,
    ) -> None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        entry = self.journal.open(scope["path"], headers)
        entry.api = adapter.api
        entry.session = session or headers.get("x-mockllm-session") or "default"
        entry.scenario = scenario or headers.get("x-mockllm-scenario") or self.engine.default
        reply = Responder(self.journal, entry, send, receive, adapter, self.settings.max_stall)
        try:
            await self._answer(scope, receive, adapter, entry, reply)
        except RequestError as error:  # refused: in the provider's error shape
            await reply.error(error)
        except Exception:
            entry.server_error = traceback.format_exc()
            if not reply.started:
                message = "mockllm internal error; see server_error in the request log"
                await reply.error(RequestError(500, message, kind="server_error"))
        finally:
            self.journal.close(entry)

    async def _answer(
        self, scope: Scope, receive: Any, adapter: Adapter, entry: Entry, reply: Responder
    ) -> None:
        entry.body = await _read_body(scope, receive, self.settings.max_body)
        scenario = self.engine.find(entry.scenario)
        body = _json_body(entry, adapter)
        parsed = adapter.parse(body)
        conv = parsed.conversation
        entry.conversation, entry.stream = conv, conv.stream
        violations: list[Violation] = []
        if self.engine.mode(scenario) != "off":
            context = RuleContext(conv, scenario, self.engine.flavor_of(scenario))
            violations = adapter.validate(body, context)
        session = entry.session or "default"
        answer = self.engine.answer(scenario, session, conv, tuple(violations), adapter.call_id)
        entry.turn, entry.attempt = answer.turn, answer.attempt
        entry.violations += answer.violations
        entry.expectation_failures += answer.expectation_failures
        reply.request_id = adapter.request_id(
            entry.session, scenario.name, answer.turn, answer.attempt
        )
        if answer.error is not None:
            raise answer.error
        resolved = answer.resolved
        assert resolved is not None
        entry.finish = resolved.reply.finish
        entry.text = resolved.reply.text
        entry.tool_calls = [
            {
                "id": adapter.call_id(resolved.scenario, resolved.turn, i),
                "name": c.name,
                "arguments": c.arguments,
            }
            for i, c in enumerate(resolved.reply.tool_calls)
        ]
        fault = answer.fault
        if fault is not None:
            entry.fault = {"kind": fault.kind, "detail": fault.describe(), "why": answer.fault_why}
        await self._deliver(adapter, parsed, resolved, fault, reply)

    async def _deliver(
        self,
        adapter: Adapter,
        parsed: Parsed,
        resolved: Resolved,
        fault: Fault | None,
        reply: Responder,
    ) -> None:
        """Render the reply and send it as the fault (if any) has it delivered."""
        first_byte = fault.delay.first_byte_ms if fault and fault.delay else 0
        if fault and fault.http:
            http = fault.http
            error = adapter.fault_error(
                http.status, http.type, http.message, http.code, http.headers
            )
            await reply.error(error, first_byte)
            return
        stream_error = fault.stream_error if fault else None
        error = RequestError(500, "")  # replaced below when a stream_error fault applies
        if stream_error is not None:
            status = stream_error.status or adapter.stream_error_status
            error = adapter.fault_error(status, stream_error.type, stream_error.message)
            if (
                not parsed.conversation.stream
            ):  # without a stream, the same failure is an HTTP error
                await reply.error(error, first_byte)
                return
        if parsed.conversation.stream:
            events = adapter.render_stream(resolved, parsed)
            delivery = stream_delivery(
                fault, events, lambda sent: adapter.stream_error_events(error, sent)
            )
            await reply.deliver(delivery, stream=True)
            return
        body = adapter.render(resolved, parsed)
        reply.entry.notes += adapter.notes(resolved, parsed)
        by_events = (
            fault is not None
            and fault.truncate is not None
            and fault.truncate.after_events is not None
        )
        count = len(adapter.render_stream(resolved, parsed)) if by_events else 0
        await reply.deliver(body_delivery(fault, body, resolved.reply, count), stream=False)

    # --- other routes --------------------------------------------------------------------

    async def _models(self, scope: Scope, send: Any, route: str) -> None:
        adapter = self.family_of(scope)
        body = adapter.models_body()
        if route != "v1/models":  # one model: any id is served, in the listing's shape
            model = json.loads(body)["data"][0]
            model.update({"id": route.removeprefix("v1/models/")})
            body = json.dumps(model).encode()
        await _send(send, 200, body, b"application/json")

    async def _not_found(self, scope: Scope, send: Any, route: str) -> None:
        adapter = self.family_of(scope)
        known = ", ".join(sorted({"POST /" + r for r in self.routes if r.startswith("v1/")}))
        message = (
            f"mockllm: no route {scope['method']} /{route}; model routes: {known}, "
            "GET /v1/models; optionally behind /s/SCENARIO[/SESSION]"
        )
        error = RequestError(404, message, kind="route_not_found", code="route_not_found")
        await _send(send, 404, adapter.error_body(error, ""), b"application/json")


async def _read_body(scope: Scope, receive: Any, limit: int) -> bytes:
    declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(int(declared), limit)
    body = bytearray()
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > limit:
            raise _too_large(len(body), limit)
        if not message.get("more_body"):
            return bytes(body)


def _too_large(size: int, limit: int) -> RequestError:
    message = (
        f"mockllm: request body of {size} bytes exceeds the server's limit of {limit} bytes "
        "(--max-body)"
    )
    return RequestError(413, message, kind="body_too_large", code="request_too_large")


def _json_body(entry: Entry, adapter: Adapter) -> Any:
    content_type = entry.headers.get("content-type", "application/json")
    if "json" not in content_type:
        message = f"mockllm: unsupported Content-Type {content_type!r}; send application/json"
        raise RequestError(400, message, kind="bad_content_type", code="unsupported_content_type")
    try:
        return json.loads(entry.body)
    except ValueError:
        raise RequestError(400, adapter.invalid_json_message, kind="invalid_json") from None


async def _send(send: Any, status: int, body: bytes, content_type: bytes) -> None:
    headers = [(b"content-type", content_type)]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


__all__ = ["MockLLM", "Parsed", "Settings"]
