"""Embedding vectors that keep their neighbours, with no model (docs/embeddings.md).

A text's vector is a hashed bag of its features, signed and normalised: word unigrams,
word bigrams and the character trigrams of each word, each weighted by its sublinear term
frequency (1 + ln tf). Two texts that share words or phrases share features, so their
cosine is their overlap, weighted; two unrelated texts share none, so theirs is near 0.
The similarity is lexical, never semantic: "car" and "automobile" are strangers.

Deterministic across processes and machines: features are hashed with BLAKE2b (Python's
own `hash()` is salted per process). Vectors are float32, as the providers' are: the
`float` and `base64` encodings of one vector are the same numbers.
"""

from __future__ import annotations

import itertools
import math
import re
import struct
import unicodedata
from collections import Counter
from functools import lru_cache
from hashlib import blake2b

from mockllm.core.cache import Lru

# The dimension each model answers with when none is asked (the providers' model pages;
# docs/embeddings.md lists them with their sources). Unknown models get DEFAULT_DIMENSIONS.
MODEL_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "text-embedding-004": 768,
    "text-embedding-005": 768,
    "text-multilingual-embedding-002": 768,
    "embedding-001": 768,
    "gemini-embedding-001": 3072,
    # Ollama's (ollama.com/library, each model's page)
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "bge-m3": 1024,
    "snowflake-arctic-embed": 1024,
    "embeddinggemma": 768,
}
DEFAULT_DIMENSIONS = 1536
MAX_DIMENSIONS = 4096  # the largest vector served, asked or not (a bound on the work)

# Weights of the three feature kinds: a shared phrase counts its bigram on top of its two
# words, a shared word more than shared spelling (which still joins "refund" and "refunds").
# Tuned on bench/embeddings_similarity.py's corpus (heavier bigrams drowned short queries).
_UNIGRAM, _BIGRAM, _TRIGRAM = 1.0, 0.6, 0.7
# Words so common that sharing them says nothing: weighted down, not dropped, so a text
# made only of them still has a vector of its own.
_STOPWORD_TEXT = (
    "a an and are as at be by do does for from has have how i in is it its my of on or our "
    "so that the their there this to was we were what when where which who why will with "
    "you your"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_STOPWORD_WEIGHT = 0.15
_WORD = re.compile(r"\w+")

# (dims, text) → the packed vector: a corpus is embedded again on every test run. Only
# texts of up to _CACHED_CHARS are kept, so the cache stays under about 10 MB.
_cache: Lru[bytes] = Lru(512)
_CACHED_CHARS = 4096
_CACHED_FEATURE = 64  # the longest feature (or word) whose hash (or trigrams) is kept


def dimensions_of(model: str) -> int:
    """The model's usual dimension: by its name, with any `models/` prefix or suffix."""
    name = model.rsplit("/", 1)[-1].split(":", 1)[0]  # models/x, x:latest
    if name in MODEL_DIMENSIONS:
        return MODEL_DIMENSIONS[name]
    found = [d for known, d in MODEL_DIMENSIONS.items() if name.startswith(known)]
    return found[0] if found else DEFAULT_DIMENSIONS


def words(text: str) -> list[str]:
    """The text's words, case- and width-folded (NFKC), as the features see them."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def features(text: str) -> dict[str, float]:
    """Each feature of `text` and its weight, before hashing."""
    found = words(text)
    out: dict[str, float] = {}
    for word, tf in Counter(found).items():
        stop = _STOPWORD_WEIGHT if word in _STOPWORDS else 1.0
        out["w:" + word] = _UNIGRAM * stop * (1 + math.log(tf))
        grams = _grams(word) if len(word) <= _CACHED_FEATURE else _grams.__wrapped__(word)
        for gram, share in grams.items():  # spelling: the word's share of each
            key = "c:" + gram
            out[key] = out.get(key, 0.0) + _TRIGRAM * stop * tf * share
    pairs = Counter(itertools.pairwise(found))
    for (a, b), tf in pairs.items():
        stop = _STOPWORD_WEIGHT if a in _STOPWORDS and b in _STOPWORDS else 1.0
        out[f"b:{a} {b}"] = _BIGRAM * stop * (1 + math.log(tf))
    return out


@lru_cache(maxsize=16384)
def _grams(word: str) -> dict[str, float]:
    """The word's character trigrams, with its boundaries (`<refund>` → `<re`, …, `nd>`),
    each with its count over the square root of how many distinct ones there are."""
    padded = f"<{word}>"
    grams = Counter(padded[i : i + 3] for i in range(len(padded) - 2))
    root = math.sqrt(len(grams))
    return {gram: n / root for gram, n in grams.items()}


def packed(text: str, dims: int) -> bytes:
    """The unit vector of `text` in `dims` dimensions, float32 little-endian (the bytes
    OpenAI's `base64` encoding carries)."""
    key = (dims, text)
    hit = _cache.get(key) if len(text) <= _CACHED_CHARS else None
    if hit is None:
        hit = pack(_dense(text, dims))
        if len(text) <= _CACHED_CHARS:
            _cache.put(key, hit)
    return hit


def vector(text: str, dims: int) -> list[float]:
    """The unit vector of `text` in `dims` dimensions, as float32 values."""
    return unpack(packed(text, dims))


def _dense(text: str, dims: int) -> list[float]:
    sparse: dict[int, float] = {}  # a text has far fewer features than dimensions
    found = features(text) or {"empty:" + text: 1.0}  # no word: a vector of its own still
    for feature, weight in found.items():
        slot = _slot(feature)
        at = (slot >> 1) % dims
        sparse[at] = sparse.get(at, 0.0) + (weight if slot & 1 else -weight)
    out = [0.0] * dims
    norm = math.hypot(*sparse.values())
    if norm == 0.0:  # every feature cancelled out (dims 1 with a cancelling pair)
        out[0] = 1.0
        return out
    for at, value in sparse.items():
        out[at] = value / norm
    return out


def _slot(feature: str) -> int:
    """The feature's 64-bit BLAKE2b: its dimension (the high 63 bits) and sign (bit 0).
    Words and trigrams recur across texts, so most are hashed once; only short ones are
    kept, so that a hostile text of huge words cannot fill memory."""
    return _known_slot(feature) if len(feature) <= _CACHED_FEATURE else _hashed(feature)


@lru_cache(maxsize=65536)
def _known_slot(feature: str) -> int:
    return _hashed(feature)


def _hashed(feature: str) -> int:
    digest = blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def normalised(values: list[float]) -> list[float]:
    norm = math.hypot(*values)
    if norm == 0.0:  # every feature cancelled out
        return [1.0] + [0.0] * (len(values) - 1)
    return [v / norm for v in values]


def pack(values: list[float]) -> bytes:
    """float32 little-endian: the bytes OpenAI's `base64` encoding carries."""
    return struct.pack(f"<{len(values)}f", *values)


def unpack(data: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(data) // 4}f", data))


def blend(near: list[float], own: list[float]) -> list[float]:
    """A vector beside `near`, still told apart from it: how a scenario's `similar` pairs
    move a text next to the ones it names (cosine to `near` about 0.99)."""
    return normalised([n + 0.1 * o for n, o in zip(near, own, strict=True)])


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def tokens(text: str) -> int:
    """An estimate of the text's tokens, for `usage` and the input limit: about four
    characters a token, as the turns' usage counts (core/engine.py)."""
    return math.ceil(len(text) / 4)
