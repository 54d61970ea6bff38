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


def overlap_words(tokens: Sequence[Token]) -> list[str]:
    """The keys the lexical baselines count, in order: punctuation is not a word to overlap on ("?" would match
    every question)."""
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
    return _overlap(overlap_words(question), [overlap_words(c) for c in candidates])


def bm25(question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> np.ndarray:
    return _bm25(overlap_words(question), [overlap_words(c) for c in candidates])


def bm25_within_lists(questions: Sequence[Sequence[Token]], answers: Sequence[Sequence[Token]],
                      collections: Sequence[Sequence[Sequence[Token]]] | None = None) -> np.ndarray:
    """(P,) each pair's BM25 baseline score per question word, with its list as the collection: the candidates of
    `collections[p]`, which hold the answer itself (an edited candidate in its own place, by the tools that delete
    words), or without `collections` every answer given with the same question object (as `evaluation.model_scores`
    and `Matcher.traced` give a question's candidates). The IDF and the mean length are the list's, so a word every
    candidate has counts for little. What the keyword feature "BM25 within the list" reads (`blocks.keywords`); a
    question without words gives 0."""
    values = np.zeros(len(questions), dtype=np.float32)
    groups: dict[tuple[int, int], list[int]] = {}
    for pair, question in enumerate(questions):
        key = id(question), -1 if collections is None else id(collections[pair])
        groups.setdefault(key, []).append(pair)
    for pairs in groups.values():
        question_words = overlap_words(questions[pairs[0]])
        if not question_words:
            continue
        collection = [answers[pair] for pair in pairs] if collections is None else collections[pairs[0]]
        scores = _bm25(question_words, [overlap_words(c) for c in collection]) / len(question_words)
        if collections is None:
            values[pairs] = scores
            continue
        place = {id(candidate): n for n, candidate in enumerate(collection)}
        for pair in pairs:
            if id(answers[pair]) not in place:
                raise ValueError(f"pair {pair}: its answer is not among the candidates of its list")
            values[pair] = scores[place[id(answers[pair])]]
    return values


def baseline_scores(question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> dict[str, np.ndarray]:
    """Every baseline's scores; each text's words are picked out once for all of them."""
    question_words, candidate_words = overlap_words(question), [overlap_words(c) for c in candidates]
    return {"original order": original_order(candidates),
            "word overlap": _overlap(question_words, candidate_words),
            "BM25": _bm25(question_words, candidate_words)}
