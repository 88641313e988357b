"""state/redis_line.py packs commands itself when hiredis is missing: the same bytes as
hiredis's C packer (what the `redis` extra uses), for every kind of argument it is given."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm.state.redis_line import packed

hiredis = pytest.importorskip("hiredis")

argument = st.one_of(st.text(), st.binary(), st.integers(min_value=-(2**63), max_value=2**63 - 1))


@given(st.lists(argument, min_size=1, max_size=12))
def test_packed_is_what_hiredis_packs(args: list[str | bytes | int]) -> None:
    assert packed(tuple(args)) == hiredis.pack_command(tuple(args))


def test_a_command_is_an_array_of_bulk_strings() -> None:
    assert packed(("EVALSHA", "ab", 0, b"\x00")) == (
        b"*4\r\n$7\r\nEVALSHA\r\n$2\r\nab\r\n$1\r\n0\r\n$1\r\n\x00\r\n"
    )
