"""core/compiled.py: a dataclass made inside `remembered()` is the one `@dataclass` makes,
whether its methods' code is compiled there or read back from the file, and a file that
cannot be trusted or read is never used."""

from __future__ import annotations

import dataclasses
import marshal
import os
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockllm.core import compiled

SHAPES: list[dict[str, Any]] = [
    {},
    {"frozen": True},
    {"slots": True, "unsafe_hash": True},
    {"order": True, "kw_only": True},
]


def make(options: dict[str, Any]) -> type:
    """A dataclass with a default, a factory and a `ClassVar`-free annotation per field."""

    class Thing:
        name: str
        count: int = 0
        tags: list[str] = dataclasses.field(default_factory=list)

    return dataclasses.dataclass(**options)(Thing)


def fingerprint(cls: type) -> list[object]:
    """What the generated methods are: code, annotations, defaults."""
    found: list[object] = []
    for name, value in sorted(vars(cls).items()):
        if isinstance(value, types.FunctionType) and value.__code__.co_filename == "<string>":
            code = value.__code__
            made = (code.co_code, code.co_consts, code.co_names, code.co_varnames, code.co_flags)
            given = (value.__qualname__, repr(value.__annotations__), value.__defaults__)
            found.append((name, made, given, value.__kwdefaults__))
    return found


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache folder and a process that has read no file yet."""
    monkeypatch.setenv("MOCKLLM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("MOCKLLM_NO_CACHE", raising=False)
    monkeypatch.setattr(compiled, "_known", None)
    monkeypatch.setattr(compiled, "_new", {})
    yield tmp_path
    assert not hasattr(dataclasses, "exec")


def the_file(cache: Path) -> Path:
    (found,) = (cache / "code").glob("*.marshal")
    return found


def start_again() -> None:
    """What a new process does: read the file at its first `remembered()`."""
    compiled._known = None


@pytest.mark.parametrize("options", SHAPES, ids=str)
def test_compiled_then_read_back_the_classes_are_the_same(
    cache: Path, options: dict[str, Any]
) -> None:
    plain = fingerprint(make(options))
    with compiled.remembered():
        first = fingerprint(make(options))
        assert compiled._new, "compiled in this process"
    start_again()
    with compiled.remembered():
        again = fingerprint(make(options))
        assert not compiled._new, "read back from the file, nothing compiled"
    assert plain == first == again
    assert plain  # the class has generated methods to compare


def test_a_made_class_still_works(cache: Path) -> None:
    with compiled.remembered():
        make({})
    start_again()
    with compiled.remembered():
        cls = make({"frozen": True})
    thing = cls(name="a", count=2)
    assert thing == cls("a", 2) != cls("a", 3)
    assert repr(thing) == "make.<locals>.Thing(name='a', count=2, tags=[])"
    with pytest.raises(dataclasses.FrozenInstanceError):
        thing.count = 3


def test_the_hook_is_gone_after_an_error_and_nested_use(cache: Path) -> None:
    with pytest.raises(RuntimeError), compiled.remembered():
        with compiled.remembered():
            make({})
        assert dataclasses.exec is compiled._exec  # type: ignore[attr-defined]
        raise RuntimeError
    assert not hasattr(dataclasses, "exec")
    assert the_file(cache).stat().st_size > 0  # what it compiled was kept all the same


def test_an_unchanged_start_does_not_write(cache: Path) -> None:
    with compiled.remembered():
        make({})
    before = the_file(cache).stat()
    start_again()
    with compiled.remembered():
        make({})
    after = the_file(cache).stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="no file owners here")
def test_a_file_others_may_write_is_not_read(cache: Path) -> None:
    with compiled.remembered():
        make({})
    the_file(cache).chmod(0o666)
    start_again()
    with compiled.remembered():
        make({})
        assert compiled._new, "compiled again: the file was not trusted"
    assert the_file(cache).stat().st_mode & 0o777 == 0o600  # and rewritten as this user's


def test_the_file_keeps_what_was_used_when_full(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with compiled.remembered():
        make({"frozen": True})
    monkeypatch.setattr(compiled, "MAX_ENTRIES", 1)
    start_again()
    with compiled.remembered():
        make({"order": True})
    kept = marshal.loads(the_file(cache).read_bytes())
    assert any("def __lt__" in text for text in kept)
    assert not any("FrozenInstanceError" in text for text in kept), "the older texts went"


def test_the_cache_turned_off_writes_nothing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOCKLLM_NO_CACHE", "1")
    with compiled.remembered():
        cls = make({})
    assert fingerprint(cls) == fingerprint(make({}))
    assert not (cache / "code").exists()


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.binary(max_size=200),
        st.builds(marshal.dumps, st.dictionaries(st.text(max_size=20), st.integers(), max_size=3)),
        st.builds(marshal.dumps, st.lists(st.integers(), max_size=3)),
    )
)
def test_any_file_content_is_read_or_ignored_never_fails(cache: Path, content: bytes) -> None:
    path = cache / "code" / compiled._path().name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(content)
    path.chmod(0o600)
    start_again()
    with compiled.remembered():
        cls = make({"slots": True, "unsafe_hash": True})
    assert fingerprint(cls) == fingerprint(make({"slots": True, "unsafe_hash": True}))
    assert hash(cls("a", 1, ())) == hash(cls("a", 1, ()))
