"""`mockllm serve`'s flag help is the `ServerOptions` field's doc (options.py), for every field."""

from __future__ import annotations

from dataclasses import fields

from mockllm.cli import _parser
from mockllm.options import ServerOptions, field_help


def test_every_server_option_has_a_flag_whose_help_is_its_doc() -> None:
    serve = _parser()._subparsers._group_actions[0].choices["serve"]
    helps = {a.dest: a.help or "" for a in serve._actions}
    for field in fields(ServerOptions):
        doc = field_help(field.name)
        assert doc, field.name
        assert doc in helps[field.name], field.name
