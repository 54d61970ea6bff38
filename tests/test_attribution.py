"""Integrated gradients: the word split of a score, its baseline and its completeness residual."""

from __future__ import annotations

import numpy as np
import pytest

from matching.explain.attribution import integrated_gradients
from matching.explain.matcher import Matcher
from matching.text.tokens import tokenize

QUESTION = "who wrote the novel frankenstein"
CANDIDATES = ("frankenstein was written by mary shelley", "a zzqxv play", "the novel")


def test_the_split_adds_up_and_ends_at_the_traced_score(variant_matcher: Matcher) -> None:
    question, candidates = tokenize(QUESTION), [tokenize(c) for c in CANDIDATES]
    found = integrated_gradients(variant_matcher, question, candidates, steps=16)
    traced = [e.score for e in variant_matcher.explain_tokens(question, candidates)]
    for attribution, score, candidate in zip(found, traced, candidates, strict=True):
        assert attribution.score == pytest.approx(score, abs=1e-5)  # the line ends at the pass that was explained
        assert len(attribution.question) == len(question) and len(attribution.answer) == len(candidate)
        total = attribution.baseline + attribution.total + attribution.residual
        assert total == pytest.approx(attribution.score, abs=1e-9)  # exact by construction


def test_more_steps_leave_a_smaller_residual(make_matcher) -> None:  # type: ignore[no-untyped-def]
    matcher = make_matcher(family="amvlstm", attention="question", attention_scaling="length")
    question, candidates = tokenize(QUESTION), [tokenize(CANDIDATES[0])]
    coarse = integrated_gradients(matcher, question, candidates, steps=2)[0]
    fine = integrated_gradients(matcher, question, candidates, steps=128)[0]
    assert abs(fine.residual) < abs(coarse.residual) or abs(fine.residual) < 1e-6
    assert abs(fine.residual) < 0.05 * max(abs(fine.score - fine.baseline), 1e-3)
    assert np.isfinite(fine.question).all() and np.isfinite(fine.answer).all()


def test_a_pair_is_attributed_along_its_score_among_the_whole_list(make_matcher) -> None:  # type: ignore[no-untyped-def]
    """A keyword term that reads the list (BM25 within it) scores a pair by the other candidates too. `compare` once
    integrated a pair of `mcan-kw-all` along its score as a list of two: 1.07 of a gap of 8.94 went to the residual,
    and as much again to the baseline (TrecQA dev). The pair is now picked out of the whole list (`of`)."""
    from matching.explain.contrast import contrast
    from matching.explain.ranking import rank

    matcher = make_matcher(name="listed", family="mcan", keywords=True, keyword_words=3, keyword_list_bm25=True)
    question, candidates = tokenize(QUESTION), [tokenize(c) for c in CANDIDATES]
    whole = integrated_gradients(matcher, question, candidates, steps=16)
    picked = integrated_gradients(matcher, question, candidates, steps=16, of=(2, 0))
    for got, expected in zip(picked, (whole[2], whole[0]), strict=True):
        assert got.score == pytest.approx(expected.score, abs=1e-5)
        assert got.baseline == pytest.approx(expected.baseline, abs=1e-5)
        np.testing.assert_allclose(got.answer, expected.answer, atol=1e-5)
    apart = integrated_gradients(matcher, question, [candidates[2], candidates[0]], steps=16)[0]
    assert abs(apart.score - whole[2].score) > 1e-3  # the list does move this pair's score

    ranking = rank(QUESTION, list(CANDIDATES), {"listed": matcher})
    split = contrast(ranking, "listed", 2, 0, matcher)
    assert not split.exact
    assert split.decomposed_gap == pytest.approx(split.gap, abs=1e-5)
    assert abs(split.residual_difference) < 0.05 * max(abs(split.gap), 0.1)
    at_a, at_b = integrated_gradients(matcher, question, candidates, of=(2, 0))  # compare's steps
    assert split.residual_difference == pytest.approx(at_a.residual - at_b.residual, abs=1e-6)
