"""The Node client's modules import one another without a cycle, as `lint-imports` holds
the Python package to (pyproject.toml): `Session` depends on the `AdminRoutes` interface
(clients/node/src/routes.ts), never on `Client`, which makes sessions."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).parents[2] / "clients" / "node" / "src"
# `import … from "./x.js"` and `export … from "./x.js"`, type-only ones too: a type cycle
# is still a cycle for a reader and for declaration emit.
_IMPORT = re.compile(r'^(?:import|export)\s[^;]*?from\s+"\./([\w-]+)\.js"', re.M | re.S)


def imports(source: Path = SRC) -> dict[str, set[str]]:
    return {
        f.stem: set(_IMPORT.findall(f.read_text(encoding="utf-8"))) for f in source.glob("*.ts")
    }


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    done: set[str] = set()

    def walk(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            if found := walk(nxt, [*path, node]):
                return found
        done.add(node)
        return None

    return next((c for n in sorted(graph) if (c := walk(n, []))), None)


def test_the_node_client_modules_import_no_cycle() -> None:
    graph = imports()
    assert {"client", "session", "routes"} <= graph.keys()
    assert cycle(graph) is None, " → ".join(cycle(graph) or [])
    assert "client" not in graph["session"] and "routes" in graph["session"]


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycle({"client": {"session"}, "session": {"client", "records"}, "records": set()}) == [
        "client",
        "session",
        "client",
    ]
    assert cycle({"a": {"b"}, "b": set()}) is None
