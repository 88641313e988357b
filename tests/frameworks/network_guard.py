"""Refuse every socket to a non-loopback address, loudly, and remember the attempt.

Frameworks reach the network on their own (a cost map at import, trace exporters on a
background thread) and often swallow the error and carry on, so refusing is not enough:
every attempt is recorded, and the group's conftest fails the test that made one.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

attempts: list[str] = []


class NetworkGuardError(ConnectionRefusedError):
    """A test tried to reach beyond this machine."""


def _loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host in (None, "localhost"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False  # a host name other than localhost: resolving it is already a reach


def _refuse(target: str) -> NetworkGuardError:
    attempts.append(target)
    return NetworkGuardError(f"network guard: a test tried to reach {target}")


_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_getaddrinfo = socket.getaddrinfo


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0]):
        raise _refuse(f"{address[0]}:{address[1]}")
    _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0]):
        raise _refuse(f"{address[0]}:{address[1]}")
    return _connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if not _loopback(host):
        raise _refuse(str(host))
    return _getaddrinfo(host, *args, **kwargs)


def install() -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = _guarded_getaddrinfo
