"""Where a value sits in a YAML document: its path of keys and indexes, and positions."""

from __future__ import annotations

YamlPath = tuple[str | int, ...]
Marks = dict[YamlPath, tuple[int, int]]  # path → (line, column), both 1-based


def dotted(path: YamlPath) -> str:
    """`("turns", 0, "reply")` → `turns[0].reply`, as the error messages name a place."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
