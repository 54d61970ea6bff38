"""The trivial rankers every model is shown beside.

- original order: the candidates' input order (Wikipedia order on WikiQA);
- word overlap: how many distinct question words occur in the candidate;
- BM25: Okapi BM25 (rank-bm25) with the question's candidates as the collection.
All work on lookup keys (lowercased tokens), the form the models see.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from matching.text.tokens import Token

BASELINES = ("original order", "word overlap", "BM25")


@functools.lru_cache(maxsize=1 << 16)
def _is_word(key: str) -> bool:
    return any(ch.isalnum() for ch in key)


def _words(tokens: Sequence[Token]) -> list[str]:
    # Punctuation is not a word to overlap on ("?" would match every question).
    return [t.key for t in tokens if _is_word(t.key)]


def original_order(candidates: Sequence[Sequence[Token]]) -> np.ndarray:
    return -np.arange(len(candidates), dtype=np.float64)


def _overlap(question_words: list[str], candidate_words: Sequence[list[str]]) -> np.ndarray:
    wanted = set(question_words)
    return np.array([len(wanted & set(words)) for words in candidate_words], dtype=np.float64)


def _bm25(question_words: list[str], candidate_words: Sequence[list[str]]) -> np.ndarray:
    from rank_bm25 import BM25Okapi

    corpus = [words or ["\x00"] for words in candidate_words]  # BM25Okapi divides by document length
    return np.asarray(BM25Okapi(corpus).get_scores(question_words), dtype=np.float64)


def word_overlap(question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> np.ndarray:
    return _overlap(_words(question), [_words(c) for c in candidates])


def bm25(question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> np.ndarray:
    return _bm25(_words(question), [_words(c) for c in candidates])


def _bm25_against(question_words: list[str], collection: Sequence[list[str]], documents: Sequence[list[str]]
                  ) -> np.ndarray:
    """BM25 of each of `documents` for the question, with `collection` as the corpus (its IDF and mean length): for
    a document of the collection, the BM25 baseline's score; for another (a candidate with a word deleted), what
    it would score in the collection's place."""
    from rank_bm25 import BM25Okapi

    corpus = BM25Okapi([words or ["\x00"] for words in collection])
    k1, b = corpus.k1, corpus.b
    scores = np.zeros(len(documents))
    for n, words in enumerate(documents):
        words = words or ["\x00"]
        counts: dict[str, int] = {}
        for word in words:
            counts[word] = counts.get(word, 0) + 1
        norm = k1 * (1 - b + b * len(words) / corpus.avgdl)
        scores[n] = sum((corpus.idf.get(q) or 0.0) * counts.get(q, 0) * (k1 + 1) / (counts.get(q, 0) + norm)
                        for q in question_words)
    return scores


def bm25_within_lists(questions: Sequence[Sequence[Token]], answers: Sequence[Sequence[Token]],
                      collections: Sequence[Sequence[Sequence[Token]]] | None = None) -> np.ndarray:
    """(P,) each pair's BM25 baseline score per question word, with its list as the collection: the candidates of
    `collections[p]` (an edited candidate in its own place, by the tools that delete words), or without
    `collections` every answer given with the same question object (as `evaluation.model_scores` and
    `Matcher.traced` give a question's candidates). The IDF and the mean length are the list's, so a word every
    candidate has counts for little. What the keyword feature "BM25 within the list" reads (`blocks.keywords`); a
    question without words gives 0."""
    values = np.zeros(len(questions), dtype=np.float32)
    groups: dict[tuple[int, int], list[int]] = {}
    for pair, question in enumerate(questions):
        key = id(question), -1 if collections is None else id(collections[pair])
        groups.setdefault(key, []).append(pair)
    for pairs in groups.values():
        question_words = _words(questions[pairs[0]])
        if not question_words:
            continue
        documents = [_words(answers[pair]) for pair in pairs]
        collection = documents if collections is None else [_words(c) for c in collections[pairs[0]]]
        values[pairs] = _bm25_against(question_words, collection, documents) / len(question_words)
    return values


def baseline_scores(question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> dict[str, np.ndarray]:
    """Every baseline's scores; each text's words are picked out once for all of them."""
    question_words, candidate_words = _words(question), [_words(c) for c in candidates]
    return {"original order": original_order(candidates),
            "word overlap": _overlap(question_words, candidate_words),
            "BM25": _bm25(question_words, candidate_words)}
