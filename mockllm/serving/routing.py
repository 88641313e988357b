"""Where a model request goes: its route, behind an optional /s/NAME[/SESSION] prefix.
Shared by `mockllm serve` and `mockllm record`, so both read a URL the same way."""

from __future__ import annotations

from collections.abc import Iterable

from mockllm.providers import Adapter


class Routes:
    def __init__(self, adapters: Iterable[Adapter]) -> None:
        self.adapters = list(adapters)
        self.posts: dict[str, Adapter] = {r: a for a in self.adapters for r in a.routes}

    def getter(self, route: str) -> Adapter | None:
        """The adapter that answers GET `route` (e.g. v1/responses/{id}), if any."""
        return next(
            (a for a in self.adapters if a.get_prefix and route.startswith(a.get_prefix)), None
        )

    def split(self, path: str) -> tuple[str | None, str | None, str]:
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
            rest in self.posts
            or rest == "v1/models"
            or rest.startswith("v1/models/")
            or self.getter(rest) is not None
        )
