"""Work a scenario asks for on text a client sends, with a bound on it.

`expect` regexes and the `pattern` of a client's tool schema run on client text. Python's
`re` backtracks without limit (`^(a|aa)+$` on 40 characters takes minutes), so they run on
the `regex` engine, which is `re`'s syntax (lookarounds and backreferences included) plus a
timeout. docs/security.md weighs the alternatives. `regex` is imported by the first search
or check (a deferred import: most starts and most requests use no pattern at all).
"""

from __future__ import annotations

REGEX_TIMEOUT = 0.1
"""Seconds one regex search may take; past it the search counts as failed, saying why."""


class RegexTimeout(Exception):
    def __init__(self, pattern: str, text: str) -> None:
        super().__init__(
            f"the regex /{pattern}/ ran past its {REGEX_TIMEOUT * 1000:g} ms limit on "
            f"{len(text)} characters (nested quantifiers backtrack without end: simplify it)"
        )


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches somewhere in `text`; RegexTimeout past REGEX_TIMEOUT."""
    import regex

    try:
        return regex.search(pattern, text, timeout=REGEX_TIMEOUT) is not None
    except TimeoutError:
        raise RegexTimeout(pattern, text) from None


def check(pattern: str) -> str | None:
    """Why `pattern` cannot be used, or None."""
    import regex

    try:
        regex.compile(pattern)
    except regex.error as e:
        return str(e)
    return None
