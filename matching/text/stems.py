"""Word stems: what the keyword term's lexical features may match on instead of the whole lookup key.

A question and its answer often name the same thing in two forms ("When was the club founded?", "... the
founding of the club"; "Who invented ...", "... invents"). Matched on lookup keys, word overlap and BM25 count
neither; matched on Snowball (Porter 2) stems, both. On the project's choosing sets every lexical baseline ranks
better on stems (`python bench/stems.py`), which is why a keyword term may read them (`ModelParams.keyword_stems`).

A stem is only ever compared with another stem: its id is `embeddings.key_id` of the stem's string as of a word
the vectors do not know (from the string alone, with its number and date kind), so it needs no word vectors and
two ids are equal exactly when the stems are.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence

import numpy as np
import snowballstemmer
from snowballstemmer.basestemmer import BaseStemmer

from matching.text.embeddings import key_id
from matching.text.tokens import Token

_STEMMERS = threading.local()


def _stemmer() -> BaseStemmer:
    """This thread's stemmer. A Snowball stemmer keeps the word it is working on in its own fields, so one shared by
    threads (models scored side by side, `evaluation.dataset.evaluate`) mixes their words: 14 of 18,252 stems came
    out wrong, and some calls raised IndexError, with four threads on one stemmer."""
    stemmer = getattr(_STEMMERS, "stemmer", None)
    if stemmer is None:
        stemmer = _STEMMERS.stemmer = snowballstemmer.stemmer("english")
    return stemmer


@functools.lru_cache(maxsize=1 << 17)
def stem(key: str) -> str:
    """The Snowball English stem of a lookup key ("founded", "founding" -> "found"); a key with no letter as it is
    ("1995", "?"). Cached: a few thousand keys make up most text."""
    return _stemmer().stemWord(key) if any(ch.isalpha() for ch in key) else key


@functools.lru_cache(maxsize=1 << 17)
def stem_id(key: str) -> int:
    """The id of a lookup key's stem (`key_id` of the stem, as of an unknown word)."""
    return key_id(stem(key), -1)


def stem_ids(texts: Sequence[Sequence[Token]], max_len: int,
             known: dict[tuple[int, int], np.ndarray] | None = None) -> list[np.ndarray]:
    """Each text's stem ids, cut to `max_len` words as the batches cut it. A text given several times (one
    question for all its candidates) is stemmed once; with `known` ((id(text), max_len) -> its ids, kept by a
    caller that meets the same text objects again), once for as long as the caller keeps it."""
    done: dict[tuple[int, int], np.ndarray] = {} if known is None else known
    found = []
    for text in texts:
        ids = done.get((id(text), max_len))
        if ids is None:
            ids = done[(id(text), max_len)] = np.fromiter((stem_id(token.key) for token in text[:max_len]), np.int64)
        found.append(ids)
    return found
