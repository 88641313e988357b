"""Who may use the admin routes: the developer's own tools, not a web page they happen to open.

A page on any site can send a "simple" cross-origin request (a POST with `text/plain` and
no pre-flight) to localhost, and DNS rebinding lets it reach the server under a host name of
its own. So the admin routes refuse (docs/security.md):
- a `Host` other than a loopback name, the address the server is reached on, or one given
  with `--allow-host`;
- an `Origin` (sent by browsers) whose host is not one of those;
- a state-changing request (POST, PUT, PATCH, DELETE) whose Content-Type is not JSON or
  YAML: those types force a browser's CORS pre-flight, which mockllm never grants.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from mockllm.serving.asgi import Scope

LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
_CHANGES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def refusal(scope: Scope, allowed: Iterable[str]) -> tuple[int, str] | None:
    """(status, why) when this admin request is refused, else None."""
    hosts = {*LOOPBACK, *(h.lower() for h in allowed)}
    server = scope.get("server")
    if server:
        hosts.add(str(server[0]).lower())
    headers = {k: v.decode("latin-1") for k, v in scope["headers"] if k in _READ}
    host = headers.get(b"host")
    if host is not None and _hostname(host) not in hosts:
        return 403, (
            f"Host {host!r} is not this server's; start it with --allow-host "
            f"{_hostname(host) or 'NAME'} to reach the admin routes under that name"
        )
    origin = headers.get(b"origin")
    if origin is not None and _hostname(origin, url=True) not in hosts:
        return 403, f"cross-origin request from {origin!r} refused (admin routes take no CORS)"
    kind = headers.get(b"content-type", "")
    if scope["method"] in _CHANGES and "json" not in kind and "yaml" not in kind:
        shown = repr(kind) if kind else "none"
        return 415, (
            f"Content-Type {shown} refused: send application/json (or application/yaml) "
            "to change the server's state"
        )
    return None


_READ = (b"host", b"origin", b"content-type")


def _hostname(value: str, url: bool = False) -> str:
    """The host of a Host header ("[::1]:8000" → "::1") or of an Origin URL."""
    try:
        return (urlsplit(value if url else f"//{value}").hostname or "").lower()
    except ValueError:
        return ""
