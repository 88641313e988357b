"""The fake tools both reference harnesses run: a weather lookup, a file reader and a search
over a sandbox directory — and `delete_file`, which is implemented but never offered to the
model, so a harness that runs whatever name comes back can be caught running it.

The tools trust their input, as most real tool code does: `read_file` opens whatever path it
gets. Checking a call before running it is the harness's job (see `loop.execute`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


# What the harnesses offer the model. delete_file is deliberately not here.
OFFERED = (
    Tool(
        "get_weather",
        "Current weather in a city.",
        _object(
            {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            ["city"],
        ),
    ),
    Tool(
        "read_file",
        "Read a text file of the project.",
        _object({"path": {"type": "string", "description": "Relative to the project"}}, ["path"]),
    ),
    Tool(
        "search",
        "Search the project's files; returns the matching paths.",
        _object(
            {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10},
            },
            ["query"],
        ),
    ),
)
SCHEMAS = {tool.name: tool.parameters for tool in OFFERED}

WEATHER = {
    "Paris": (18, "sunny"),
    "Tokyo": (22, "cloudy"),
    "北京": (25, "多云"),
    "上海": (22, "小雨"),
}
DEMO_FILES = {
    "README.md": "Travel planning notes.\n",
    "notes/paris.md": "# Paris\nVisit the Louvre on Tuesday; the Musée d'Orsay on Wednesday.\n",
}


class Toolbox:
    """The tool implementations over one project directory (the sandbox)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.ran: list[tuple[str, dict[str, Any]]] = []  # every execution, in order
        self.functions: dict[str, Callable[..., str]] = {
            "get_weather": self.get_weather,
            "read_file": self.read_file,
            "search": self.search,
            "delete_file": self.delete_file,
        }

    @classmethod
    def demo(cls, root: Path) -> Toolbox:
        """A toolbox over `root`, filled with a couple of project files."""
        for name, text in DEMO_FILES.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
        return cls(root)

    def inside(self, path: str) -> bool:
        """Whether `path` stays in the sandbox once `..` and symlinks are resolved."""
        return (self.root / path).resolve().is_relative_to(self.root)

    def get_weather(self, city: str, unit: str = "celsius") -> str:
        self.ran.append(("get_weather", {"city": city, "unit": unit}))
        # Made up but stable for cities it does not know: a fake must never be flaky.
        celsius, sky = WEATHER.get(city, (10 + sum(map(ord, str(city))) % 15, "cloudy"))
        if unit == "fahrenheit":
            return f"{city}: {round(celsius * 9 / 5 + 32)} °F, {sky}"
        return f"{city}: {celsius} °C, {sky}"

    def read_file(self, path: str) -> str:
        self.ran.append(("read_file", {"path": path}))
        file = self.root / path  # no sandbox check here: that is the harness's job
        if not file.is_file():
            raise FileNotFoundError(f"no such file: {path}")
        return file.read_text(encoding="utf-8")

    def search(self, query: str, limit: int = 5) -> str:
        self.ran.append(("search", {"query": query, "limit": limit}))
        words = [w.lower() for w in query.split() if len(w) > 2]
        hits = [
            str(f.relative_to(self.root))
            for f in sorted(self.root.rglob("*"))
            if f.is_file() and any(w in f.read_text(encoding="utf-8").lower() for w in words)
        ]
        return "\n".join(hits[:limit]) or "no results"

    def delete_file(self, path: str) -> str:
        self.ran.append(("delete_file", {"path": path}))
        return f"deleted {path}"  # pretends: the point is that it ran at all
