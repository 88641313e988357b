"""The vectors (core/embeddings.py) and a scenario's `embeddings:` rules
(core/embedding_rules.py), in-process: deterministic across processes, unit length, the
model's dimension, lexical neighbours kept; pins, neighbours and faults as written."""

from __future__ import annotations

import math

import pytest

from bench.embeddings_similarity import measure
from mockllm.core import embeddings
from mockllm.core.embedding_rules import Asked, fault_for, vectors
from mockllm.errors import ScenarioError
from mockllm.loading.loader import load_text


def test_vectors_are_unit_float32_of_the_asked_dimension() -> None:
    for dims in (1, 7, 256, 1536, 3072):
        v = embeddings.vector("The quick brown fox", dims)
        assert len(v) == dims
        assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, abs_tol=1e-5)
    assert embeddings.vector("!!!", 16) != embeddings.vector("???", 16)  # no words: still own


@pytest.mark.parametrize(
    ("model", "dims"),
    [
        ("text-embedding-3-small", 1536),
        ("text-embedding-3-large", 3072),
        ("text-embedding-ada-002", 1536),
        ("models/text-embedding-004", 768),
        ("gemini-embedding-001", 3072),
        ("some-local-model", 1536),
    ],
)
def test_each_model_has_its_usual_dimension(model: str, dims: int) -> None:
    assert embeddings.dimensions_of(model) == dims


def test_the_same_text_gives_the_same_bytes_on_every_machine() -> None:
    """BLAKE2b, not hash(): these bytes were computed once and never change (a process with
    another hash seed computes them too: tests/e2e/wires/test_embeddings.py)."""
    assert embeddings.packed("refund policy", 8).hex() == GOLDEN


GOLDEN = "ded120bf5df90ebe5df90ebe5df90ebe668812bf5eaab2be5df90e3e5df98ebe"


def test_shared_words_are_closer_than_unrelated_texts() -> None:
    near = embeddings.cosine(
        embeddings.vector("refund policy for damaged items", 1536),
        embeddings.vector("what is the refund policy", 1536),
    )
    far = embeddings.cosine(
        embeddings.vector("refund policy for damaged items", 1536),
        embeddings.vector("photosynthesis in green plants", 1536),
    )
    assert near > 0.3 > 0.1 > abs(far)
    # Spelling joins the forms of a word; the meaning does not join synonyms (lexical only)
    plural = embeddings.cosine(embeddings.vector("refunds", 256), embeddings.vector("refund", 256))
    synonym = embeddings.cosine(embeddings.vector("car", 256), embeddings.vector("automobile", 256))
    assert plural > 0.2 and abs(synonym) < 0.1


def test_the_benchmark_corpus_keeps_its_neighbours() -> None:
    """The figures docs/embeddings.md quotes (bench/embeddings_similarity.py)."""
    m = measure(1536)
    assert m["ranked_first"] == 1.0
    assert m["related_mean"] > 0.35 and abs(m["unrelated_mean"]) < 0.05


SCENARIO = """
name: rules
turns:
  - reply: {text: hi}
embeddings:
  vectors:
    - {text: pinned, vector: [3, 4]}
  similar:
    - [money back, refunds are issued within 30 days, our refund policy]
  faults:
    - {match: {contains: slow}, http: {status: 429}}
    - {match: {regex: "^big"}, dimensions: 5}
    - {match: huge, over_limit: true}
"""


def test_rules_pin_move_and_fail() -> None:
    rules = load_text(SCENARIO).embeddings
    assert rules is not None
    asked = Asked("m", ("pinned", "money back", "other"), (1, 1, 1), 8)
    (pinned, how), (packed, how2), (_, how3) = vectors(rules, asked, 8)
    assert (embeddings.unpack(pinned), how, how2, how3) == (
        [3.0, 4.0],
        "pinned",
        "similar",
        "hashed",
    )
    moved = embeddings.unpack(packed)
    mean = embeddings.normalised(
        [
            a + b
            for a, b in zip(
                embeddings.vector("refunds are issued within 30 days", 8),
                embeddings.vector("our refund policy", 8),
                strict=True,
            )
        ]
    )
    assert embeddings.cosine(moved, mean) > 0.99
    for text, kind in (
        ("so slow", "http_429"),
        ("big one", "wrong_dimensions"),
        ("huge", "over_limit"),
    ):
        fault = fault_for(rules, Asked("m", ("fine", text), (1, 1), 8))
        assert fault is not None and fault.kind == kind
    assert fault_for(rules, Asked("m", ("not big", "huge!"), (1, 1), 8)) is None


@pytest.mark.parametrize(
    ("section", "says"),
    [
        ("faults: [{match: x}]", "give exactly one of"),
        ("faults: [{match: x, dimensions: 3, over_limit: true}]", "give exactly one of"),
        ("faults: [{match: {regex: '(x'}, dimensions: 3}]", "invalid regular expression"),
        ("vectors: [{text: a, vector: [1]}]\n  similar: [[a, b]]", "pinned vector"),
        ("vectors: [{text: a, vector: []}]", "needs at least 1 item"),
        ("similar: [[alone]]", "needs at least 2 item"),
        ("faults: [{match: x, dimensions: 0}]", "less than the minimum"),
        ("colours: red", "unknown key 'colours'"),
    ],
)
def test_a_bad_section_names_file_line_and_key(section: str, says: str) -> None:
    text = f"name: bad\nturns:\n  - reply: {{text: hi}}\nembeddings:\n  {section}\n"
    with pytest.raises(ScenarioError) as raised:
        load_text(text, "bad.yaml")
    message = str(raised.value)
    assert says in message and "bad.yaml:" in message and "embeddings" in message, message
