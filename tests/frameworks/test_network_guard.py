"""The group's network guard refuses, and records, anything beyond loopback — and only that."""

from __future__ import annotations

import socket

import pytest

from . import network_guard
from .network_guard import NetworkGuardError


def test_a_public_address_or_a_host_name_is_refused_and_recorded() -> None:
    before = len(network_guard.attempts)
    with socket.socket() as sock, pytest.raises(NetworkGuardError, match=r"203\.0\.113\.7:443"):
        sock.connect(("203.0.113.7", 443))
    with pytest.raises(NetworkGuardError, match=r"raw\.githubusercontent\.com"):
        socket.getaddrinfo("raw.githubusercontent.com", 443)
    assert network_guard.attempts[before:] == ["203.0.113.7:443", "raw.githubusercontent.com"]
    del network_guard.attempts[before:]  # seen: the autouse check would fail this test


def test_loopback_is_allowed() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with socket.create_connection(listener.getsockname(), timeout=1):
            pass
    assert socket.getaddrinfo("localhost", 80)
