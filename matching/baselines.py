"""The trivial rankers every model is shown beside.

- original order: the candidates' input order (Wikipedia order on WikiQA);
- word overlap: how many distinct question words occur in the candidate;
- BM25: Okapi BM25 (rank-bm25) with the question's candidates as the collection.
All work on lookup keys (lowercased tokens), the form the models see.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .text import Token

BASELINES = ("original order", "word overlap", "BM25")


def _words(tokens: Sequence[Token]) -> list[str]:
    # Punctuation is not a word to overlap on ("?" would match every question).
    return [t.key for t in tokens if any(ch.isalnum() for ch in t.key)]


def original_order(candidates: Sequence[Sequence[Token]]) -> np.ndarray:
    return -np.arange(len(candidates), dtype=np.float64)


def word_overlap(question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> np.ndarray:
    question_words = set(_words(question))
    return np.array([len(question_words & set(_words(c))) for c in candidates], dtype=np.float64)


def bm25(question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> np.ndarray:
    from rank_bm25 import BM25Okapi

    corpus = [_words(c) or ["\x00"] for c in candidates]  # BM25Okapi divides by document length
    return np.asarray(BM25Okapi(corpus).get_scores(_words(question)), dtype=np.float64)


def baseline_scores(question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> dict[str, np.ndarray]:
    return {"original order": original_order(candidates),
            "word overlap": word_overlap(question, candidates),
            "BM25": bm25(question, candidates)}
