"""YAML in the project's own style: block style, indented sequences, multi-line text as
literal blocks, quoting left to PyYAML (so every value reads back as written)."""

from __future__ import annotations

from typing import Any

import yaml

_UNICODE_BREAKS = "\x85\u2028\u2029"  # line breaks to YAML, ordinary characters to JSON
FOLD_AT = 80  # longer one-line texts are folded over several lines


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)  # "key:\n  - item", as the bundled files are


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    """Lines as a literal block, a long line folded; PyYAML quotes instead where a block
    could not say the text exactly (trailing spaces, control characters)."""
    style = None
    if any(c in value for c in _UNICODE_BREAKS):
        style = '"'  # the one style that escapes them: any other would turn them into \n
    elif "\n" in value.strip("\n"):
        style = "|"
    elif len(value) > FOLD_AT and " " in value:
        style = ">"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def block(value: Any, indent: int = 0) -> str:
    """`value` as block-style YAML lines, each indented by `indent` spaces."""
    text = yaml.dump(
        value,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def comment(text: str, indent: int = 0) -> str:
    """`text` as comment lines (one per line of text)."""
    pad = " " * indent
    shown = "".join(c if c.isprintable() or c == "\n" else "\ufffd" for c in text)
    return "".join(f"{pad}# {line}".rstrip() + "\n" for line in shown.split("\n"))
