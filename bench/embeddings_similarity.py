"""How well mockllm's embeddings keep their neighbours, on a small corpus: the mean cosine
of related pairs (texts that share words or phrases) against unrelated ones, and whether a
query ranks its own document first. The figures are quoted in docs/embeddings.md.

    python -m bench.embeddings_similarity [DIMS]
"""

from __future__ import annotations

import itertools
import statistics
import sys

from mockllm.core.embeddings import cosine, vector

# Each topic: a document and a query a user might send for it (sharing some words only).
TOPICS = [
    (
        "Refunds are issued within 30 days of purchase to the original payment method.",
        "how many days until my refund is issued",
    ),
    (
        "Reset your password from the account settings page using the emailed reset link.",
        "I forgot my password, how do I reset it",
    ),
    (
        "Our warehouse ships orders Monday to Friday; express shipping arrives next day.",
        "does express shipping arrive the next day",
    ),
    (
        "The API rate limit is 600 requests per minute per key; exceeding it returns 429.",
        "what is the rate limit per minute for API requests",
    ),
    (
        "Invoices are emailed monthly and can be downloaded as PDF from the billing page.",
        "where can I download my invoices as PDF",
    ),
    (
        "Two-factor authentication can be enabled with an authenticator app or SMS codes.",
        "enable two-factor authentication with an app",
    ),
    (
        "The cafeteria serves vegetarian lunch options every weekday from noon.",
        "vegetarian lunch in the cafeteria",
    ),
    (
        "Photosynthesis converts sunlight, water and carbon dioxide into glucose and oxygen.",
        "what does photosynthesis convert sunlight into",
    ),
]


def measure(dims: int) -> dict[str, float]:
    docs = [vector(d, dims) for d, _ in TOPICS]
    queries = [vector(q, dims) for _, q in TOPICS]
    related = [cosine(q, d) for q, d in zip(queries, docs, strict=True)]
    unrelated = [
        cosine(queries[i], docs[j]) for i, j in itertools.permutations(range(len(TOPICS)), 2)
    ]
    doc_pairs = [cosine(a, b) for a, b in itertools.combinations(docs, 2)]
    top = sum(
        max(range(len(docs)), key=lambda j, q=q: cosine(q, docs[j])) == i  # type: ignore[misc]
        for i, q in enumerate(queries)
    )
    return {
        "dims": dims,
        "related_mean": statistics.fmean(related),
        "related_min": min(related),
        "unrelated_mean": statistics.fmean(unrelated),
        "unrelated_max": max(unrelated),
        "unrelated_docs_mean": statistics.fmean(doc_pairs),
        "ranked_first": top / len(TOPICS),
    }


def main() -> None:
    for dims in [int(a) for a in sys.argv[1:]] or [1536, 3072, 768, 256, 64]:
        m = measure(dims)
        print(
            f"dims {dims:>4}: related mean {m['related_mean']:.3f} (min {m['related_min']:.3f})"
            f"  unrelated mean {m['unrelated_mean']:+.3f} (max {m['unrelated_max']:.3f})"
            f"  unrelated docs {m['unrelated_docs_mean']:+.3f}"
            f"  query ranks its document first {m['ranked_first']:.0%}"
        )


if __name__ == "__main__":
    main()
