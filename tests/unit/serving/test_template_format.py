"""serving/rendered.py's `_format`: a template's body as a `%` format with each attempt id's
places marked. It was a recursion per id, and a reply of a few hundred parallel calls (two
ids a call on Responses) made its template's render raise RecursionError: a 500."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm.serving.rendered import _format
from tests.support.hypothesis_profiles import examples


def _recursive(body: bytes, plans: list[tuple[bytes, bytes]]) -> bytes:
    """The definition it replaces: cut at the first id, each piece at the next ones."""
    if not plans:
        return body.replace(b"%", b"%%")
    old, key = plans[0]
    return (b"%(" + key + b")b").join(_recursive(p, plans[1:]) for p in body.split(old))


@given(
    st.text(alphabet="ab%_c", max_size=40).map(str.encode),
    st.lists(st.text(alphabet="abc_", min_size=1, max_size=4).map(str.encode), max_size=5),
)
@settings(max_examples=examples(300))
def test_it_marks_what_the_recursive_definition_marks(body: bytes, ids: list[bytes]) -> None:
    plans = [(old, b"%d" % i) for i, old in enumerate(dict.fromkeys(ids))]
    assert _format(body, plans) == _recursive(body, plans)


def test_a_thousand_ids_are_marked_without_recursion() -> None:
    ids = [b"call_%08d" % i for i in range(1000)]
    plans = [(old, b"%d" % i) for i, old in enumerate(ids)]
    body = b"%".join(b'{"id":"' + i + b'"}' for i in ids)
    made = _format(body, plans)
    assert made % {b"%d" % i: b"X" for i in range(1000)} == b"%".join([b'{"id":"X"}'] * 1000)
