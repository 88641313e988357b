"""`mockllm serve`'s flag help is the `ServerOptions` field's doc (options.py), for every field."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from mockllm import options
from mockllm.cli import _parser
from mockllm.core import disk_cache
from mockllm.options import ServerOptions, field_help

SOURCE = Path(options.__file__)


def test_every_server_option_has_a_flag_whose_help_is_its_doc() -> None:
    serve = _parser()._subparsers._group_actions[0].choices["serve"]
    helps = {a.dest: a.help or "" for a in serve._actions}
    for field in fields(ServerOptions):
        doc = field_help(field.name)
        assert doc, field.name
        assert doc in helps[field.name], field.name


def test_the_docs_are_read_from_the_cache_after_the_first_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parsing options.py with `ast` happens once per version of the file, not per command."""
    monkeypatch.setenv("MOCKLLM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("MOCKLLM_NO_CACHE", raising=False)
    options._field_docs.cache_clear()
    try:
        first = options._field_docs()
        assert first["max_body"] and disk_cache.get("options", SOURCE.read_bytes()) == first
        options._field_docs.cache_clear()
        monkeypatch.setattr(options, "_docs_in", lambda _: pytest.fail("parsed again"))
        assert options._field_docs() == first
    finally:
        options._field_docs.cache_clear()


def test_a_changed_file_is_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOCKLLM_CACHE_DIR", str(tmp_path))
    changed = SOURCE.read_bytes() + b"# another version of the file\n"
    disk_cache.put("options", changed, {"max_body": "stale"})
    options._field_docs.cache_clear()
    try:
        assert options._field_docs()["max_body"] != "stale"
    finally:
        options._field_docs.cache_clear()
