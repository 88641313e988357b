"""What must never reach a recorded file: credentials from request headers, and whatever
the user's --redact patterns match."""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "[REDACTED]"
# Headers whose values are credentials: they are never written, and their values are
# masked wherever an upstream echoes them (an error message quoting the key).
SECRET_HEADERS = re.compile(
    r"^(authorization|proxy-authorization|cookie|set-cookie|api-key|x-api-key)$"
    r"|key|token|secret|auth|cookie|passw|session-id|credential"
    r"|organi[sz]ation|project|account|tenant",  # headers that name an account
    re.I,
)
MIN_SECRET = 8  # shorter values ("test") would mask ordinary words


def is_secret_header(name: str) -> bool:
    return not name.lower().startswith("x-mockllm-") and SECRET_HEADERS.search(name) is not None


class Redactor:
    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns = [re.compile(p) for p in patterns]
        self.secrets: set[str] = set()

    def learn(self, headers: Iterable[tuple[str, str]]) -> None:
        """Remember the credential values of a request's headers."""
        found = {
            part
            for name, value in headers
            if is_secret_header(name)
            for part in (value, *value.split(), *re.split(r"[;,=\s]+", value))
            if len(part) >= MIN_SECRET and part.lower() != "bearer"
        }
        if not found <= self.secrets:
            # A new set, never one changed in place: a file is written on another thread.
            self.secrets = self.secrets | found

    def __call__(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, MASK)
        for pattern in self.patterns:
            text = pattern.sub(MASK, text)
        return text

    def clean_prefix(self, text: str) -> str:
        """The part of `text` before anything that would be masked: a snippet that still
        matches the real request (a masked one would not)."""
        cut = len(text)
        for secret in self.secrets:
            found = text.find(secret)
            if found >= 0:
                cut = min(cut, found)
        for pattern in self.patterns:
            match = pattern.search(text)
            if match:
                cut = min(cut, match.start())
        return text[:cut]
