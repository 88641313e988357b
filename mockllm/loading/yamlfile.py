"""Read a YAML document with the position of every node, for errors that say where.

Safe loading only (no tags that construct objects), with YAML 1.2 scalars: booleans are
only true/false (so `off`, `no`, `yes` stay strings) and there are no timestamps (a date
stays the string it was written as, and can go into a JSON argument). Imported only when a
scenario file is actually parsed: a server restarted on unchanged files never needs it.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import yaml

from mockllm.errors import Problem, ScenarioError
from mockllm.loading.locations import Marks, YamlPath, dotted

_DROPPED = ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader with YAML 1.2 booleans and no timestamps."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _DROPPED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def parse(text: str, source: str) -> tuple[Any, Marks, Marks]:
    """(data, value marks, key marks); a syntax error or duplicate key is a ScenarioError."""
    try:
        return _parse(text, source)
    except yaml.YAMLError as e:
        raise ScenarioError([_yaml_problem(e, source, text)]) from None


def _parse(text: str, source: str) -> tuple[Any, Marks, Marks]:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise ScenarioError(
                [Problem(source, "", "empty file: a scenario needs at least 'turns'")]
            )
        walk = _Walk(source)
        try:
            walk.node(node, ())
        except _TooManyAliases:
            raise ScenarioError([_alias_problem(text, source)]) from None
        except RecursionError:
            raise ScenarioError([Problem(source, "", "nested too deeply to read")]) from None
        marks, keys, duplicates = walk.marks, walk.keys, walk.duplicates
        if duplicates:
            raise ScenarioError(duplicates)
        return loader.construct_document(node), marks, keys
    finally:
        loader.dispose()


_INT_DIGITS = sys.get_int_max_str_digits() or 4300  # 0: no limit set; keep Python's default

ALIAS_BUDGET = 10_000
"""Nodes that aliases may add to a document: a few hundred bytes of nested aliases ("billion
laughs") would otherwise expand to millions of nodes for every reader of the tree."""


class _TooManyAliases(Exception):
    pass


class _Walk:
    """Marks every path with its line and column, finds duplicate keys, and counts the nodes
    reached through aliases, stopping at ALIAS_BUDGET before the tree is ever expanded."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.marks: Marks = {}
        self.keys: Marks = {}
        self.duplicates: list[Problem] = []
        self.seen: set[int] = set()
        self.expanded = 0

    def node(self, node: yaml.Node, path: YamlPath, aliased: bool = False) -> None:
        if id(node) in self.seen and isinstance(node, yaml.CollectionNode):
            aliased = True  # the composer hands an alias over as the anchored node itself
        self.seen.add(id(node))
        if aliased:
            self.expanded += 1
            if self.expanded > ALIAS_BUDGET:
                raise _TooManyAliases
        self.marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            names: set[str] = set()
            for key_node, value_node in node.value:
                key = key_node.value
                if key == "<<":  # a merge key: its entries carry their own marks
                    continue
                line, col = key_node.start_mark.line + 1, key_node.start_mark.column + 1
                if key in names:
                    where = dotted((*path, key))
                    self.duplicates.append(Problem(self.source, where, "duplicate key", line, col))
                names.add(key)
                self.keys[(*path, key)] = (line, col)
                self.node(value_node, (*path, key), aliased)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self.node(item, (*path, i), aliased)
        elif node.tag == "tag:yaml.org,2002:int" and len(node.value) > _INT_DIGITS:
            # Python converts no longer integer: a ValueError at construction, not a problem
            line, col = self.marks[path]
            message = f"an integer of {len(node.value)} characters: more than {_INT_DIGITS} digits"
            self.duplicates.append(Problem(self.source, dotted(path), message, line, col))


def _alias_problem(text: str, source: str) -> Problem:
    """Where the expansion comes from: the first alias of a list or mapping."""
    collections: set[str] = set()
    for event in yaml.parse(text, Loader=_Loader):
        anchor = getattr(event, "anchor", None)
        if isinstance(event, yaml.CollectionStartEvent) and anchor:
            collections.add(anchor)
        mark = event.start_mark
        if isinstance(event, yaml.AliasEvent) and event.anchor in collections and mark:
            message = (
                f"aliases expand this document past {ALIAS_BUDGET} nodes (the limit); "
                f"the first alias of a list or mapping, *{event.anchor}, is here"
            )
            return Problem(source, "", message, mark.line + 1, mark.column + 1)
    return Problem(source, "", f"aliases expand this document past {ALIAS_BUDGET} nodes")


def _yaml_problem(e: yaml.YAMLError, source: str, text: str) -> Problem:
    mark = getattr(e, "problem_mark", None)
    what = getattr(e, "problem", None) or str(e)
    context = getattr(e, "context", None)
    char = text[mark.index] if mark is not None and mark.index < len(text) else ""
    plain = plain_words(what, context, char)
    said = what + (f" ({context})" if context else "")
    message = (
        f"invalid YAML: {plain} (the parser said: {said})" if plain else f"invalid YAML: {said}"
    )
    if mark is None:
        return Problem(source, "", message)
    return Problem(source, "", message, mark.line + 1, mark.column + 1)


# PyYAML's parser messages (pure-Python and libyaml wordings) in plain words: what to fix.
_PLAIN = (
    (
        r"expected ',' or '\}'|did not find expected ',' or '\}'",
        "a `{...}` mapping is not closed: a `}` (or a `,` between its entries) is missing",
    ),
    (
        r"expected ',' or '\]'|did not find expected ',' or '\]'",
        "a `[...]` list is not closed: a `]` (or a `,` between its items) is missing",
    ),
    (
        r"mapping values are not allowed",
        "a `key:` where a value was expected: put each key on its own line, indent it "
        "consistently, or quote a text that contains ': '",
    ),
    (
        r"could not find expected ':'",
        "a line that is neither `key: value` nor a list item `- …`: a ':' is missing, or a "
        "text runs over several lines without quotes",
    ),
    (
        r"expected <block end>|did not find expected key|did not find expected '-' indicator",
        "this line is not lined up with the lines above it: the keys of one mapping, and the "
        "`-` of one list, start in the same column",
    ),
    (r"quoted scalar", "a quoted text is not closed: its closing quote is missing"),
    (r"undefined alias", "`*name` refers to an anchor `&name` that is not defined above it"),
)


def plain_words(problem: str, context: str | None, char: str) -> str | None:
    """PyYAML's `problem` (and `context`) in plain words, or None when there is no better."""
    if "cannot start any token" in problem:
        if char == "\t":
            return "a tab character: YAML indents with spaces only"
        return f"{char!r} cannot start a value here: quote the text"
    said = f"{problem} {context or ''}"
    return next((plain for pattern, plain in _PLAIN if re.search(pattern, said)), None)
