"""disk_cache names an entry by BLAKE2b of the salt (version, scenario schema) and the
bytes: hashing the salt once per process must not change a name, or every cache written
before would be missed."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm.core import disk_cache
from mockllm.core.encoding import digest


@given(st.binary(max_size=300), st.sampled_from(["scenarios", "schemas", "options"]))
def test_an_entry_is_named_by_the_salt_and_its_bytes(raw: bytes, namespace: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MOCKLLM_CACHE_DIR", "/nowhere")
        patch.delenv("MOCKLLM_NO_CACHE", raising=False)
        found = disk_cache._entry(namespace, raw)
    name = digest(disk_cache._salt() + raw, 20).hex()
    assert found == Path("/nowhere") / namespace / f"{name}.json"


def test_two_lookups_do_not_share_a_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOCKLLM_CACHE_DIR", str(tmp_path))
    disk_cache.put("schemas", b"a", {"v": 1})
    disk_cache.put("schemas", b"b", {"v": 2})
    assert (disk_cache.get("schemas", b"a"), disk_cache.get("schemas", b"b")) == (
        {"v": 1},
        {"v": 2},
    )
