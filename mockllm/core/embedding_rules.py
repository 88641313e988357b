"""What an embeddings request asks, and how a scenario's `embeddings:` section answers it
(docs/embeddings.md): vectors pinned outright, texts moved next to their named neighbours,
and failures (an HTTP error, vectors of the wrong dimension, an input over the limit).

An embeddings request is never a turn: nothing here counts or advances the scenario, so
the same request always gets the same answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mockllm.core import bounded, embeddings
from mockllm.errors import Problem

# Locates a YAML path in its source, as core/scenario.py's Locate (which imports this).
Locate = Callable[[tuple[str | int, ...]], Problem]


@dataclass(frozen=True, slots=True)
class Asked:
    """One embeddings request, whatever its wire: the texts in order and their tokens (a
    token array's are its ids, shown as text so that equal arrays get equal vectors)."""

    model: str
    texts: tuple[str, ...]
    tokens: tuple[int, ...]
    dims: int  # the dimension asked, else the model's own


@dataclass(frozen=True, slots=True)
class Failure:
    """An HTTP error answered instead (the scenario's `http:` as a turn's fault has it)."""

    status: int
    type: str | None = None
    message: str | None = None
    code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class EmbeddingFault:
    """A scripted failure of an embeddings request whose input matches."""

    how: Literal["equals", "contains", "regex"]  # fires when any input of the request
    value: str  # matches (a plain string: equals)
    http: Failure | None = None
    dimensions: int | None = None  # serve vectors of this size instead of the asked one
    over_limit: bool = False  # the provider's 400 for an input over the token limit

    @property
    def kind(self) -> str:
        if self.http is not None:
            return f"http_{self.http.status}"
        return "wrong_dimensions" if self.dimensions is not None else "over_limit"

    def matches(self, text: str) -> bool:
        if self.how == "equals":
            return text == self.value
        if self.how == "contains":
            return self.value in text
        return bounded.search(self.value, text)

    def describe(self) -> str:
        return f"embeddings fault {self.kind}: an input that {self.how} {self.value!r}"


@dataclass(frozen=True, slots=True)
class EmbeddingRules:
    """A scenario's `embeddings:` section: pinned vectors, neighbours and faults."""

    vectors: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    similar: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # text → neighbours
    faults: tuple[EmbeddingFault, ...] = ()


NO_RULES = EmbeddingRules()


def fault_for(rules: EmbeddingRules, asked: Asked) -> EmbeddingFault | None:
    """The first fault whose match some input meets."""
    for fault in rules.faults:
        if any(fault.matches(t) for t in asked.texts):
            return fault
    return None


def vectors(rules: EmbeddingRules, asked: Asked, dims: int) -> list[tuple[bytes, str]]:
    """Each input's vector in `dims` dimensions, packed as float32 (embeddings.pack), and
    how it was found ('hashed', 'pinned', 'similar'), for the log."""
    return [_vector(rules, text, dims) for text in asked.texts]


def _vector(rules: EmbeddingRules, text: str, dims: int) -> tuple[bytes, str]:
    pinned = rules.vectors.get(text)
    if pinned is not None:  # served as given: its length too (a wrong one is the point)
        return embeddings.pack(list(pinned)), "pinned"
    near = rules.similar.get(text)
    if near is None:
        return embeddings.packed(text, dims), "hashed"
    sums = [0.0] * dims
    for other in near:
        found = _neighbour(rules, other, dims)
        sums = [s + v for s, v in zip(sums, found, strict=True)]
    moved = embeddings.blend(embeddings.normalised(sums), embeddings.vector(text, dims))
    return embeddings.pack(moved), "similar"


def _neighbour(rules: EmbeddingRules, text: str, dims: int) -> list[float]:
    pinned = rules.vectors.get(text)
    if pinned is not None and len(pinned) == dims:
        return embeddings.normalised(list(pinned))
    return embeddings.vector(text, dims)


# --- built from the scenario's `embeddings:` mapping (the JSON Schema has checked it) ------


def build_rules(data: Mapping[str, Any] | None) -> EmbeddingRules | None:
    if not data:
        return None
    pinned = {v["text"]: tuple(float(x) for x in v["vector"]) for v in data.get("vectors", ())}
    similar: dict[str, tuple[str, ...]] = {}
    for text, *near in data.get("similar", ()):
        similar[text] = (*similar.get(text, ()), *near)
    faults = tuple(_fault(f) for f in data.get("faults", ()))
    return EmbeddingRules(pinned, similar, faults)


def _fault(data: Mapping[str, Any]) -> EmbeddingFault:
    match = data["match"]
    how, value = _one({"equals": match} if isinstance(match, str) else match)
    http = data.get("http")
    return EmbeddingFault(
        how,
        value,
        None if http is None else _http(http),
        data.get("dimensions"),
        bool(data.get("over_limit", False)),
    )


def _one(match: Mapping[str, Any]) -> tuple[Any, str]:
    ((how, value),) = match.items()
    return how, value


def _http(data: Mapping[str, Any]) -> Failure:
    headers = tuple((str(k).lower(), str(v)) for k, v in data.get("headers", {}).items())
    status, message = int(data["status"]), data.get("message")
    return Failure(status, data.get("type"), message, data.get("code"), headers)


def check_rules(data: Mapping[str, Any] | None, locate: Locate) -> list[Problem]:
    """What the schema cannot see: a fault that says no failure, a regex that does not
    compile, a pinned vector of zero length or a `similar` text pinned elsewhere."""
    if not data:
        return []
    problems: list[Problem] = []
    for i, fault in enumerate(data.get("faults", ())):
        given = [k for k in ("http", "dimensions", "over_limit") if fault.get(k)]
        if len(given) != 1:
            message = "give exactly one of http: {status: …}, dimensions: N or over_limit: true"
            problems.append(locate(("embeddings", "faults", i)).with_message(message))
        match = fault.get("match")
        if isinstance(match, Mapping) and "regex" in match:
            problems += _regex(match["regex"], locate(("embeddings", "faults", i, "match")))
    problems += _check_pins(data.get("vectors", ()), data.get("similar", ()), locate)
    return problems


def _check_pins(
    pins: Sequence[Mapping[str, Any]], similar: Sequence[Sequence[str]], locate: Locate
) -> list[Problem]:
    problems: list[Problem] = []
    pinned = {p["text"] for p in pins}
    for i, pair in enumerate(similar):
        if pair[0] in pinned:
            message = f"{pair[0]!r} has a pinned vector (vectors:), which wins over similar"
            problems.append(locate(("embeddings", "similar", i, 0)).with_message(message))
    return problems


def _regex(pattern: str, where: Problem) -> list[Problem]:
    problem = bounded.check(pattern)
    return [where.with_message(f"invalid regular expression: {problem}")] if problem else []
