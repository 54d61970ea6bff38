"""The trivial rankers every model is shown beside.

- original order: the candidates' input order (Wikipedia order on WikiQA);
- word overlap: how many distinct question words occur in the candidate;
- BM25: Okapi BM25 (rank-bm25) with the question's candidates as the collection.
All work on lookup keys (lowercased tokens), the form the models see.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from matching.text.stems import stem
from matching.text.tokens import Token

BASELINES = ("original order", "word overlap", "BM25")


@functools.lru_cache(maxsize=1 << 16)
def _is_word(key: str) -> bool:
    return any(ch.isalnum() for ch in key)


def overlap_words(tokens: Sequence[Token]) -> list[str]:
    """The keys the lexical baselines count, in order: punctuation is not a word to overlap on ("?" would match
    every question)."""
    return [t.key for t in tokens if _is_word(t.key)]


def stemmed_words(tokens: Sequence[Token]) -> list[str]:
    """`overlap_words` as their stems (`text.stems`): what a keyword term with `keyword_stems` counts."""
    return [stem(key) for key in overlap_words(tokens)]


def original_order(candidates: Sequence[Sequence[Token]]) -> np.ndarray:
    """0, -1, -2, ...: the first candidate scores highest (0.0, not -0.0, which a CSV of scores printed)."""
    return 0.0 - np.arange(len(candidates), dtype=np.float64)


def _overlap(question_words: list[str], candidate_words: Sequence[list[str]]) -> np.ndarray:
    wanted = set(question_words)
    return np.array([len(wanted & set(words)) for words in candidate_words], dtype=np.float64)


def _bm25(question_words: list[str], candidate_words: Sequence[list[str]]) -> np.ndarray:
    from rank_bm25 import BM25Okapi

    corpus = [words or ["\x00"] for words in candidate_words]  # BM25Okapi divides by document length
    scores = np.asarray(BM25Okapi(corpus).get_scores(question_words), dtype=np.float64)
    # Where every question word is in most candidates, rank-bm25's IDFs cancel out to about 0 and a rounding residue
    # (-1.4e-17 for three copies of the answer) ranked a candidate with no question word above them: a residue is
    # 0, a tie. (No list of WikiQA's or TrecQA's dev and test splits has one.)
    return np.round(scores, 9) + 0.0


def word_overlap(question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> np.ndarray:
    return _overlap(overlap_words(question), [overlap_words(c) for c in candidates])


def bm25(question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> np.ndarray:
    return _bm25(overlap_words(question), [overlap_words(c) for c in candidates])


ListGroup = tuple[list[int], Sequence[Sequence[Token]]]
"""The pairs that share one list, and that list's candidates."""


def _list_groups(questions: Sequence[Sequence[Token]], answers: Sequence[Sequence[Token]],
                 collections: Sequence[Sequence[Sequence[Token]]] | None) -> list[ListGroup]:
    """The pairs grouped by their list: the candidates of `collections[p]`, or without `collections` every answer
    given with the same question object (as `evaluation.model_scores` and `Matcher.traced` give a question's
    candidates)."""
    groups: dict[tuple[int, int], list[int]] = {}
    for pair, question in enumerate(questions):
        groups.setdefault((id(question), -1 if collections is None else id(collections[pair])), []).append(pair)
    return [(pairs, [answers[pair] for pair in pairs] if collections is None else collections[pairs[0]])
            for pairs in groups.values()]


ListBm25Cache = dict[tuple[int, bool, frozenset[int]], dict[int, float]]
"""(id(question), stems, the ids of its list's candidates) -> each candidate's BM25 within that list, by its id: kept
by a caller that scores the same lists with several models (evaluation), for as long as those text objects live."""


def bm25_within_lists(questions: Sequence[Sequence[Token]], answers: Sequence[Sequence[Token]],
                      collections: Sequence[Sequence[Sequence[Token]]] | None = None,
                      stems: bool = False, known: ListBm25Cache | None = None) -> np.ndarray:
    """(P,) each pair's BM25 baseline score per question word, with its list as the collection: the candidates of
    `collections[p]`, which hold the answer itself (an edited candidate in its own place, by the tools that delete
    words), or without `collections` every answer given with the same question object. The IDF and the mean length
    are the list's, so a word every candidate has counts for little. What the keyword feature "BM25 within the
    list" reads (`blocks.keywords`); a question without words gives 0. With `stems`, over the words' stems
    (`stemmed_words`), as a keyword term with `keyword_stems` reads it. With `known`, a list scored before (by
    another model of an evaluation) is not scored again."""
    words = stemmed_words if stems else overlap_words
    values = np.zeros(len(questions), dtype=np.float32)
    for pairs, collection in _list_groups(questions, answers, collections):
        question = questions[pairs[0]]
        # The key only where a cache is kept: scoring one model (the app, training) builds no set per list.
        key = (id(question), stems, frozenset(map(id, collection))) if known is not None else None
        by_answer = known.get(key) if known is not None and key is not None else None
        if by_answer is None:
            question_words = words(question)
            if not question_words:
                continue
            scores = _bm25(question_words, [words(c) for c in collection]) / len(question_words)
            by_answer = dict(zip(map(id, collection), scores.tolist(), strict=True))
            if known is not None and key is not None:
                known[key] = by_answer
        try:
            values[pairs] = [by_answer[id(answers[pair])] for pair in pairs]
        except KeyError:
            pair = next(pair for pair in pairs if id(answers[pair]) not in by_answer)
            raise ValueError(f"pair {pair}: its answer is not among the candidates of its list") from None
    return values


def idf_within_lists(questions: Sequence[Sequence[Token]], answers: Sequence[Sequence[Token]], max_len: int,
                     collections: Sequence[Sequence[Sequence[Token]]] | None = None) -> list[np.ndarray]:
    """Each pair's (min(words, max_len),) IDF of every question word within its list (grouped as in
    `bm25_within_lists`), in (0, 1]: log((N + 1) / (df + 1)) / log(N + 1) over the list's N candidates, df of them
    holding the word's lookup key. A word every candidate has gets 0: the subject all the sentences of a section
    name tells none of them apart. The weight of MV-LSTM's exact-match matrix over the list (`exact_match_list`).
    The same for every pair of a list: a pair's weights depend on the other candidates, not on its answer."""
    values: list[np.ndarray] = [np.zeros(0, dtype=np.float32)] * len(questions)
    for pairs, collection in _list_groups(questions, answers, collections):
        held = Counter(key for candidate in collection for key in {t.key for t in candidate})
        count = len(collection)
        keys = [t.key for t in questions[pairs[0]][:max_len]]
        weights = np.array([math.log((count + 1) / (held[key] + 1)) / math.log(count + 1) for key in keys],
                           dtype=np.float32)
        for pair in pairs:
            values[pair] = weights
    return values


def baseline_scores(question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> dict[str, np.ndarray]:
    """Every baseline's scores; each text's words are picked out once for all of them."""
    question_words, candidate_words = overlap_words(question), [overlap_words(c) for c in candidates]
    return {"original order": original_order(candidates),
            "word overlap": _overlap(question_words, candidate_words),
            "BM25": _bm25(question_words, candidate_words)}
