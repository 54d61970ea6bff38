"""The trivial rankers rank a toy example sensibly."""

from __future__ import annotations

import numpy as np

from matching.explain.ranking import competition_ranks
from matching.text.baselines import BASELINES, baseline_scores, bm25, original_order, word_overlap
from matching.text.tokens import tokenize

QUESTION = tokenize("Who wrote the play Hamlet ?")
CANDIDATES = [tokenize(text) for text in (
    "The weather was cold in the north .",
    "Hamlet is a tragedy written by William Shakespeare .",
    "The river flows to the sea .",
    "The old king was sad .",
    "Shakespeare WROTE the play Hamlet around 1600 ?",
)]
BEST = 4


def test_original_order_keeps_the_input_order() -> None:
    scores = original_order(CANDIDATES)
    assert competition_ranks(scores).tolist() == [1, 2, 3, 4, 5]


def test_word_overlap_counts_distinct_question_words_but_not_punctuation() -> None:
    # "?" is shared by the question and the best candidate but is not a word; case does not matter.
    assert word_overlap(QUESTION, CANDIDATES).tolist() == [1.0, 1.0, 1.0, 1.0, 4.0]
    repeated = [tokenize("hamlet hamlet hamlet")]
    assert word_overlap(QUESTION, repeated).tolist() == [1.0]


def test_bm25_prefers_candidates_sharing_rare_question_words() -> None:
    scores = bm25(QUESTION, CANDIDATES)
    assert scores.shape == (5,) and np.isfinite(scores).all()
    assert competition_ranks(scores)[BEST] == 1
    assert scores[BEST] > 2 * max(np.delete(scores, BEST))


def test_bm25_survives_candidates_without_words() -> None:
    scores = bm25(QUESTION, [tokenize("?! ..."), tokenize("hamlet"), tokenize("the sky")])
    assert np.isfinite(scores).all()
    assert scores[0] == 0 and scores[1] > scores[0]


def test_bm25_ranks_no_candidate_above_copies_of_the_answer_by_a_rounding_residue() -> None:
    """Every question word in three of four candidates: rank-bm25's IDFs cancel to about 0, and a residue of
    -1.4e-17 ranked the candidate without a question word first. BM25 cannot tell them apart: a tie."""
    answer = "Mary Shelley wrote Frankenstein."
    candidates = [tokenize(text) for text in (answer, answer, answer, "Paris is in France.")]
    scores = bm25(tokenize("Who wrote Frankenstein?"), candidates)
    assert competition_ranks(scores).tolist() == [1, 1, 1, 1]
    assert not np.signbit(scores).any()  # no -0.0 either, which a table shows as "-0.000"


def test_baseline_scores_has_all_three() -> None:
    scores = baseline_scores(QUESTION, CANDIDATES)
    assert tuple(scores) == BASELINES
    assert all(values.shape == (len(CANDIDATES),) for values in scores.values())


def test_the_first_candidate_of_the_original_order_scores_zero_not_minus_zero() -> None:
    """A ranking's CSV printed "-0.0" for the first candidate's original-order score."""
    first = original_order([("a",), ("b",)])[0]
    assert first == 0.0 and str(first) == "0.0" and f"{first}" == "0.0"
